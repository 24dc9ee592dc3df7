-- The invariants a case's result broke (gauntlet.analysis.invariants): a JSON list of their names,
-- empty when every check held or none could be made. Cases stored before this have none recorded.
ALTER TABLE cases ADD COLUMN breaches_json TEXT NOT NULL DEFAULT '[]';
