"""End-to-end single-GPU SAC iteration: a collector with real G1 physics, the learner, the loop between them, and its report."""
