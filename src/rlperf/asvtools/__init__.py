"""Thin helpers around asv: the machine file, per-commit runs in git worktrees, asv's config."""

from rlperf.asvtools.machine_file import machine_entry, write_machine_file

__all__ = ["machine_entry", "write_machine_file"]
