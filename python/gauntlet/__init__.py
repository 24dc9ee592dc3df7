"""Gauntlet: a web server benchmarking lab with a native load engine."""

__version__ = "0.1.0"
__all__ = ["__version__"]
