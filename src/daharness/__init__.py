"""daharness: run, score and compare data-analysis agents."""

__version__ = "0.1.0"
