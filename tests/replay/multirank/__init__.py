"""Tests of rlperf.replay.multirank."""
