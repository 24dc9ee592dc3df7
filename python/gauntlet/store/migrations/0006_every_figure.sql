-- Every stored figure gets a column (issue 18): the share of requests that failed, each error kind,
-- responses outside 2xx, the server's CPU in % of a core and the load average, and the system-wide
-- counters per request the Deathmatch charts (interrupts, context switches, pages freed, packets).
-- Cases stored before are filled in from their result JSON; a figure their result lacks stays NULL.

ALTER TABLE measurements ADD COLUMN failed_share REAL;
ALTER TABLE measurements ADD COLUMN errors_connect_refused INTEGER;
ALTER TABLE measurements ADD COLUMN errors_connect_timeout INTEGER;
ALTER TABLE measurements ADD COLUMN errors_connect_error INTEGER;
ALTER TABLE measurements ADD COLUMN errors_reset INTEGER;
ALTER TABLE measurements ADD COLUMN errors_timeout INTEGER;
ALTER TABLE measurements ADD COLUMN errors_malformed INTEGER;
ALTER TABLE measurements ADD COLUMN errors_truncated INTEGER;
ALTER TABLE measurements ADD COLUMN errors_tls INTEGER;
ALTER TABLE measurements ADD COLUMN errors_content INTEGER;
ALTER TABLE measurements ADD COLUMN errors_goaway INTEGER;
ALTER TABLE measurements ADD COLUMN errors_stream_reset INTEGER;
ALTER TABLE measurements ADD COLUMN errors_h2_protocol INTEGER;
ALTER TABLE measurements ADD COLUMN non_2xx_responses INTEGER;
ALTER TABLE measurements ADD COLUMN non_2xx_share REAL;
ALTER TABLE measurements ADD COLUMN server_cpu_percent REAL;
ALTER TABLE measurements ADD COLUMN server_load_1m REAL;
ALTER TABLE measurements ADD COLUMN server_interrupts_per_request REAL;
ALTER TABLE measurements ADD COLUMN server_system_context_switches_per_request REAL;
ALTER TABLE measurements ADD COLUMN server_pages_freed_per_request REAL;
ALTER TABLE measurements ADD COLUMN server_loopback_packets_per_request REAL;

UPDATE measurements SET
    failed_share = CASE WHEN responses + errors_total > 0 THEN CAST(errors_total AS REAL) / (responses + errors_total) END,
    errors_connect_refused = json_extract(result_json, '$.errors.connect_refused'),
    errors_connect_timeout = json_extract(result_json, '$.errors.connect_timeout'),
    errors_connect_error = json_extract(result_json, '$.errors.connect_error'),
    errors_reset = json_extract(result_json, '$.errors.reset'),
    errors_timeout = json_extract(result_json, '$.errors.timeout'),
    errors_malformed = json_extract(result_json, '$.errors.malformed'),
    errors_truncated = json_extract(result_json, '$.errors.truncated'),
    errors_tls = json_extract(result_json, '$.errors.tls'),
    errors_content = json_extract(result_json, '$.errors.content'),
    errors_goaway = json_extract(result_json, '$.errors.goaway'),
    errors_stream_reset = json_extract(result_json, '$.errors.stream_reset'),
    errors_h2_protocol = json_extract(result_json, '$.errors.h2_protocol'),
    non_2xx_responses = (
        SELECT coalesce(sum(value), 0) FROM json_each(result_json, '$.status_codes') WHERE key NOT LIKE '2%'
    ),
    server_load_1m = json_extract(result_json, '$.server.load_1m'),
    server_interrupts_per_request = json_extract(result_json, '$.server.interrupts_per_request'),
    server_system_context_switches_per_request = json_extract(result_json, '$.server.system_context_switches_per_request'),
    server_pages_freed_per_request = json_extract(result_json, '$.server.pages_freed_per_request'),
    server_loopback_packets_per_request = json_extract(result_json, '$.server.loopback_packets_per_request'),
    server_cpu_percent = CASE WHEN json_extract(result_json, '$.server.elapsed_s') > 0 THEN
        100.0 * (json_extract(result_json, '$.server.cpu_user_s') + json_extract(result_json, '$.server.cpu_system_s'))
        / json_extract(result_json, '$.server.elapsed_s') END;

UPDATE measurements SET non_2xx_share = CASE WHEN responses > 0 THEN CAST(non_2xx_responses AS REAL) / responses END;
