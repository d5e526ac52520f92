"""The SAC learner of the end-to-end iteration: config, networks (docs/workloads.md B4) and the update."""
