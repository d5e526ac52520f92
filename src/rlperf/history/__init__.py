"""Steps in the committed asv history: which commit ranges moved which benchmark, by how much.

series (raw result JSON -> one series per point, machine and host) -> asv_steps / edivisive (two
change-point methods) -> detect (direction-aware steps) -> scan (a results folder) -> report (text).
"""
