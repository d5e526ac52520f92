"""Run a block of iterations under one schedule with one batch source."""

from __future__ import annotations

from rlperf.e2e.loop.iteration import AsyncCollector, IterationSample, async_iteration, sync_iteration

SCHEDULES = ("synchronous", "async")


def run_block(schedule: str, collector, learner, source, *, iterations: int, device, env_steps_per_sync: int,
              on_iteration=None) -> list[IterationSample]:
    """`iterations` iterations; `source` is started before (a one-tick prefetch is primed) and stopped after."""
    if schedule not in SCHEDULES:
        from rlperf.errors import choice_error

        raise choice_error("schedule", schedule, SCHEDULES)
    samples: list[IterationSample] = []
    source.start()
    try:
        if schedule == "synchronous":
            for _ in range(iterations):
                samples.append(sync_iteration(collector, learner, source, device=device,
                                              env_steps_per_sync=env_steps_per_sync))
                if on_iteration:
                    on_iteration()
        else:
            runner = AsyncCollector(collector, device=device, env_steps_per_sync=env_steps_per_sync).start()
            try:
                for _ in range(iterations):
                    samples.append(async_iteration(runner, learner, source, device=device))
                    if on_iteration:
                        on_iteration()
            finally:
                runner.stop()
    finally:
        source.stop()
    return samples
