"""`--live`: a run watched while it goes. An in-memory state of the run (state.py), fed by the lab's
observer, served by a small HTTP server in a thread of the gauntlet process (server.py) as a page
that redraws every second (page.py) and as Prometheus metrics (metrics.py). docs/watching.md."""
