"""Tests of rlperf.history."""
