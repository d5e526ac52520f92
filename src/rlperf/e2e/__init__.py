"""The end-to-end SAC iteration: a collector with real G1 physics beside the learner (issue 8)."""
