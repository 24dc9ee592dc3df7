-- The first schema: runs, their cases, each case's flat figures, timeline and encoded histograms.
-- A case's full result is `measurements.result_json` without the parts that have their own table
-- (timeline, histograms); gauntlet.store.read puts them back.

CREATE TABLE runs (
    run_id INTEGER PRIMARY KEY,
    suite TEXT NOT NULL,
    suite_text TEXT,
    options_json TEXT NOT NULL,
    environment_json TEXT NOT NULL,
    planned_cases INTEGER NOT NULL,
    gauntlet_version TEXT NOT NULL,
    started_unix_ms INTEGER NOT NULL,
    ended_unix_ms INTEGER,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed'))
);

CREATE TABLE cases (
    case_id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    params_json TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'partial', 'error')),
    server_version TEXT,
    config_text TEXT,
    labels_json TEXT NOT NULL,
    error TEXT,
    started_unix_ms INTEGER NOT NULL,
    ended_unix_ms INTEGER NOT NULL,
    UNIQUE (run_id, key, repeat)
);

-- One row per case that has a result. The columns are gauntlet.store.figures.FIGURES, in order.
CREATE TABLE measurements (
    case_id INTEGER PRIMARY KEY REFERENCES cases (case_id) ON DELETE CASCADE,
    responses INTEGER,
    errors_total INTEGER,
    bytes_in INTEGER,
    bytes_out INTEGER,
    connections_opened INTEGER,
    elapsed_us INTEGER,
    requests_per_s REAL,
    bytes_in_per_s REAL,
    latency_mean_us REAL,
    latency_p50_us INTEGER,
    latency_p90_us INTEGER,
    latency_p99_us INTEGER,
    latency_p99_9_us INTEGER,
    latency_max_us INTEGER,
    service_time_p50_us INTEGER,
    service_time_p99_us INTEGER,
    offered_rate_per_s REAL,
    achieved_rate_per_s REAL,
    tls_handshakes INTEGER,
    tls_resumed INTEGER,
    client_cpu_us_per_request REAL,
    client_busiest_thread_share REAL,
    server_cpu_us_per_request REAL,
    server_context_switches_per_request REAL,
    server_page_faults_per_request REAL,
    server_rss_bytes INTEGER,
    server_vm_size_bytes INTEGER,
    server_max_processes INTEGER,
    sessions_users_completed INTEGER,
    sessions_users_dropped INTEGER,
    -- The suite's QoS verdict on a sessions case (result["qos"]["valid"]): 1 valid, 0 not.
    qos_valid INTEGER,
    result_json TEXT NOT NULL
);

CREATE TABLE timelines (
    case_id INTEGER NOT NULL REFERENCES cases (case_id) ON DELETE CASCADE,
    second INTEGER NOT NULL,
    span_us INTEGER NOT NULL,
    requests INTEGER NOT NULL,
    responses INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    bytes_in INTEGER NOT NULL,
    p50_us INTEGER NOT NULL,
    p90_us INTEGER NOT NULL,
    p99_us INTEGER NOT NULL,
    max_us INTEGER NOT NULL,
    -- The second's encoded histogram when the plan asked for them (timeline_histograms), else NULL.
    histogram TEXT,
    PRIMARY KEY (case_id, second)
) WITHOUT ROWID;

-- name: `latency` (the result's histogram), `service_time` (service_histogram).
CREATE TABLE histograms (
    case_id INTEGER NOT NULL REFERENCES cases (case_id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    encoded TEXT NOT NULL,
    PRIMARY KEY (case_id, name)
) WITHOUT ROWID;

CREATE INDEX cases_by_run ON cases (run_id, case_id);
