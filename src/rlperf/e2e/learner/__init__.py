"""The SAC learner of the end-to-end iteration: config, networks (workloads.md B4) and the update."""
