"""Tests of rlperf.replay."""
