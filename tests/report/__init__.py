"""Tests of rlperf.report."""
