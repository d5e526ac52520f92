"""What `rlperf gate-power nulls plan` prints: the null-run sample's size per core count and one run's
expected wall time on the host of a committed history (null_cost), under a profile of the repository's
gate.toml. `nulls run` prints the same before it starts, so every night's log says what it expected."""

from __future__ import annotations

import json
import os
import re

from rlperf.asvtools.git import toplevel
from rlperf.errors import InfrastructureError, UsageError
from rlperf.gate.config import load_config
from rlperf.gate.power import null_cost, null_sample

HISTORY_MACHINE = "cpu-2vcpu-amd-epyc-2380ab50"  # the committed suite-wide history of one 2-vCPU host
PAIRED_FROM = "results/reports/gate/cpu-2vcpu-amd-epyc"  # committed paired.json files of that box type


def plan_lines(repo: str, profile: str, benchmarks_json: str | None, cores: list[int], *, history_machine: str,
               paired_from: str, listing: bool = False) -> list[str]:
    """The sample's size per core count and one null run's expected wall time on the history's host."""
    try:
        top = toplevel(repo)
    except InfrastructureError as exc:
        raise UsageError(f"--repo {repo!r}: {exc}") from None
    config_path = os.path.join(top, "gate.toml")
    config = load_config(config_path if os.path.isfile(config_path) else None, profile=profile)
    benchmarks = null_sample.load_benchmarks(benchmarks_json or os.path.join(top, "results", "asv", "benchmarks.json"))
    plan = null_sample.sample_plan(benchmarks)
    lines = [f"null-run sample `{null_sample.SAMPLE}` (rlperf.asvtools.bench_plan.NULL_RUN_POINTS): "
             f"{len(plan.run)} points; a point above the box's cores skips itself"]
    for n in cores:
        per = null_sample.counts(plan, benchmarks, n)
        lines.append(f"  {n} cores: {sum(per.values())} points ("
                     + ", ".join(f"{k} {v}" for k, v in per.items()) + ")")
    skipping = null_sample.body_skipping(plan, benchmarks)
    lines.append("  benchmarks that skip on their measured value (head n/a where base measured: exit 4): "
                 + (", ".join(skipping) if skipping else "none"))
    if listing:
        lines += [f"    {p.name}" for p in plan.run]
    machine_json = os.path.join(top, "results", "asv", history_machine, "machine.json")
    if not os.path.isfile(machine_json):
        raise UsageError(f"--history-machine {history_machine!r}: no {machine_json}; give a machine folder of "
                         "results/asv")
    with open(machine_json) as fh:
        box = int(json.load(fh).get("num_cpu", 1))
    history = null_cost.history_costs(os.path.join(top, "results", "asv"), history_machine,
                                      os.path.join(top, "results", "reports", "history", history_machine, "backfill.jsonl"))
    startup, pairs = null_cost.pair_startup(os.path.join(top, paired_from))
    runnable = [p for p in plan.run if null_sample.runs_on(p, benchmarks, box)]
    pattern = re.compile(config.paired_bench) if config.paired_seconds and config.paired_bench else None
    paired = {p.name for p in runnable if config.paired_seconds and (pattern is None or pattern.search(p.name))}
    est = null_cost.estimate(runnable, history, passes=config.passes, paired_names=paired,
                             paired_seconds=config.paired_seconds, restarts=config.paired_restarts, startup_s=startup,
                             setup_cache_keys={k: b.get("setup_cache_key") for k, b in benchmarks.items()})
    lines.append(f"profile {profile}: {config.passes} passes, paired `{config.paired_bench}` "
                 f"{config.paired_seconds:g} s from {config.paired_restarts} worker pairs, confirming rounds "
                 f"{config.paired_confirm} (gate.toml)")
    lines += est.lines(history, pairs, config.paired_seconds, config.paired_restarts)
    others = [n for n in cores if n != box]
    if others:
        lines.append(f"  on {', '.join(map(str, others))} cores: not computed (no history measured on such a host); "
                     "every `nulls run` record carries its measured seconds")
    return lines


__all__ = ["HISTORY_MACHINE", "PAIRED_FROM", "plan_lines"]
