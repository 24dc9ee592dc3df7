-- Bytes no request asked for (issue 28): how often they arrived (each closing its connection) and
-- how many were read. Cases stored before are filled in from their result JSON; a result from
-- before the engine counted them lacks the fields and stays NULL.

ALTER TABLE measurements ADD COLUMN unsolicited INTEGER;
ALTER TABLE measurements ADD COLUMN unsolicited_bytes INTEGER;

UPDATE measurements SET
    unsolicited = json_extract(result_json, '$.unsolicited'),
    unsolicited_bytes = json_extract(result_json, '$.unsolicited_bytes');
