-- Every measuring command stores its runs, not only suites: which command made the run.
-- `suite` keeps the suite's name for a suite and the command's name for the others.
-- Runs stored before are suites, except those `gauntlet calibrate --db` kept.

ALTER TABLE runs ADD COLUMN command TEXT NOT NULL DEFAULT 'suite'
    CHECK (command IN ('suite', 'run', 'sweep', 'capacity', 'calibrate'));

UPDATE runs SET command = 'calibrate' WHERE suite = 'calibrate' AND suite_text IS NULL;
