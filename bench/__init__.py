"""Benchmarks: runnable modules that print tables (`python -m bench.<name>`)."""
