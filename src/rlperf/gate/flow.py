"""The gate end to end: resolve refs, benchmark what is missing (or asked for), load, judge.

Kept apart from the CLI so tests and other tools can drive it with plain arguments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rlperf.gate.config import GateConfig
from rlperf.gate.exitcodes import GateExit, InfrastructureError, worst
from rlperf.gate.judge import judge
from rlperf.gate.report import Verdict
from rlperf.gate.results import has_results, load_benchmark_meta, load_points


@dataclass(frozen=True)
class Where:
    """Where results live and how to produce them: the repository, its results folder, the machine."""

    repo: str
    results_dir: str
    machine: str
    conf: str  # asv.conf.json used for commits that have none of their own
    bench: str | None = None  # asv --bench regex, to gate a subset


def _run(where: Where, sha: str, echo) -> int:
    from rlperf.asvtools.run_commit import run_commit  # imported late: pure comparisons need no git/pip

    return run_commit(where.repo, sha, machine=where.machine, results_dir=where.results_dir,
                      fallback_conf=where.conf, bench=where.bench, echo=echo)


def _notes(base: dict, head: dict, findings) -> list[str]:
    notes = []
    base_envs, head_envs = sorted({e for e, _ in base}), sorted({e for e, _ in head})
    if base_envs != head_envs:
        notes.append(f"environments differ (base {base_envs}, head {head_envs}); paired as documented")
    factor_only = sum(1 for f in findings if f.method == "factor-only")
    if factor_only:
        notes.append(f"{factor_only} point(s) had no significance test (plain `track_` values, or fewer "
                     "stored samples than Mann–Whitney needs): the factor alone decided them")
    return notes


def gate(where: Where, base_ref: str, head_ref: str, config: GateConfig, *, run: bool | None = None,
         echo=print) -> Verdict:
    """Compare head against base on one machine. run: True always benchmarks both commits, False never,
    None only those without stored results."""
    from rlperf.asvtools.git import resolve

    verdict = Verdict(base=base_ref, head=head_ref, machine=where.machine, factor=config.factor,
                      config=config.source)
    try:
        verdict.base, verdict.head = resolve(where.repo, base_ref), resolve(where.repo, head_ref)
        for sha in dict.fromkeys((verdict.base, verdict.head)):  # base first, so benchmarks.json ends as head's
            stored = has_results(where.results_dir, where.machine, sha)
            if run or (run is None and not stored):
                _run(where, sha, echo)
            elif not stored:
                raise InfrastructureError(f"no results for {sha[:12]} on machine {where.machine!r} in "
                                          f"{where.results_dir}; drop --no-run to benchmark it")
        base = load_points(where.results_dir, where.machine, verdict.base)
        head = load_points(where.results_dir, where.machine, verdict.head)
        for sha, pts in ((verdict.base, base), (verdict.head, head)):
            if not pts:
                raise InfrastructureError(f"result files for {sha[:12]} hold no benchmarks")
        verdict.findings = judge(base, head, config, load_benchmark_meta(where.results_dir))
        verdict.notes = _notes(base, head, verdict.findings)
    except InfrastructureError as exc:
        verdict.errors.append(str(exc))
    return verdict


def stored_commits(results_dir: str, machine: str) -> set[str]:
    """8-character prefixes of the commits with results for `machine`."""
    folder = os.path.join(results_dir, machine)
    if not os.path.isdir(folder):
        return set()
    return {f.split("-", 1)[0] for f in os.listdir(folder) if f.endswith(".json") and f != "machine.json"}


def backfill_commits(where: Where, spec: str) -> list[str]:
    """`A..B`, or `NEW[:branch]` = the branch's first-parent commits after the newest stored one."""
    from rlperf.asvtools.git import commits_in_range, first_parent_history

    if not spec.startswith("NEW"):
        return commits_in_range(where.repo, spec)
    branch = spec.partition(":")[2] or "main"
    stored = stored_commits(where.results_dir, where.machine)
    new = []
    for sha in first_parent_history(where.repo, branch):
        if sha[:8] in stored:
            break
        new.append(sha)
    else:  # nothing stored yet: start the history at the tip instead of benchmarking all of it
        new = new[:1]
    return new[::-1]


def backfill(where: Where, spec: str, echo=print) -> tuple[GateExit, list[str]]:
    """Benchmark every commit of `spec` that has no results yet; returns (exit code, messages)."""
    messages, codes = [], []
    try:
        commits = backfill_commits(where, spec)
    except InfrastructureError as exc:
        return GateExit.INFRASTRUCTURE, [str(exc)]
    for sha in commits:
        if has_results(where.results_dir, where.machine, sha):
            messages.append(f"{sha[:12]}: already stored")
            continue
        try:
            status = _run(where, sha, echo)
            codes.append(GateExit.BENCHMARK_FAILURE if status == 2 else GateExit.OK)
            messages.append(f"{sha[:12]}: stored" + (" (some benchmarks failed)" if status == 2 else ""))
        except InfrastructureError as exc:
            codes.append(GateExit.INFRASTRUCTURE)
            messages.append(f"{sha[:12]}: {exc}")
    if not commits:
        messages.append(f"nothing to benchmark for {spec}")
    return worst(codes), messages


__all__ = ["Where", "backfill", "backfill_commits", "gate", "stored_commits"]
