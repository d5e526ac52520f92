"""Tests of rlperf.asvtools."""
