"""Gauntlet: a web server benchmarking lab."""
