"""The gate end to end: resolve refs, benchmark what is missing (or asked for), load, judge.

Kept apart from the CLI so tests and other tools can drive it with plain arguments.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace

from rlperf.asvtools.store import DEFAULT_WAIT_S
from rlperf.gate import passdir
from rlperf.gate.config import GateConfig
from rlperf.gate.exitcodes import GateExit, InfrastructureError, SuiteImportError, worst
from rlperf.gate.host import compare_hosts
from rlperf.gate.host import history_host_change as host_history_change
from rlperf.gate.interleave import measure_interleaved, paired_values, pass_values, representative
from rlperf.gate.results import (CommitResults, compile_bench, describe_identity_mismatch, has_results,
                                 load_benchmark_meta, load_commit, pair_envs, read_benchmark_meta, select)
from rlperf.gate.verdict import Verdict, judge, nothing_compared, worth_confirming


@dataclass(frozen=True)
class Where:
    """Where results live and how to produce them: the repository, its results folder, the machine."""

    repo: str
    results_dir: str
    machine: str
    conf: str  # asv.conf.json used for commits that have none of their own
    bench: str | None = None  # asv --bench regex, to gate a subset (compared points and coverage alike)
    store_wait_s: float = DEFAULT_WAIT_S  # seconds a run waits for another writer's lock on results_dir
    head_working_tree: bool = False  # --allow-dirty: head prepared from the working tree (gate_working_tree)


# Where `--run` writes its measurements unless --store (or --results-dir) names a results history:
# git-ignored (`.asv/` in .gitignore), so a local gate run never dirties the committed results.
LOCAL_RESULTS = os.path.join(".asv", "gate-results")


def local_results_dir(repo: str) -> str:
    return os.path.join(os.path.abspath(repo), LOCAL_RESULTS)


def _run(where: Where, sha: str, echo) -> int:
    from rlperf.asvtools.run_commit import run_commit  # imported late: pure comparisons need no git/pip

    return run_commit(where.repo, sha, machine=where.machine, results_dir=where.results_dir,
                      fallback_conf=where.conf, bench=where.bench, echo=echo, wait_s=where.store_wait_s)


def _notes(base: CommitResults, head: CommitResults, env_map: dict, findings, not_measured: int) -> list[str]:
    notes = []
    renamed = {b: h for b, h in env_map.items() if b != h}
    if renamed:
        notes.append(f"environments paired by Python identity across names: {renamed}")
    unpaired = sorted(set(base.envs) - set(env_map))
    if unpaired:
        notes.append(f"base environment(s) {unpaired} have no head environment with the same Python identity")
    factor_only = sum(1 for f in findings if f.method == "factor-only")
    if factor_only:
        notes.append(f"{factor_only} point(s) had no significance test (plain `track_` values, or fewer "
                     "stored samples than Mann–Whitney needs): the factor alone decided them")
    if not_measured:
        notes.append(f"{not_measured} point(s) measured on neither commit (skipped on this machine): not listed")
    return notes


_ACROSS_RUNS = ("base and head", "Their numbers are not comparable: re-measure both in one session with --run")
_RECORD_VS_PASSES = ("the base record and the kept passes",
                     "The record cannot vouch for the passes' host: measure the base and the passes on one host")


def _check_host(where: Where, base_envs: dict, head_envs: dict, fingerprints, allow: bool,
                what=_ACROSS_RUNS) -> str:
    """Refuse a comparison across hosts (InfrastructureError) unless allowed; returns the report line."""
    check = compare_hosts(base_envs, head_envs, *fingerprints)
    warn = f"; WARNING, measured parts differ beyond their band: {'; '.join(check.warnings)}" if check.warnings else ""
    if check.same:
        return f"same host ({check.compared} agree on the static facts){warn}"
    listed = "; ".join(check.differences)
    if allow:
        return f"HOST CHANGED, compared anyway (--allow-host-change): {listed}"
    raise InfrastructureError(
        f"{what[0]} were measured on different hosts under machine name {where.machine!r} "
        f"({check.compared}): {listed}. {what[1]}, or pass --allow-host-change to compare anyway")


def _stored_fingerprint(where: Where, sha: str) -> dict | None:
    from rlperf.asvtools.fingerprint import load

    return load(where.results_dir, where.machine, sha)


def _measured(where: Where, verdict: Verdict, config: GateConfig, keep: str | None, echo):
    """--run: k interleaved passes now -> (base, head, passes, notes)."""
    verdict.mode = f"interleaved: {config.passes} pass(es) base/head alternating, median of per-pass ratios"
    if config.paired_seconds > 0:
        verdict.mode += (f"; then {config.paired_seconds:g} s of paired sampling per time_ or sampled track_ point (base and head "
                         "live in two processes, sampled in turn), median of per-block ratios")
        if config.paired_confirm:
            screen = ("" if config.paired_screen >= 1 else
                      f" (or above {config.paired_screen:g} of its factor's margin)")
            verdict.mode += (f"; a point flagged on its pairs{screen} is sampled again, up to {config.paired_confirm} "
                             "round(s) of fresh worker pairs, and judged on all its pairs")
    spec = None
    if config.paired_seconds > 0:
        from rlperf.gate.paired import PairedSpec

        spec = PairedSpec(seconds=config.paired_seconds, restarts=config.paired_restarts)
    passes = measure_interleaved(where, verdict.base, verdict.head, config.passes, echo, keep=keep,
                                 paired=spec, paired_bench=config.paired_bench,
                                 confirm=_flagged_paired(config, compile_bench(where.bench)),
                                 confirm_rounds=config.paired_confirm)
    verdict.host = "one session, both commits interleaved (host shared by construction)"
    notes = [f"results folder: {note}" for note in passes.store_notes]  # asvtools.store: what it did not store
    if not where.head_working_tree:  # gate_working_tree says where its results went (nowhere)
        local = os.path.abspath(where.results_dir) == local_results_dir(where.repo)
        notes.append(f"the last pass of both commits was merged into {where.results_dir}"
                     + (" (a git-ignored local folder; --store writes into the results history)" if local else ""))
    return representative([b for b, _ in passes.runs]), representative([h for _, h in passes.runs]), passes, notes


def _flagged_paired(config: GateConfig, bench):
    """The callback --run's confirming rounds ask (gate.interleave._confirm): which paired points the
    judge, exactly as the verdict will run it, flags on the pairs gathered so far: a regression, or
    (paired_screen < 1) a ratio above 1 + paired_screen x (the point's factor - 1). A screen below 1
    buys detection: a true step whose first round fell just under the factor gets a second round."""
    def flagged(runs, pairs, block, head_meta: str) -> list[str]:
        base, head = representative([b for b, _ in runs]), representative([h for _, h in runs])
        env_map = pair_envs(base.envs, head.envs)
        values, keys = paired_values(pass_values(runs, env_map), pairs, block)
        findings = judge(select(base.points, bench), select(head.points, bench), config,
                         read_benchmark_meta(head_meta), env_map=env_map, pass_values=values, paired_keys=keys)
        bad = {f.name for f in findings if worth_confirming(f.status, f.ratio, f.factor, config.paired_screen)}
        return sorted({name for env, name in keys if name in bad or f"{env}: {name}" in bad})

    return flagged


def _confirmed_notes(passes, findings) -> list[str]:
    """One line per paired point that confirming rounds re-sampled, with what its pairs now say."""
    if passes is None or not passes.paired:
        return []
    status = {}
    for f in findings:
        status[f.name.rsplit(": ", 1)[-1]] = f.status
    return [f"paired: {p.name} was flagged by its first round (or passed the screen) and sampled again ({p.confirm_rounds} round(s), "
            f"{len(p.segments)} worker pairs in all): {status.get(p.name, 'not judged')} on all its pairs"
            for p in passes.paired.values() if p.confirm_rounds]


def _kept(where: Where, verdict: Verdict, folder: str, allow_host_change: bool):
    """--passes-from: passes kept by another run, judged under the trusted base record of --results-dir."""
    verdict.mode = f"stored interleaved passes ({folder}): median of per-pass ratios"
    passes = passdir.load(folder, verdict.base, verdict.head, where.machine)
    if passes.import_failure:
        sha, message = passes.import_failure
        raise SuiteImportError(message, sha)
    verdict.mode = (f"stored interleaved passes: {len(passes.runs)} pass(es) base/head alternating in one session "
                    "(kept by --run --keep-passes), median of per-pass ratios")
    if passes.paired:
        verdict.mode += f"; paired samples of {len(passes.paired)} point(s), median of per-block ratios"
    record = load_commit(where.results_dir, where.machine, verdict.base)
    if not record.points:
        raise InfrastructureError(f"no base record: no results for {verdict.base[:12]} on machine {where.machine!r} "
                                  f"in {where.results_dir} (it supplies the base's versions and host)")
    base = representative([b for b, _ in passes.runs])
    head = representative([h for _, h in passes.runs])
    host = _check_host(where, record.envs, base.envs, (_stored_fingerprint(where, verdict.base), passes.fingerprint),
                       allow_host_change, _RECORD_VS_PASSES)
    verdict.host = f"passes measured in one session (host shared by construction); base record vs passes: {host}"
    base, notes = passdir.under_record(base, head, record)
    return base, head, passes, notes


def _stored(where: Where, verdict: Verdict, run: bool | None, echo) -> tuple[CommitResults, CommitResults]:
    for sha in dict.fromkeys((verdict.base, verdict.head)):  # base first, so benchmarks.json ends as head's
        stored = has_results(where.results_dir, where.machine, sha)
        if run is None and not stored:
            _run(where, sha, echo)
        elif not stored:
            raise InfrastructureError(f"no results for {sha[:12]} on machine {where.machine!r} in "
                                      f"{where.results_dir}; drop --no-run to benchmark it")
    return (load_commit(where.results_dir, where.machine, verdict.base),
            load_commit(where.results_dir, where.machine, verdict.head))


def gate(where: Where, base_ref: str, head_ref: str, config: GateConfig, *, run: bool | None = None,
         accept_changed=(), allow_host_change: bool = False, keep_passes: str | None = None,
         passes_from: str | None = None, echo=print) -> Verdict:
    """Compare head against base on one machine.

    run: True measures both commits now, interleaved (config.passes passes, median of per-pass
    ratios; keep_passes: a folder that receives every pass, see gate.passdir); False compares stored
    results only; None benchmarks only commits without results, then compares stored results.
    passes_from (with run not True): judge passes kept by `--run --keep-passes` like --run does, with
    the base's versions, coverage and host taken from the results folder (the trusted base record).
    Stored comparisons are refused across hosts (see gate.host)."""
    from rlperf.asvtools.git import resolve

    bench = compile_bench(where.bench)
    verdict = Verdict(base=base_ref, head=head_ref, machine=where.machine, factor=config.factor,
                      config=config.source, accepted=tuple(accept_changed))
    try:
        verdict.base, verdict.head = resolve(where.repo, base_ref), resolve(where.repo, head_ref)
        values, paired_keys, passes, notes = None, frozenset(), None, []
        if run or passes_from:
            try:
                base, head, passes, notes = (_kept(where, verdict, passes_from, allow_host_change) if passes_from
                                             else _measured(where, verdict, config, keep_passes, echo))
            except SuiteImportError as exc:
                _import_failure(verdict, exc)
                return verdict
        else:
            verdict.mode = f"stored results: factor and asv's significance rule (p < {config.p_threshold:g})"
            try:
                base, head = _stored(where, verdict, run, echo)
            except SuiteImportError as exc:
                _import_failure(verdict, exc)
                return verdict
            verdict.host = _check_host(where, base.envs, head.envs,
                                       [_stored_fingerprint(where, s) for s in (verdict.base, verdict.head)],
                                       allow_host_change)
        for sha, res in ((verdict.base, base), (verdict.head, head)):
            if not res.points:
                raise InfrastructureError(f"result files for {sha[:12]} hold no benchmarks")
        env_map = pair_envs(base.envs, head.envs)
        if not env_map:
            raise InfrastructureError("no environment of head has the Python identity of base's ("
                                      + describe_identity_mismatch(base.envs, head.envs) + ")")
        if passes is not None:
            values, paired_keys = paired_values(pass_values(passes.runs, env_map), passes.paired, passes.paired_block)
        base_pts, head_pts = select(base.points, bench), select(head.points, bench)
        if not (base_pts or head_pts):
            raise InfrastructureError(f"--bench {where.bench!r} selects none of the stored points")
        findings = judge(base_pts, head_pts, config, load_benchmark_meta(where.results_dir), env_map=env_map,
                         accept_changed=accept_changed, pass_values=values, paired_keys=paired_keys)
        not_measured = sum(1 for f in findings if f.status == "not-measured")
        verdict.findings = findings
        verdict.notes = notes + _notes(base, head, env_map, findings, not_measured) + _confirmed_notes(passes, findings)
        verdict.notes += _unused_acceptances(accept_changed, findings)
        nothing = nothing_compared(findings)
        if nothing:
            verdict.errors.append(nothing)
    except InfrastructureError as exc:
        verdict.errors.append(str(exc))
    return verdict


def uncommitted_head(where: Where, head_ref: str) -> list[str]:
    """The uncommitted paths (asvtools.git.uncommitted_paths) a measurement of `head_ref` would leave
    out: those of the working tree when head_ref is the checked-out commit, else []."""
    from rlperf.asvtools.git import resolve, uncommitted_paths

    try:
        if resolve(where.repo, head_ref) != resolve(where.repo, "HEAD"):
            return []
    except InfrastructureError:
        return []  # an unknown ref (or no commit yet) is the verdict's own error (5)
    return uncommitted_paths(where.repo)


def gate_working_tree(where: Where, base_ref: str, head_ref: str, config: GateConfig, *, changed: list[str],
                      **kwargs) -> Verdict:
    """`--run --allow-dirty`: gate() with the head measured from the working tree (head's worktree
    with the uncommitted `changed` paths copied over it). Those results carry the commit's SHA without
    being its code, so they go to a scratch results folder deleted after the verdict, never into a
    results folder; the verdict says so."""
    with tempfile.TemporaryDirectory(prefix="rlperf-worktree-results-") as scratch:
        verdict = gate(replace(where, results_dir=scratch, head_working_tree=True), base_ref, head_ref, config,
                       run=True, **kwargs)
    verdict.working_tree = tuple(changed)
    verdict.mode = "head = the working tree with its uncommitted changes (--allow-dirty); " + verdict.mode
    verdict.notes.append("the working tree's results were not stored in any results folder (they carry the "
                         "commit's SHA but not its code)")
    return verdict


def _import_failure(verdict: Verdict, exc: SuiteImportError) -> None:
    """Head's suite not importing is a benchmark failure (3); base's is the infrastructure's (5)."""
    if exc.sha == verdict.head:
        verdict.failures.append(str(exc))
    else:
        verdict.errors.append(f"the base commit cannot be benchmarked: {exc}")


def _unused_acceptances(patterns, findings) -> list[str]:
    used = {f.detail.rsplit("--accept-changed ", 1)[-1].strip("'") for f in findings
            if f.status == "changed-accepted"}
    return [f"--accept-changed {p!r} matched no changed benchmark" for p in patterns if p not in used]


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


def history_host_change(where: Where) -> list[str]:
    """gate.host.history_host_change for the flow's results folder and machine."""
    return host_history_change(where.results_dir, where.machine)


def backfill(where: Where, spec: str, echo=print, allow_host_change: bool = False) -> tuple[GateExit, list[str]]:
    """Benchmark every commit of `spec` that has no results yet; returns (exit code, messages).
    Refuses (5) before measuring when this host is not the one the machine's history was measured on."""
    messages, codes = [], []
    try:
        commits = backfill_commits(where, spec)
        changed = history_host_change(where) if commits else []
    except InfrastructureError as exc:
        return GateExit.INFRASTRUCTURE, [str(exc)]
    if changed and not allow_host_change:
        return GateExit.INFRASTRUCTURE, [
            f"this host is not the one the history of machine {where.machine!r} was last measured on: "
            f"{'; '.join(changed)}. Start a series for it with --machine NEW-NAME (and `rlperf machine --write "
            "--name NEW-NAME`), or pass --allow-host-change to append anyway (its results draw their own "
            "line on the site: the host facts are part of every result's params)"]
    if changed:
        messages.append(f"HOST CHANGED, appended anyway as its own series (--allow-host-change): {'; '.join(changed)}")
    for sha in commits:
        if has_results(where.results_dir, where.machine, sha):
            messages.append(f"{sha[:12]}: already stored")
            continue
        try:
            status = _run(where, sha, echo)
            codes.append(GateExit.BENCHMARK_FAILURE if status == 2 else GateExit.OK)
            messages.append(f"{sha[:12]}: stored" + (" (some benchmarks failed)" if status == 2 else ""))
        except SuiteImportError as exc:
            codes.append(GateExit.BENCHMARK_FAILURE)
            messages.append(f"{sha[:12]}: {exc}")
        except InfrastructureError as exc:
            codes.append(GateExit.INFRASTRUCTURE)
            messages.append(f"{sha[:12]}: {exc}")
    if not commits:
        messages.append(f"nothing to benchmark for {spec}")
    return worst(codes), messages


__all__ = ["LOCAL_RESULTS", "Where", "backfill", "backfill_commits", "gate", "gate_working_tree", "history_host_change",
           "local_results_dir", "stored_commits", "uncommitted_head"]
