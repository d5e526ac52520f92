"""The gate's decisions on synthetic points: directions, tolerances, failures, coverage, significance."""

from __future__ import annotations

import json
import math

import pytest

from rlperf.gate.config import GateConfig, Rule
from rlperf.gate.exitcodes import GateExit, worst
from rlperf.gate.meta import higher_is_better, within_tolerance
from rlperf.gate.report import to_json, to_markdown
from rlperf.gate.results import Point, pair_envs
from rlperf.gate.verdict import Policy, Verdict, assess, judge, judge_point

LOW = Policy("lower", 1.10, None, "default")
HIGH = Policy("higher", 1.10, None, "benchmark")
PARITY = Policy("tolerance", 1.10, 1e-5, "benchmark")


def pt(value, samples=None, *, version="v1", name="b.S.time_x", env="env"):
    return Point(key=name.split("(")[0], name=name, value=value, stats=None, samples=samples, version=version,
                 env=env)


def spread(center, n=10):
    return [center * (1 + 0.001 * i) for i in range(n)]


def status(base, head, policy=LOW):
    return judge_point(base, head, policy, {}, 0.002).status


def test_slower_and_significant_is_a_regression():
    f = judge_point(pt(1.0, spread(1.0)), pt(1.3, spread(1.3)), LOW, {"unit": "seconds"}, 0.002)
    assert (f.status, f.method, f.exit_code) == ("regression", "mann-whitney", GateExit.REGRESSION)
    assert f.ratio == pytest.approx(1.3, rel=1e-3)


def test_over_the_factor_but_not_significant_is_noise():
    base, head = [1.0, 1.5, 1.0, 1.5, 1.0, 1.5, 1.0, 1.5], [1.5, 1.0, 1.5, 1.0, 1.5, 1.0, 1.5, 1.6]
    assert status(pt(1.0, base), pt(1.5, head)) == "noise"


def test_faster_is_improved_and_within_the_factor_is_ok():
    assert status(pt(1.0, spread(1.0)), pt(0.7, spread(0.7))) == "improved"
    assert status(pt(1.0, spread(1.0)), pt(1.05, spread(1.05))) == "ok"


def test_higher_is_better_flags_a_fall_not_a_rise():
    assert status(pt(3.0), pt(2.0), HIGH) == "regression"
    assert status(pt(3.0), pt(4.0), HIGH) == "improved"


def test_parity_is_judged_against_the_absolute_tolerance_not_a_ratio():
    assert status(pt(1e-9), pt(9e-6), PARITY) == "ok"  # 9000x the base, still within 1e-5
    f = judge_point(pt(0.0), pt(2e-5), PARITY, {}, 0.002)
    assert (f.status, f.exit_code) == ("parity", GateExit.REGRESSION)


def test_without_enough_samples_the_factor_alone_decides():
    f = judge_point(pt(1.0, [1.0, 1.01]), pt(1.3, [1.3, 1.31]), LOW, {}, 0.002)
    assert (f.status, f.method) == ("regression", "factor-only")
    assert "2+2" in f.detail


def test_significance_reuses_asv_rules():
    assert assess(spread(1.0, 6), spread(2.0, 6), None, None).method == "mann-whitney"
    assert assess(spread(1.0, 5), spread(2.0, 5), None, None).method == "factor-only"
    ci = assess(None, None, {"ci_99_a": 1.0, "ci_99_b": 1.1}, {"ci_99_a": 1.5, "ci_99_b": 1.6})
    assert (ci.method, ci.significant) == ("ci99", True)


def test_failures_and_coverage():
    assert status(pt(1.0), pt(None)) == "failed"
    assert status(None, pt(None)) == "failed"  # a new benchmark that fails
    assert status(pt(None), pt(None)) == "still-failing"
    assert status(pt(1.0), pt(math.nan)) == "skipped-on-head"
    assert status(pt(1.0), None) == "missing-on-head"
    assert status(pt(math.nan), pt(math.nan)) == "not-measured"
    assert status(None, pt(1.0)) == "new"


def test_a_changed_benchmark_blocks_with_its_own_code_unless_accepted():
    base, head = pt(1.0, spread(1.0)), pt(2.0, spread(2.0), version="v2")
    f = judge_point(base, head, LOW, {}, 0.002)
    assert (f.status, f.exit_code) == ("changed", GateExit.CHANGED_BENCHMARK)
    assert "--accept-changed" in f.detail
    f = judge_point(base, head, LOW, {}, 0.002, accept_changed=("b.S.time_*",))
    assert (f.status, f.exit_code) == ("changed-accepted", GateExit.OK)
    assert "'b.S.time_*'" in f.detail
    assert judge_point(base, head, LOW, {}, 0.002, accept_changed=("other",)).status == "changed"


def test_interleaved_passes_are_judged_on_the_median_of_per_pass_ratios():
    # one slow pass on head (x1.6) does not make a regression; the median (x1.02) decides
    f = judge_point(pt(1.0), pt(1.0), LOW, {}, 0.002, pass_values=[(1.0, 1.02), (1.0, 1.6), (1.0, 1.01)])
    assert (f.status, f.method) == ("ok", "median-of-3") and f.ratio == pytest.approx(1.02)
    f = judge_point(pt(1.0), pt(1.0), LOW, {}, 0.002, pass_values=[(1.0, 1.2), (1.1, 1.3), (1.0, 1.0)])
    assert f.status == "regression" and f.ratio == pytest.approx(1.3 / 1.1)  # median of 1.2, 1.18, 1.0
    assert f.base == pytest.approx(1.0) and f.head == pytest.approx(1.2)
    f = judge_point(pt(2.0), pt(2.0), HIGH, {}, 0.002, pass_values=[(2.0, 1.0), (2.0, 1.0), (2.0, 2.0)])
    assert f.status == "regression" and f.ratio == pytest.approx(2.0)


def test_a_pass_no_ratio_can_judge_makes_the_point_unjudgeable_not_a_median():
    """One pass across a sign change (or with a lone zero) would feed the median a ratio <= 0 or inf."""
    track = dict(name="b.S.track_ms")
    for bad in [(1.0, -0.2), (0.0, 1.0)]:
        f = judge_point(pt(1.0, **track), pt(1.0, **track), LOW, {}, 0.002,
                        pass_values=[(1.0, 1.0), bad, (1.0, 1.01)])
        assert (f.status, f.exit_code, f.ratio) == ("unjudgeable", GateExit.INFRASTRUCTURE, None)
    f = judge_point(pt(0.0, **track), pt(0.0, **track), HIGH, {}, 0.002, pass_values=[(0.0, 0.0)] * 3)
    assert (f.status, f.ratio) == ("ok", 1.0)  # a metric that stays at 0 is unchanged
    assert status(pt(0.0, **track), pt(0.0, **track)) == "ok"


def test_exit_code_six_sits_between_coverage_loss_and_regression():
    assert worst([GateExit.CHANGED_BENCHMARK, GateExit.REGRESSION]) == GateExit.CHANGED_BENCHMARK
    assert worst([GateExit.CHANGED_BENCHMARK, GateExit.COVERAGE_LOSS]) == GateExit.COVERAGE_LOSS


def test_exit_code_precedence():
    assert worst([GateExit.REGRESSION, GateExit.COVERAGE_LOSS]) == GateExit.COVERAGE_LOSS
    assert worst([GateExit.COVERAGE_LOSS, GateExit.BENCHMARK_FAILURE]) == GateExit.BENCHMARK_FAILURE
    assert worst([]) == GateExit.OK


def test_judge_reads_direction_from_benchmark_metadata_then_rules():
    base = {("env", "b.S.track_speedup"): pt(3.0, name="b.S.track_speedup"),
            ("env", "b.S.track_diff"): pt(0.0, name="b.S.track_diff"),
            ("env", "b.S.time_x"): pt(1.0, name="b.S.time_x")}
    head = {("env", "b.S.track_speedup"): pt(2.0, name="b.S.track_speedup"),
            ("env", "b.S.track_diff"): pt(1e-3, name="b.S.track_diff"),
            ("env", "b.S.time_x"): pt(1.2, name="b.S.time_x")}
    config = GateConfig(rules=(Rule("b.S.track_diff", tolerance=1e-2), Rule("b.S.time_*", factor=1.5)))
    by = {f.name: f for f in judge(base, head, config, {"b.S.track_speedup": {"direction": "higher"}})}
    assert by["b.S.track_speedup"].status == "regression"
    assert by["b.S.track_diff"].status == "ok"
    assert by["b.S.time_x"].status == "ok" and by["b.S.time_x"].factor == 1.5


def test_environments_pair_by_python_identity_not_by_name():
    same = {"python": "3.11", "numba": "0.68.1", "os": "Linux 6.1"}
    assert pair_envs({"py-a": same}, {"py-b": {**same, "os": "Linux 6.2"}}) == {"py-a": "py-b"}
    assert pair_envs({"py-a": same}, {"py-a": {**same, "numba": "0.60.0"}}) == {}
    # --python=same records the interpreter's path: two checkouts' venvs with the same packages pair
    base_venv = {**same, "python": "/runner/base/.venv/bin/python"}
    head_venv = {**same, "python": "/runner/head/.venv/bin/python"}
    assert pair_envs({"py-a": base_venv}, {"py-b": head_venv}) == {"py-a": "py-b"}
    assert pair_envs({"py-a": base_venv}, {"py-b": {**head_venv, "numba": "0.60.0"}}) == {}
    findings = judge({("py-a", "b.S.time_x"): pt(1.0, env="py-a")},
                     {("py-b", "b.S.time_x"): pt(1.0, env="py-b")}, GateConfig(), {}, env_map={"py-a": "py-b"})
    assert [(f.name, f.status) for f in findings] == [("b.S.time_x", "ok")]
    # an unpaired head env of the same name is never joined to base's
    findings = judge({("py-a", "b.S.time_x"): pt(1.0, env="py-a")},
                     {("py-a", "b.S.time_x"): pt(1.0, env="py-a")}, GateConfig(), {}, env_map={})
    assert sorted(f.status for f in findings) == ["missing-on-head", "new"]


def test_meta_decorators_set_the_attributes_asv_exports():
    @higher_is_better
    def track_a():
        pass

    @within_tolerance(1e-6)
    def track_b():
        pass

    assert track_a.direction == "higher"
    assert (track_b.direction, track_b.tolerance) == ("tolerance", 1e-6)
    with pytest.raises(ValueError):
        within_tolerance(-1)


def test_report_is_strict_json_and_markdown_leads_with_what_blocks():
    findings = [judge_point(pt(1.0), pt(1.0, name="b.S.time_ok"), LOW, {}, 0.002),
                judge_point(pt(1.0), pt(5.0), LOW, {}, 0.002),
                judge_point(pt(1.0), pt(None, name="b.S.time_fail"), LOW, {}, 0.002),
                judge_point(pt(1.0, spread(1.0)), pt(0.5, spread(0.5), name="b.S.time_fast"), LOW, {}, 0.002)]
    findings += [judge_point(pt(math.nan), pt(math.nan, name=f"b.S.time_gpu({i})"), LOW, {}, 0.002)
                 for i in range(50)]
    v = Verdict(base="a" * 40, head="b" * 40, machine="m", factor=1.1, findings=findings)
    data = json.loads(to_json(v))
    assert data["exit_code"] == 3 and data["verdict"] == "benchmark_failure"
    assert data["counts"]["not-measured"] == 50
    md = to_markdown(v)
    assert md.index("| 🔴 regression") < md.index("| 💥 failed") < md.index("| 🟢 improved")
    assert md.index("| 🟢 improved") < md.index("1 unchanged point(s)")
    assert "time_gpu" not in md and "not-measured" not in md


def test_the_comment_tables_are_aligned_and_a_pipe_in_a_cell_stays_in_its_column():
    """The tables come from report.tables (tabulate): numbers right-aligned, and the parity detail
    `|head| > tol` escaped, where a hand-built row split it into extra columns."""
    import re

    parity = Policy("tolerance", 1.10, 1e-6, "default")
    findings = [judge_point(pt(1.0), pt(5.0), LOW, {}, 0.002),
                judge_point(pt(0.0), pt(2e-6, name="b.S.track_parity"), parity, {}, 0.002)]
    md = to_markdown(Verdict(base="a" * 40, head="b" * 40, machine="m", factor=1.1, findings=findings))
    table = [line for line in md.splitlines() if line.startswith("|")]
    cells = [len(re.split(r"(?<!\\)\|", line)) for line in table]
    assert len(table) == 4 and len(set(cells)) == 1  # header, separator, two rows: one column count
    assert all(c.strip().endswith(":") for c in table[1].split("|")[3:6])  # base, head, worse× right-aligned
    assert r"\|head\| > 1e-06" in md


def test_a_clean_pr_comment_fits_on_a_screen():
    findings = [judge_point(pt(1.0), pt(1.01, name=f"b.S.time_{i}"), LOW, {}, 0.002) for i in range(200)]
    findings += [judge_point(pt(math.nan), pt(math.nan, name=f"b.S.time_gpu({i})"), LOW, {}, 0.002)
                 for i in range(500)]
    md = to_markdown(Verdict(base="a" * 40, head="b" * 40, machine="m", factor=1.1, findings=findings))
    visible = md.split("<details>")[0]
    assert len(visible.splitlines()) <= 15 and "exit 0" in visible and "ok 200" in visible


def test_a_per_parameter_tolerance_resolves_by_the_points_parameter_value():
    meta = {"b.P.track_diff": {"direction": "tolerance", "tolerance": {"walk": 1e-4, "probe": 1e-6}}}
    base = {("e", f"b.P.track_diff('{t}', 8)"): Point("b.P.track_diff", f"b.P.track_diff('{t}', 8)", 0.0, None,
                                                       None, "v", "e", params=(f"'{t}'", "8")) for t in ("walk", "probe")}
    head = {k: Point(p.key, p.name, 1e-5, None, None, "v", "e", params=p.params) for k, p in base.items()}
    by = {f.name: f for f in judge(base, head, GateConfig(), meta)}
    assert by["b.P.track_diff('walk', 8)"].status == "ok"
    assert by["b.P.track_diff('probe', 8)"].status == "parity"
    assert within_tolerance({"walk": 1e-4, "gone": None})(lambda: None).tolerance == {"walk": 1e-4}
