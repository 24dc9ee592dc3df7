"""Analysis: pure functions of run results (bottleneck labels, QoS verdicts, spread of repeats, capacity search)."""
