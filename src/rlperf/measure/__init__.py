"""Timers, statistics, memory guards and machine identity."""
