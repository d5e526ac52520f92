"""Tests of rlperf.plan."""
