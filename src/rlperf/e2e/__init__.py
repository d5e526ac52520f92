"""End-to-end single-GPU SAC iteration: collector, learner, the loop between them, and its report."""
