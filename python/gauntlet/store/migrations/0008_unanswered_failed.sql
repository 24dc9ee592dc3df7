-- Requests stuck unanswered at the end count as failed (issue 28): a column for how many did, and
-- the failed share recomputed with them. Stuck: every unanswered request when no response came,
-- else those of each stage (connecting, TLS handshake, awaiting the response) whose mean age is
-- above the slowest response's service time (analysis.bottleneck.stuck_unanswered). Cases stored
-- before are filled in from their result JSON; a result without `unanswered` stays NULL.

ALTER TABLE measurements ADD COLUMN unanswered_failed INTEGER;

UPDATE measurements SET unanswered_failed = CASE
    WHEN COALESCE(json_extract(result_json, '$.service_time_us.count'), 0) = 0
        THEN json_extract(result_json, '$.unanswered.count')
    ELSE
        (CASE WHEN json_extract(result_json, '$.unanswered.connecting.mean_age_us') > json_extract(result_json, '$.service_time_us.max')
            THEN json_extract(result_json, '$.unanswered.connecting.count') ELSE 0 END)
        + (CASE WHEN json_extract(result_json, '$.unanswered.tls_handshake.mean_age_us') > json_extract(result_json, '$.service_time_us.max')
            THEN json_extract(result_json, '$.unanswered.tls_handshake.count') ELSE 0 END)
        + (CASE WHEN json_extract(result_json, '$.unanswered.awaiting_response.mean_age_us') > json_extract(result_json, '$.service_time_us.max')
            THEN json_extract(result_json, '$.unanswered.awaiting_response.count') ELSE 0 END)
    END
WHERE json_extract(result_json, '$.unanswered') IS NOT NULL AND json_extract(result_json, '$.service_time_us') IS NOT NULL;

UPDATE measurements SET failed_share =
    CASE WHEN responses + errors_total + unanswered_failed > 0
        THEN CAST(errors_total + unanswered_failed AS REAL) / (responses + errors_total + unanswered_failed) END
WHERE unanswered_failed IS NOT NULL;
