"""The workload's dynamic pages (DT-1, DT-2) as files; the static files come from the engine."""
