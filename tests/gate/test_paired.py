"""Paired sampling (gate.paired): two live worker processes on a tiny fake suite, no Numba, no asv run."""

from __future__ import annotations

import json
import os
import statistics
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from rlperf.errors import UsageError
from rlperf.gate import interleave, paired, paired_worker, passdir
from rlperf.gate.config import load_config
from rlperf.gate.exitcodes import InfrastructureError
from rlperf.gate.results import CommitResults, Point
from rlperf.gate.verdict import _ratios_detail

SUITE = '''
import sys, time

DELAY = {delay}


class Sleepy:
    params = ([1, 2],)

    def setup(self, scale):
        print("setup chatter on stdout")  # must not reach the protocol
        self.scale = scale

    def time_sleep(self, scale):
        time.sleep(DELAY * self.scale)


class Skips:
    def setup(self):
        raise NotImplementedError("not on this machine")

    def time_never(self):
        pass


class Breaks:
    def setup(self):
        raise ValueError("broken setup")

    def time_never(self):
        pass


def time_module_level():
    time.sleep(DELAY)


class Tracked:
    params = ([1.0, 3.0],)

    def track_ms(self, level):
        return {{"samples": [level, level + 1.0, level + 2.0], "number": 1}}

    def track_plain(self, level):
        return level * 2


class Slow:
    def time_slow(self):
        time.sleep(0.5)
'''


def _suite(root, delay: float) -> tuple[str, dict, str]:
    """A benchmark folder whose points sleep `delay` s per call, as one side of sample_point."""
    bench = root / "benchmarks"
    bench.mkdir(parents=True)
    (bench / "bench_fake.py").write_text(textwrap.dedent(SUITE.format(delay=delay)))
    return str(bench), dict(os.environ, ASV_PYTHONPATH=""), str(root)


SPEC = paired.PairedSpec(seconds=0.4, block=4, sample_time=0.004, timeout=60)


def test_head_twice_as_slow_reads_about_two(tmp_path):
    sides = {"base": _suite(tmp_path / "b", 0.001), "head": _suite(tmp_path / "h", 0.002)}
    got = paired.sample_point("bench_fake.Sleepy.time_sleep(1)", sides, SPEC)
    assert got.error is None and got.skipped is None
    assert len(got.pairs) >= SPEC.block and got.number >= 1
    ratio = statistics.median(h / b for b, h in got.blocks(SPEC.block))
    assert 1.5 < ratio < 2.6  # base and head are not swapped, and the pairs are of the same point
    base_per_call = statistics.median(b for b, _ in got.blocks(SPEC.block))
    assert 0.0009 < base_per_call < 0.004  # per call, not per sample of `number` calls


def test_restarts_use_fresh_workers_and_record_segments(tmp_path):
    side = _suite(tmp_path / "s", 0.001)
    spec = paired.PairedSpec(seconds=0.6, block=2, sample_time=0.002, timeout=60, restarts=3)
    got = paired.sample_point("bench_fake.Sleepy.time_sleep(1)", {"base": side, "head": side}, spec)
    assert len(got.segments) == 3 and sum(got.segments) == len(got.pairs) and min(got.segments) >= 2
    back = paired.PointPairs.from_dict(json.loads(json.dumps(got.to_dict())))
    assert back.segments == got.segments


def test_parameters_reach_setup_and_the_timed_call(tmp_path):
    side = _suite(tmp_path / "s", 0.001)
    one = paired.sample_point("bench_fake.Sleepy.time_sleep(1)", {"base": side, "head": side}, SPEC)
    two = paired.sample_point("bench_fake.Sleepy.time_sleep(2)", {"base": side, "head": side}, SPEC)
    per_call = lambda pp: statistics.median(b for b, _ in pp.blocks(SPEC.block))  # noqa: E731
    assert per_call(two) > 1.5 * per_call(one)


def test_module_level_function(tmp_path):
    side = _suite(tmp_path / "s", 0.001)
    got = paired.sample_point("bench_fake.time_module_level", {"base": side, "head": side}, SPEC)
    assert got.error is None and got.pairs


def test_skip_and_error_are_reported_not_raised(tmp_path):
    side = _suite(tmp_path / "s", 0.001)
    skipped = paired.sample_point("bench_fake.Skips.time_never", {"base": side, "head": side}, SPEC)
    assert skipped.skipped == "base: not on this machine" and not skipped.pairs
    broken = paired.sample_point("bench_fake.Breaks.time_never", {"base": side, "head": side}, SPEC)
    assert broken.error == "base: ValueError: broken setup" and not broken.pairs
    missing = paired.sample_point("bench_nothing.A.time_b", {"base": side, "head": side}, SPEC)
    assert missing.error.startswith("base: ImportError")


def test_a_track_is_paired_on_its_returned_value(tmp_path):
    side = _suite(tmp_path / "s", 0.001)
    got = paired.sample_point("bench_fake.Tracked.track_ms(3.0)", {"base": side, "head": side}, SPEC)
    assert got.kind == "track" and got.number == 1 and set(got.pairs) == {(4.0, 4.0)}  # median of the samples
    plain = paired.sample_point("bench_fake.Tracked.track_plain(1.0)", {"base": side, "head": side}, SPEC)
    assert set(plain.pairs) == {(2.0, 2.0)}


def test_a_point_too_slow_for_the_budget_is_left_to_the_passes(tmp_path):
    side = _suite(tmp_path / "s", 0.001)
    got = paired.sample_point("bench_fake.Slow.time_slow", {"base": side, "head": side}, SPEC)
    assert not got.pairs and "do not fit in 0.4 s" in got.skipped


def test_parse_point_literal_parameters(tmp_path, monkeypatch):
    bench, _, _ = _suite(tmp_path / "s", 0.001)
    monkeypatch.syspath_prepend(bench)
    assert paired_worker.parse_point("bench_fake.Sleepy.time_sleep('a', 8192, 2)") == \
        ("bench_fake", ["Sleepy", "time_sleep"], ("a", 8192, 2))
    assert paired_worker.parse_point("bench_fake.Sleepy.time_sleep(1)")[2] == (1,)


def _package_suite(root, delay: float) -> tuple[str, dict, str]:
    """Today's suite shape: benchmarks/ is a package and its modules import their helpers relatively."""
    bench, env, cwd = _suite(root, delay)
    (root / "benchmarks" / "__init__.py").write_text("")
    (root / "benchmarks" / "_helper.py").write_text("FACTOR = 1\n")
    fake = root / "benchmarks" / "bench_fake.py"
    fake.write_text("from ._helper import FACTOR\n" + fake.read_text())
    return bench, env, cwd


def test_a_package_suite_with_relative_imports_is_paired(tmp_path):
    """The paired worker imports the suite as asv does (a package): a relative import is not 'no module'
    (it was, and every paired replay and noise point fell back to its passes, unnoticed)."""
    side = _package_suite(tmp_path / "s", 0.001)
    got = paired.sample_point("bench_fake.Sleepy.time_sleep(1)", {"base": side, "head": side}, SPEC)
    assert got.error is None and got.skipped is None and len(got.pairs) >= SPEC.block


def test_a_module_that_fails_to_import_says_why(tmp_path):
    bench, _, _ = _suite(tmp_path / "s", 0.001)
    (tmp_path / "s" / "benchmarks" / "bench_broken.py").write_text("import no_such_module_anywhere\n")
    side = (bench, dict(os.environ, ASV_PYTHONPATH=""), str(tmp_path / "s"))
    got = paired.sample_point("bench_broken.Sleepy.time_sleep(1)", {"base": side, "head": side}, SPEC)
    assert got.error is not None and "no_such_module_anywhere" in got.error


def test_blocks_drop_the_short_tail_and_divide_by_number():
    pp = paired.PointPairs(name="x", number=2, pairs=[(2.0, 4.0)] * 5)
    assert pp.blocks(2) == [(1.0, 2.0), (1.0, 2.0)]


def test_saved_pairs_round_trip(tmp_path):
    points = [paired.PointPairs(name="a(1)", number=3, pairs=[(1.0, 2.0)]), paired.PointPairs(name="b", skipped="why")]
    paired.save(str(tmp_path / "p.json"), points, SPEC, base="x")
    spec, back, meta = paired.load(str(tmp_path / "p.json"))
    assert spec == SPEC and back == points and meta == {"base": "x"}


def _point(name: str, key: str, value) -> Point:
    return Point(key=key, name=name, value=value, stats=None, samples=None, version="1", env="py")


def test_pairable_takes_time_points_measured_on_both_sides():
    def res(**values):
        keys = {"t": "m.C.time_t", "track": "m.C.track_x", "gone": "m.C.time_gone", "nan": "m.C.time_nan",
                "sampled": "m.C.track_ms"}
        return CommitResults(points={("py", n): replace(_point(n, keys[n], v), samples=[v] if n == "sampled" else None)
                                     for n, v in values.items()})

    base = res(t=1.0, track=2.0, gone=1.0, nan=1.0, sampled=1.0)
    head = res(t=1.0, track=2.0, nan=float("nan"), sampled=1.0)
    assert interleave.pairable(base, head) == ["sampled", "t"]  # a track with no samples is not pairable


def test_paired_values_replace_only_the_paired_points():
    values = {("py", "a"): [(1.0, 1.0)], ("py", "b"): [(1.0, 1.0)]}
    pairs = {"a": paired.PointPairs(name="a", number=1, pairs=[(1.0, 3.0)] * 4),
             "b": paired.PointPairs(name="b", error="died")}
    out, keys = interleave.paired_values(values, pairs, block=2)
    assert out[("py", "a")] == [(1.0, 3.0), (1.0, 3.0)]
    assert out[("py", "b")] == [(1.0, 1.0)]  # no pairs: its passes judge it
    assert keys == {("py", "a")}


def test_kept_paired_file_is_loaded_and_a_broken_one_is_infrastructure(tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "passes.json").write_text(json.dumps({"schema": passdir.SCHEMA}))
    paired.save(str(keep / passdir.PAIRED), [paired.PointPairs(name="a", number=1, pairs=[(1.0, 2.0)])], SPEC)
    got, block = passdir._paired(str(keep))
    assert block == SPEC.block and got["a"].pairs == [(1.0, 2.0)]
    (keep / passdir.PAIRED).write_text('{"spec": {}}')
    with pytest.raises(InfrastructureError, match="unreadable"):
        passdir._paired(str(keep))


@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf")])
def test_paired_seconds_must_be_finite_and_not_negative(value):
    with pytest.raises(UsageError, match="paired_seconds"):
        load_config(None, paired_seconds=value)


def test_paired_seconds_from_the_config_file(tmp_path):
    path = tmp_path / "gate.toml"
    path.write_text("[gate]\npaired_seconds = 4\npaired_bench = '^bench_env'\n")
    config = load_config(str(path))
    assert config.paired_seconds == 4.0 and config.paired_bench == "^bench_env"
    assert load_config(str(path), paired_bench="x").paired_bench == "x"  # the CLI wins
    path.write_text("[gate]\npaired_bench = 3\n")
    with pytest.raises(UsageError, match="paired_bench"):
        load_config(str(path))


def test_many_ratios_are_summarised_by_quartiles():
    assert _ratios_detail([1.0, 1.1, 1.2]) == "per-pass ×1.000, ×1.100, ×1.200"
    assert _ratios_detail([1.0] * 12).startswith("12 paired blocks, quartiles ×1.000")


def test_paired_needs_run_on_the_cli(tmp_path, capsys):
    from rlperf.cli import main

    assert main(["gate", "--base", "HEAD", "--no-run", "--paired", "3"]) == 2
    err = capsys.readouterr().err
    assert "--paired, --paired-bench, --paired-restarts, --paired-confirm and --paired-screen apply" in err
    assert main(["gate", "--base", "HEAD", "--run", "--paired", "3", "--paired-bench", "("]) == 2
    assert "--paired-bench" in capsys.readouterr().err


def test_the_worker_path_puts_the_commit_overlay_before_the_gates_own():
    env = paired.worker_env({"ASV_PYTHONPATH": "/overlay", "PYTHONPATH": "/site"})
    assert env["PYTHONPATH"] == os.pathsep.join(["/overlay", "/site"])
    assert paired.worker_env({})["PYTHONPATH"] == ""
    assert paired.worker_env({})["OMP_WAIT_POLICY"] == "PASSIVE"  # an idle side's pool must not spin
    assert paired.worker_env({"OMP_WAIT_POLICY": "ACTIVE"})["OMP_WAIT_POLICY"] == "ACTIVE"  # the caller's wins


def _policy_config(text, tmp_path, **cli):
    path = tmp_path / "gate.toml"
    path.write_text(text)
    return load_config(str(path), **cli)


def test_paired_factor_precedence(tmp_path):
    from rlperf.gate.verdict import policy_for

    text = ("[gate]\nfactor = 1.10\npaired_factor = 1.05\n"
            "[[rule]]\nmatch = 'noisy*'\nfactor = 1.30\n"
            "[[rule]]\nmatch = 'gpu*'\nfactor = 1.30\npaired_factor = 1.04\n")
    config = _policy_config(text, tmp_path)
    assert policy_for(config, "plain", "plain", {}).paired_factor == 1.05  # [gate] paired_factor
    assert policy_for(config, "noisy", "noisy", {}).paired_factor == 1.30  # a rule's factor marks a noisy point
    assert policy_for(config, "gpu", "gpu", {}).paired_factor == 1.04  # a rule's own paired_factor wins
    assert policy_for(_policy_config(text, tmp_path, factor=1.2), "plain", "plain", {}).paired_factor == 1.2
    assert policy_for(_policy_config("[gate]\nfactor = 1.10\n", tmp_path), "p", "p", {}).paired_factor == 1.10


def test_a_paired_point_is_judged_at_the_paired_factor():
    from rlperf.gate.verdict import Policy, judge_point

    base, head = _point("p", "m.C.time_p", 1.0), _point("p", "m.C.time_p", 1.07)
    policy = Policy(direction="lower", factor=1.10, tolerance=None, source="", paired_factor=1.05)
    blocks = [(1.0, 1.07)] * 12
    paired_finding = judge_point(base, head, policy, {}, 0.002, pass_values=blocks, paired=True)
    assert paired_finding.status == "regression" and paired_finding.factor == 1.05
    assert paired_finding.method == "paired-median-of-12"
    assert judge_point(base, head, policy, {}, 0.002, pass_values=blocks).status == "ok"  # passes: 1.10


def test_a_flagged_point_is_sampled_again_into_the_same_pairs(tmp_path):
    """_confirm: a round of fresh workers joins the flagged point's pairs (same calls per sample), the
    others are left alone, and a point the judge clears stops the rounds."""
    sides_dirs = {"base": _suite(tmp_path / "b", 0.001), "head": _suite(tmp_path / "h", 0.001)}
    commits = {side: type("C", (), {"worktree": d[2], "env": d[1]})() for side, d in sides_dirs.items()}
    spec = paired.PairedSpec(seconds=0.2, block=2, sample_time=0.002, timeout=60)
    flagged_name, other = "bench_fake.Sleepy.time_sleep(1)", "bench_fake.time_module_level"
    pairs = interleave._sample_pairs(commits, [flagged_name, other], spec, echo=lambda *_: None)
    before = {n: (len(p.pairs), len(p.segments), p.number) for n, p in pairs.items()}
    asked = []

    def still_flagged(got):
        asked.append({n: len(p.pairs) for n, p in got.items()})
        return [flagged_name] if len(asked) == 1 else []  # flagged once, cleared by its pooled pairs

    interleave._confirm(commits, pairs, spec, still_flagged, rounds=3, echo=lambda *_: None)
    assert len(asked) == 2  # round 1 re-sampled, then the judge cleared it: no round 2
    got = pairs[flagged_name]
    assert got.confirm_rounds == 1 and len(got.segments) == before[flagged_name][1] + 1
    assert len(got.pairs) > before[flagged_name][0] and got.number == before[flagged_name][2]
    assert (len(pairs[other].pairs), pairs[other].confirm_rounds) == (before[other][0], 0)
    back = paired.PointPairs.from_dict(json.loads(json.dumps(got.to_dict())))
    assert back.confirm_rounds == 1


def test_a_point_whose_confirming_round_fails_does_not_stop_the_others(monkeypatch, tmp_path):
    """_confirm: a flagged point whose round gave no pairs keeps its earlier pairs and is not retried,
    while the other flagged points go on being confirmed in every round."""
    commits = {side: type("C", (), {"worktree": str(tmp_path), "env": "python"})() for side in ("base", "head")}
    monkeypatch.setattr(paired, "bench_dir_of", lambda worktree: worktree)
    broken, healthy = "m.time_broken", "m.time_healthy"
    pairs = {n: paired.PointPairs(name=n, number=2, pairs=[(1.0, 1.2)], segments=[1]) for n in (broken, healthy)}
    sampled = []

    def sample_point(name, sides, spec, log, number):
        sampled.append(name)
        if name == broken:
            return paired.PointPairs(name=name, number=number, error="worker died")
        return paired.PointPairs(name=name, number=number, pairs=[(1.0, 1.2)], segments=[1])

    monkeypatch.setattr(paired, "sample_point", sample_point)
    interleave._confirm(commits, pairs, spec=None, still_flagged=lambda got: [broken, healthy], rounds=3,
                        echo=lambda *_: None)
    assert sampled == [broken, healthy, healthy, healthy]
    assert (len(pairs[broken].pairs), pairs[broken].confirm_rounds) == (1, 0)
    assert (len(pairs[healthy].pairs), pairs[healthy].confirm_rounds) == (4, 3)


def test_rounds_of_other_calls_per_sample_do_not_join():
    point = paired.PointPairs(name="x", number=4, pairs=[(1.0, 1.0)], segments=[1])
    with pytest.raises(ValueError, match="calls per sample"):
        paired.extend(point, paired.PointPairs(name="x", number=2, pairs=[(1.0, 1.0)], segments=[1]))


def test_the_confirming_judge_flags_what_the_verdict_would(tmp_path):
    """flow._flagged_paired runs the verdict's own judge on the pairs so far: a point slower by more
    than the paired factor is named, an unchanged one is not, and the paired factor (not the passes')
    decides."""
    from rlperf.gate.config import GateConfig
    from rlperf.gate.flow import _flagged_paired

    def side(values):
        return CommitResults(points={("py", n): _point(n, f"m.C.{n}", v) for n, v in values.items()},
                             envs={"py": {"python": "3.12"}})

    runs = [(side({"time_a": 1.0, "time_b": 1.0}), side({"time_a": 1.07, "time_b": 1.0}))]
    pairs = {n: paired.PointPairs(name=n, number=1, pairs=[(1.0, r)] * 8) for n, r in (("time_a", 1.07), ("time_b", 1.0))}
    meta = tmp_path / "benchmarks.json"
    meta.write_text("{}")
    flagged = _flagged_paired(GateConfig(factor=1.10, paired_factor=1.05), None)
    assert flagged(runs, pairs, 4, str(meta)) == ["time_a"]
    assert _flagged_paired(GateConfig(factor=1.10, paired_factor=1.08), None)(runs, pairs, 4, str(meta)) == []
    # a screen of 0.6 re-samples above 1 + 0.6 x 0.08 = x1.048: x1.07 gets a round, x1.00 does not
    screened = GateConfig(factor=1.10, paired_factor=1.08, paired_screen=0.6)
    assert _flagged_paired(screened, None)(runs, pairs, 4, str(meta)) == ["time_a"]


def test_paired_confirm_from_the_config_and_the_cli(tmp_path):
    path = tmp_path / "gate.toml"
    path.write_text("[gate]\npaired_confirm = 1\n")
    assert load_config(str(path)).paired_confirm == 1
    assert load_config(str(path), paired_confirm=0).paired_confirm == 0  # the CLI wins
    for bad in ("-1", "1.5", "true"):
        path.write_text(f"[gate]\npaired_confirm = {bad}\n")
        with pytest.raises(UsageError, match="paired_confirm"):
            load_config(str(path))
    path.write_text("[gate]\npaired_confirm = 1\npaired_screen = 0.6\n")
    assert load_config(str(path)).paired_screen == 0.6 and load_config(str(path), paired_screen=1.0).paired_screen == 1.0
    for bad in ("0", "1.5", "nan", "'x'"):
        path.write_text(f"[gate]\npaired_screen = {bad}\n")
        with pytest.raises(UsageError, match="paired_screen"):
            load_config(str(path))


def test_the_verdict_names_each_re_sampled_point_and_its_final_status():
    from rlperf.gate.flow import _confirmed_notes
    from rlperf.gate.verdict import Finding

    def finding(name, status):
        return Finding(name=name, status=status, direction="lower", base=1.0, head=1.0, ratio=1.0, factor=1.05,
                       tolerance=None, method="", detail="", unit=None, source="")

    pairs = {"a": paired.PointPairs(name="a", number=1, pairs=[(1.0, 1.0)] * 4, segments=[2, 2], confirm_rounds=1),
             "b": paired.PointPairs(name="b", number=1, pairs=[(1.0, 1.0)] * 2, segments=[2])}
    passes = passdir.Passes(runs=(), order=(), paired=pairs, paired_block=2)
    notes = _confirmed_notes(passes, [finding("py: a", "ok"), finding("py: b", "ok")])
    assert notes == ["paired: a was flagged by its first round (or passed the screen) and sampled again "
                     "(1 round(s), 2 worker pairs in all): ok on all its pairs"]
    assert _confirmed_notes(None, []) == []


def test_a_suite_package_with_relative_imports_is_paired_as_asv_imports_it(tmp_path):
    """bench_replay and bench_noise import `from ._suite import ...`: the worker imports the file as part
    of the benchmark package, as asv does; as a top-level module it failed and the point was never paired
    (its passes judged it, silently)."""
    bench, env, cwd = _suite(tmp_path / "s", 0.001)
    (Path(bench) / "__init__.py").write_text("")
    (Path(bench) / "_helper.py").write_text("DELAY = 0.001\n")
    (Path(bench) / "bench_rel.py").write_text(textwrap.dedent('''
        import time
        from ._helper import DELAY

        class Rel:
            calls = 0

            def track_ms(self, n):
                Rel.calls += 1
                t0 = time.perf_counter()
                time.sleep(1.0 if Rel.calls == 1 else DELAY)  # the first call compiles: not what a sample costs
                return {"samples": [(time.perf_counter() - t0) * 1e3] * 3}
    '''))
    side = (bench, env, cwd)
    got = paired.sample_point("bench_rel.Rel.track_ms(1)", {"base": side, "head": side}, SPEC)
    assert got.error is None and got.skipped is None and len(got.pairs) >= SPEC.block
    (Path(bench) / "bench_broken.py").write_text("import no_such_dependency_xyz\n\nclass B:\n    def time_x(self):\n        pass\n")
    broken = paired.sample_point("bench_broken.B.time_x", {"base": side, "head": side}, SPEC)
    assert broken.error and "no_such_dependency_xyz" in broken.error  # named, not "no module of ..."
