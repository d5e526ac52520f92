"""The end-to-end iteration: replay adaptor, batch sources (prefetch), schedules and the run loop."""
