-- Sessions second by second (users arrived, active at the second's end, finished, dropped; pages
-- that ended and those that failed) and each second's errors by kind; the PHP workers' memory per
-- process (the thesis's Table A.12). Rows stored before this migration read 0 and '{}'.

ALTER TABLE timelines ADD COLUMN users_arrived INTEGER NOT NULL DEFAULT 0;
ALTER TABLE timelines ADD COLUMN users_active INTEGER NOT NULL DEFAULT 0;
ALTER TABLE timelines ADD COLUMN users_finished INTEGER NOT NULL DEFAULT 0;
ALTER TABLE timelines ADD COLUMN users_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE timelines ADD COLUMN pages INTEGER NOT NULL DEFAULT 0;
ALTER TABLE timelines ADD COLUMN page_errors INTEGER NOT NULL DEFAULT 0;
-- {"timeout": 3, ...}: only the kinds that occurred in that second.
ALTER TABLE timelines ADD COLUMN errors_by_kind_json TEXT NOT NULL DEFAULT '{}';

ALTER TABLE measurements ADD COLUMN php_worker_rss_bytes INTEGER;
ALTER TABLE measurements ADD COLUMN php_worker_vm_size_bytes INTEGER;
