"""rlperf's tests, one folder per package of `src/rlperf` (project/ holds the repository-wide checks).

Every folder is a package, so same-named files (`test_cli.py` in gate/, envs/, e2e/, replay/) do not
clash under pytest's default import mode; shared helpers are imported as `tests.<module>`."""
