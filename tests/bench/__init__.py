"""pytest-benchmark timings of the asv suite's hot paths (run with --benchmark-only)."""
