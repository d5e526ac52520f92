"""Tests of rlperf.e2e."""
