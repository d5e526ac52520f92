"""Tests of rlperf.measure."""
