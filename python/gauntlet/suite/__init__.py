"""Suites: files naming servers, workloads, load models and parameter grids, expanded into cases."""
