"""Tests of rlperf.gate."""
