-- The noise floor of a machine, per figure (issue 27): how much identical runs differ here, measured
-- by `gauntlet calibrate noise` from A/A pairs. `relative` is the change 95 % of identical pairs
-- stay within (0.06: +-6 %). compare uses the latest row per figure (docs/metrics.md).
-- run_id: the calibration's own runs (command 'calibrate'), NULL when they were not kept.

CREATE TABLE noise_floors (
    floor_id INTEGER PRIMARY KEY,
    figure TEXT NOT NULL,
    relative REAL NOT NULL CHECK (relative >= 0),
    pairs INTEGER NOT NULL CHECK (pairs >= 1),
    -- What ran: the server kind and the load ('builtin, -c 10 -d 2s').
    server TEXT NOT NULL,
    load TEXT NOT NULL,
    -- Where and when: the host name and the machine's summary from its environment snapshot.
    host TEXT NOT NULL,
    measured_unix_ms INTEGER NOT NULL,
    run_id INTEGER REFERENCES runs (run_id) ON DELETE SET NULL
);

CREATE INDEX noise_floors_by_figure ON noise_floors (figure, measured_unix_ms);
