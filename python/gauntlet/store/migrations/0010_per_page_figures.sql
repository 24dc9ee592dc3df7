-- The SPECweb2005 white paper's per-page rows of a sessions run (result.server.per_page): server CPU
-- ms, context switches and page faults per page measured. Null for other runs and for cases stored
-- before this.
ALTER TABLE measurements ADD COLUMN server_cpu_ms_per_page REAL;
ALTER TABLE measurements ADD COLUMN server_context_switches_per_page REAL;
ALTER TABLE measurements ADD COLUMN server_page_faults_per_page REAL;
