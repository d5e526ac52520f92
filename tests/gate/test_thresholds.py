"""Thresholds from measured noise: the rule on synthetic histories, the committed tables, advisory points."""

from __future__ import annotations

import json
import math
import random
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from tests.gate_fixtures import MACHINE, bench, write_results
from rlperf.gate.config import GateConfig, load_config, settings_label, with_table
from rlperf.gate.exitcodes import GateExit
from rlperf.gate.report import to_dict, to_markdown
from rlperf.gate.verdict import Verdict, judge_point, policy_for
from rlperf.gate.results import Point
from rlperf.gate.thresholds import (MIN_CHANGES, Threshold, derive, factor_of, from_history, log_changes,
                                    sigma_of_changes)
from rlperf.history.known_steps import DEFAULT_PATH as KNOWN_STEPS

ROOT = Path(__file__).resolve().parents[2]
H200 = "nvidia-h200x1-16vcpu-intel-xeon"
COMPACT = "bench_replay.ReplayGpuSample.track_ms(20, 'gpu-compact', 1)"
FUSED = "bench_replay.ReplayGpuSample.track_ms(20, 'gpu-fused', 1)"


def thresholds_command(argv: list[str]) -> int:
    """`rlperf gate-thresholds ARGV`, as a user runs it (exit code)."""
    from rlperf.cli import main

    return main(["gate-thresholds", *argv])


def noisy(n: int, cv: float, seed: int = 0, level: float = 1.0) -> list[float]:
    rng = random.Random(seed)
    return [level * math.exp(rng.gauss(0.0, cv)) for _ in range(n)]


def test_a_flat_history_needs_no_band():
    assert sigma_of_changes(log_changes([2.0] * 20)) == 0 and factor_of(0.0) == 1.0


def test_a_noisy_history_gives_the_spread_of_a_two_run_ratio():
    """Runs with log-SD 5 %: the ratio of two has SD 5 % x sqrt(2); the band is exp(2.326 x that)."""
    sigma = sigma_of_changes(log_changes(noisy(2000, 0.05)))
    assert sigma == pytest.approx(0.05 * math.sqrt(2), rel=0.1)
    assert factor_of(sigma) == pytest.approx(math.exp(2.326 * 0.05 * math.sqrt(2)), rel=0.02)


def test_a_step_does_not_inflate_the_noise_estimate():
    values = noisy(200, 0.03)
    stepped = values[:100] + [2.0 * v for v in values[100:]]  # the code got twice as slow at commit 100
    changes = log_changes(stepped)
    assert sigma_of_changes(changes) == pytest.approx(sigma_of_changes(log_changes(values)), rel=0.05)
    assert statistics.stdev(changes) > 1.5 * sigma_of_changes(changes)  # a plain SD would have been inflated


def _history(results_dir: Path, values_by_host: dict[str, list[float]]) -> None:
    """One parameterless benchmark `b.S.time_x` over commits, one run of commits per host (cpu_flags)."""
    i = 0
    for flags, values in values_by_host.items():
        for value in values:
            i += 1
            write_results(results_dir, f"{i:08x}" + "0" * 32, {"b.S.time_x": bench(value)}, host={"cpu_flags": flags})


def test_a_host_change_is_not_a_change(tmp_path):
    _history(tmp_path, {"aaaa": [1.0] * 5, "bbbb": [5.0] * 5})  # a 5x faster... other host
    (entry,) = from_history(tmp_path, MACHINE)
    assert (entry.n, entry.factor) == (8, 1.0)  # 4 + 4 changes within hosts, none across


def test_too_little_history_falls_back_to_the_gate_factor_and_says_so(tmp_path):
    _history(tmp_path, {"aaaa": [1.0, 1.2, 0.9]})
    (entry,) = derive(tmp_path, MACHINE)
    assert entry.factor is None and entry.n == 2 < MIN_CHANGES
    config = GateConfig(factor=1.1, table={entry.name: entry})
    policy = policy_for(config, "b.S.time_x", "b.S.time_x", {})
    assert policy.factor == 1.1 and policy.advisory is None and "too little measured noise" in policy.source


def test_derived_factor_replaces_a_rule_but_never_narrows_below_the_gate_factor():
    from rlperf.gate.config import Rule

    rules = (Rule(match="b.*", factor=1.30),)
    wide = Threshold("b.S.time_x", "history", 40, 0.08, 1.2, "synthetic")
    tight = Threshold("b.S.time_x", "history", 40, 0.01, 1.02, "synthetic")
    assert policy_for(GateConfig(factor=1.1, rules=rules, table={"b.S.time_x": wide}), "b.S.time_x", "b.S.time_x",
                      {}).factor == 1.2
    assert policy_for(GateConfig(factor=1.1, rules=rules, table={"b.S.time_x": tight}), "b.S.time_x", "b.S.time_x",
                      {}).factor == 1.1


def _h200_config(**kw) -> GateConfig:
    return with_table(load_config(str(ROOT / "gate.toml"), **kw), H200, str(ROOT))


def _before_fix_config(**kw) -> GateConfig:
    """The H200 table as the null runs of the host-paced timing gave it (run-noise-before-fix/: two gathers
    bimodal across processes), derived now from those committed runs: the advisory path on real data."""
    table = {t.name: t for t in derive(ROOT / "results/asv", H200, ROOT / f"results/reports/replay/{H200}/run-noise-before-fix")}
    return replace(load_config(str(ROOT / "gate.toml"), **kw), table=table, table_source="run-noise-before-fix")


def test_gate_toml_no_longer_ungates_points_by_hand():
    config = load_config(str(ROOT / "gate.toml"))
    assert all(r.factor is None or r.factor <= config.advisory_above for r in config.rules)
    # the once-bimodal gathers: no hand-set factor or advisory; a measured paired factor may only tighten
    for r in config.rules:
        if "gpu-compact" in r.match or "bf16" in r.match:
            assert r.factor is None and r.advisory is None and r.paired_factor is not None
            assert r.paired_factor < config.factor


@pytest.mark.parametrize("placement", ["gpu-fused-bf16", "gpu-compact-a16-fused"])
def test_a_fixed_gpu_gather_is_paired_at_the_factor_its_null_study_measured(placement):
    """0 false alarms in 60 paired null comparisons at 1.03-1.10 on the H200 host (power-paired/PLACEMENT)."""
    config = _h200_config()
    name = f"bench_replay.ReplayGpuSample.track_ms(20, '{placement}', 1)"
    policy = policy_for(config, "bench_replay.ReplayGpuSample.track_ms", name, {})
    assert policy.paired_factor == 1.05 and "paired factor: rule" in policy.source and policy.advisory is None
    study = ROOT / f"results/reports/gate/nvidia-h200x1-16vcpu-intel-xeon/power-paired/{placement}/power.md"
    assert "| null  | 0   |     1.05 |       0 |       60 | n/a" in study.read_text()
    assert "0.0% (0/60; 95 % CI 0.0%–6.0%)" in study.read_text()


@pytest.mark.parametrize("placement, cv", [("gpu-compact", "42.6%"), ("gpu-fused-bf16", "31.7%")])
def test_the_bimodal_gpu_gathers_were_advisory_with_their_measured_cv(placement, cv):
    name = f"bench_replay.ReplayGpuSample.track_ms(20, '{placement}', 1)"
    policy = policy_for(_before_fix_config(), "bench_replay.ReplayGpuSample.track_ms", name, {})
    assert policy.advisory and f"run-to-run CV {cv}" in policy.advisory and policy.advisory_paired


@pytest.mark.parametrize("placement", ["gpu-compact", "gpu-fused-bf16", "gpu-fused", "gpu"])
def test_todays_gpu_gathers_are_gated_at_the_default_factor(placement):
    """Since the run-ahead fix every gather needs under x1.02 across fresh processes (run-noise/); the GPU
    history's consecutive-commit spread, with the change across that fix (de34abe, a known step) left out,
    asks x1.008-x1.085 (the pre-fix commits still scatter): both under [gate] factor, which stands."""
    config = _h200_config()
    name = f"bench_replay.ReplayGpuSample.track_ms(20, '{placement}', 1)"
    entry = config.table[name]
    assert entry.source == "history" and entry.factor < config.factor and "known step" in entry.detail
    policy = policy_for(config, "bench_replay.ReplayGpuSample.track_ms", name, {})
    assert policy.advisory is None and policy.factor == config.factor == 1.1


def test_the_timing_fix_is_left_out_of_the_gpu_gathers_spread():
    """de34abe changed how the GPU gathers are timed (x0.94 on the fused gathers): a step, not noise. It is
    left out of their spread (one change fewer), and counting it would widen it. With 5 commits it widened
    gpu-fused past the gate factor (x1.10, x1.12); with 17 the robust spread barely moves, but it still moves."""
    with_step = {t.name: t for t in derive(ROOT / "results/asv", H200)}
    without = {t.name: t for t in derive(ROOT / "results/asv", H200, known_steps=ROOT / KNOWN_STEPS)}
    for placement in ("gpu-fused", "gpu-fused-bf16"):
        name = f"bench_replay.ReplayGpuSample.track_ms(20, '{placement}', 1)"
        assert without[name].n == with_step[name].n - 1
        assert with_step[name].sigma > without[name].sigma


def _stepped_history(tmp_path: Path) -> list[float]:
    """b.S.time_x over 12 commits on one host, the code twice as slow from the 7th; returns the values."""
    values = noisy(6, 0.02, seed=3) + [2.0 * v for v in noisy(6, 0.02, seed=4)]
    _history(tmp_path, {"aaaa": values})
    return values


def _known_file(tmp_path: Path, before: int, after: int, flags: str = "aaaa") -> Path:
    step = {"machine": MACHINE, "cpu_flags": flags, "benchmark": "b.S.time_x", "before": f"{before:08x}",
            "after": f"{after:08x}", "direction": "regression", "ratio": 2.0, "cause": "x", "why": "synthetic"}
    path = tmp_path / "known-steps.json"
    path.write_text(json.dumps({"known_steps": [step]}))
    return path


def test_a_change_across_a_known_step_is_left_out_of_the_spread(tmp_path):
    values = _stepped_history(tmp_path / "r")
    (counted,) = derive(tmp_path / "r", MACHINE)
    (entry,) = derive(tmp_path / "r", MACHINE, known_steps=_known_file(tmp_path, 6, 7))
    changes = log_changes(values)
    assert entry.n == counted.n - 1 == 10 and "1 across a known step of the code left out" in entry.detail
    assert entry.sigma == pytest.approx(sigma_of_changes(changes[:5] + changes[6:]), abs=1e-6)
    assert counted.sigma > entry.sigma  # the step's change inflated the median-based spread of 11 changes


def test_a_known_step_of_another_host_or_a_commit_range_spans_every_change_inside_it(tmp_path):
    _stepped_history(tmp_path / "r")
    (other_host,) = derive(tmp_path / "r", MACHINE, known_steps=_known_file(tmp_path, 6, 7, flags="bbbb"))
    assert other_host.n == 11  # not this series' step
    (wide,) = derive(tmp_path / "r", MACHINE, known_steps=_known_file(tmp_path, 5, 8))  # commits measured since
    assert wide.n == 8 and "3 across a known step" in wide.detail


def test_the_command_refuses_a_missing_known_steps_file_writing_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    assert thresholds_command(["--machine", H200, "--results-dir", str(ROOT / "results/asv"), "--out", str(out),
                               "--known-steps", str(tmp_path / "none.json"),
                               "--config", str(ROOT / "gate.toml")]) == 2
    assert "no known-steps file" in capsys.readouterr().err and not out.exists()


def test_a_measured_unimodal_gather_gets_its_own_factor():
    policy = policy_for(_before_fix_config(), "bench_replay.ReplayGpuSample.track_ms", FUSED, {})
    assert policy.factor == pytest.approx(1.123, abs=1e-3) and policy.advisory is None
    assert policy.paired_factor == 1.05  # its paired null trials' factor (gate.toml rule) still holds


def test_cli_factor_replaces_derived_factors_keeps_advisory_and_says_so():
    config = _before_fix_config(factor=1.5)
    assert policy_for(config, "x", FUSED, {}).factor == 1.5
    assert policy_for(config, "x", COMPACT, {}).advisory
    assert "--factor replaces its factors" in settings_label(config)


def test_a_machine_without_a_table_says_every_factor_is_from_gate_toml(tmp_path):
    config = with_table(load_config(str(ROOT / "gate.toml")), "no-such-box", str(tmp_path))
    assert "no thresholds table" in settings_label(config)
    assert policy_for(config, "x", COMPACT, {}).factor == 1.25  # the replay rule's fallback


def _pt(value, name=COMPACT):
    return Point(key=name.split("(")[0], name=name, value=value, stats=None, samples=None, version="v1", env="e")


def test_advisory_never_blocks_and_has_its_own_section():
    policy = policy_for(_before_fix_config(), "bench_replay.ReplayGpuSample.track_ms", COMPACT, {})
    f = judge_point(_pt(0.3), _pt(1.5), policy, {"unit": "ms"}, 0.002, pass_values=[(0.3, 1.5)] * 5)
    assert (f.status, f.exit_code) == ("advisory", GateExit.OK) and "would read regression" in f.detail
    v = Verdict(base="a" * 40, head="b" * 40, machine=H200, factor=1.1, findings=[f])
    assert v.exit_code == GateExit.OK
    md = to_markdown(v)
    section = md.split("### 📢 Advisory points")[1]
    assert COMPACT in section and "42.6%" in section and "×4.06" in section
    assert not any(line.startswith("| status ") for line in md.splitlines())  # no table of what blocks or changed
    assert to_dict(v)["advisory"][0]["name"] == COMPACT


def test_a_verdict_of_advisory_points_only_says_nothing_was_gated():
    """Exit 0 (advisory never blocks), but the headline must not read as a pass of gated points."""
    policy = policy_for(_before_fix_config(), "bench_replay.ReplayGpuSample.track_ms", COMPACT, {})
    advisory = judge_point(_pt(0.3), _pt(1.5), policy, {"unit": "ms"}, 0.002, pass_values=[(0.3, 1.5)] * 5)
    v = Verdict(base="a" * 40, head="b" * 40, machine=H200, factor=1.1, findings=[advisory])
    headline = to_markdown(v).splitlines()[0]
    assert v.exit_code == GateExit.OK and v.gated == 0
    assert "0 points gated" in headline and "nothing gated" in headline and "1 advisory" in headline
    assert "no regression" not in headline
    assert (to_dict(v)["gated"], to_dict(v)["exit_code"]) == (0, 0)
    gated = judge_point(_pt(1.0, "k.S.time_x"), _pt(1.0, "k.S.time_x"), policy_for(GateConfig(), "k.S.time_x",
                                                                                  "k.S.time_x", {}), {}, 0.002)
    v.findings.append(gated)
    headline = to_markdown(v).splitlines()[0]
    assert "no regression" in headline and "1 point gated" in headline and "1 advisory" in headline
    assert to_dict(v)["gated"] == 1


def test_history_advisory_yields_to_paired_samples_fresh_process_advisory_does_not():
    history = Threshold("k.S.time_x", "history", 100, 0.4, 2.5, "synthetic")
    config = GateConfig(factor=1.1, paired_factor=1.05, table={"k.S.time_x": history, COMPACT: replace(
        history, name=COMPACT, source="null-runs")})
    kernel = policy_for(config, "k.S.time_x", "k.S.time_x", {})
    gather = policy_for(config, "x", COMPACT, {})
    ratios = [(1.0, 1.2)] * 20
    assert judge_point(_pt(1.0, "k.S.time_x"), _pt(1.2, "k.S.time_x"), kernel, {}, 0.002).status == "advisory"
    assert judge_point(_pt(1.0, "k.S.time_x"), _pt(1.2, "k.S.time_x"), kernel, {}, 0.002, pass_values=ratios,
                       paired=True).status == "regression"  # judged at its paired factor 1.05
    assert judge_point(_pt(1.0), _pt(1.2), gather, {}, 0.002, pass_values=ratios, paired=True).status == "advisory"


@pytest.mark.parametrize("machine", ["cpu-2vcpu-amd-epyc", "cpu-2vcpu-intel-xeon", H200])
def test_committed_table_is_what_the_command_gives_from_the_committed_results(machine, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert thresholds_command(["--machine", machine, "--check"]) == 0, capsys.readouterr().err
    committed = json.loads((ROOT / f"results/reports/gate/{machine}/thresholds/thresholds.json").read_text())
    assert committed["machine"] == machine


def test_the_command_refuses_an_unknown_machine_writing_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    assert thresholds_command(["--machine", "nope", "--results-dir", str(ROOT / "results/asv"),
                                 "--out", str(out), "--config", str(ROOT / "gate.toml")]) == 2
    assert "valid: cpu-2vcpu-amd-epyc" in capsys.readouterr().err and not out.exists()


def test_bad_ceiling_or_table_is_a_usage_error_naming_it(tmp_path):
    from rlperf.errors import UsageError

    bad = tmp_path / "g.toml"
    bad.write_text("[gate]\nadvisory_above = 1.0\n")
    with pytest.raises(UsageError, match="advisory_above"):
        load_config(str(bad))
    table = tmp_path / "box" / "t.json"
    table.parent.mkdir()
    table.write_text('{"schema": "other"}')
    good = tmp_path / "ok.toml"
    good.write_text(f'[gate]\nthresholds = "{tmp_path.as_posix()}/{{machine}}/t.json"\n')
    with pytest.raises(UsageError, match="unreadable thresholds table .*t.json.*rlperf gate-thresholds"):
        with_table(load_config(str(good)), "box", "/")


def test_the_ceiling_is_read_from_gate_toml_at_judging_time(tmp_path):
    """The table holds measurement only; raising advisory_above gates a point the default ceiling does not."""
    entry = Threshold("b.S.time_x", "history", 40, 0.1, 1.262, "synthetic")
    assert policy_for(GateConfig(table={entry.name: entry}), "b.S.time_x", "b.S.time_x", {}).advisory
    lenient = GateConfig(table={entry.name: entry}, advisory_above=1.3)
    policy = policy_for(lenient, "b.S.time_x", "b.S.time_x", {})
    assert policy.advisory is None and policy.factor == 1.262


def test_check_finds_a_stale_table(tmp_path, capsys):
    out = tmp_path / "t"
    argv = ["--machine", H200, "--results-dir", str(ROOT / "results/asv"), "--out", str(out),
            "--null-runs", str(ROOT / f"results/reports/replay/{H200}/run-noise"), "--config", str(ROOT / "gate.toml")]
    assert thresholds_command(argv) == 0 and thresholds_command(argv + ["--check"]) == 0
    doc = json.loads((out / "thresholds.json").read_text())
    doc["points"][0]["n"] += 1
    (out / "thresholds.json").write_text(json.dumps(doc))
    assert thresholds_command(argv + ["--check"]) == 1 and "stale" in capsys.readouterr().err
