"""Helpers for tests and benchmarks: nodes as processes, DDS probes, pytest fixtures."""
