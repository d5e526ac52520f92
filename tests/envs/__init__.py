"""Tests of rlperf.envs."""
