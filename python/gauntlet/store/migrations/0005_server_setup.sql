-- What ran, per case (issue 18): the server kind, the workers it ran, its backend, the SHA-256 of
-- its rendered config (the text is config_text), and the TLS version and cipher the engine
-- negotiated. Filled from the result's `server_setup` and `negotiated`; NULL for an external URL
-- (and the TLS pair for plain HTTP). Cases stored before keep NULL, except the kind and the
-- backend, which their params name.

ALTER TABLE cases ADD COLUMN server_kind TEXT;
ALTER TABLE cases ADD COLUMN server_workers INTEGER;
ALTER TABLE cases ADD COLUMN backend TEXT;
ALTER TABLE cases ADD COLUMN config_sha256 TEXT;
ALTER TABLE cases ADD COLUMN tls_version TEXT;
ALTER TABLE cases ADD COLUMN tls_cipher TEXT;

UPDATE cases SET server_kind = json_extract(params_json, '$.server'), backend = json_extract(params_json, '$.backend')
WHERE config_text IS NOT NULL;
