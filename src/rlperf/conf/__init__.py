"""Hydra configs shipped inside the package (composed with rlperf.workload.compose)."""
