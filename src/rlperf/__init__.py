"""rlperf: performance-regression suite for the SAC replay path and G1 env kernels."""

__version__ = "0.1.0"
