"""`rlperf gate` end to end on synthetic asv results: every bad input and every verdict has its exit code,
and a usage error or a crash leaves no output file behind."""

from __future__ import annotations

import json
import math

import pytest

from tests.gate_fixtures import MACHINE, bench, git_repo, spread, write_benchmarks_json, write_results
from rlperf.asvtools import fingerprint
from rlperf.cli import main
from rlperf.gate import flow
from rlperf.gate.exitcodes import GateExit, SuiteImportError


@pytest.fixture
def setup(tmp_path):
    repo, base, head = git_repo(tmp_path / "repo")
    results = tmp_path / "results"
    out = tmp_path / "out"
    config = tmp_path / "gate.toml"
    config.write_text("[gate]\nfactor = 1.10\n")

    def gate(*extra, out_files=True):
        argv = ["gate", "--repo", str(repo), "--base", base, "--head", head, "--no-run", "--machine", MACHINE,
                "--results-dir", str(results), "--config", str(config), *extra]
        if out_files:
            argv += ["--out-json", str(out / "v.json"), "--out-md", str(out / "v.md")]
        return main(argv)

    def verdict():
        return json.loads((out / "v.json").read_text())

    return {"base": base, "head": head, "results": results, "out": out, "config": config, "gate": gate,
            "verdict": verdict}


def store(s, base: dict, head: dict, **kw):
    write_results(s["results"], s["base"], base, **kw.get("base_kw", {}))
    write_results(s["results"], s["head"], head, **kw.get("head_kw", {}))


def same_pair(s, **kw):
    x = {"b.S.time_x": bench(1.0, samples=spread(1.0))}
    store(s, x, x, **kw)


def no_outputs(s) -> bool:
    return not s["out"].exists() or not any(s["out"].iterdir())


def test_identical_results_exit_zero_and_write_both_outputs(setup):
    same_pair(setup)
    assert setup["gate"]() == GateExit.OK
    assert setup["verdict"]()["exit_code"] == 0
    assert "exit 0" in (setup["out"] / "v.md").read_text()
    assert [p.name for p in setup["out"].iterdir()] and not list(setup["out"].glob(".*"))  # no temp files


def test_non_numeric_result_data_is_an_infrastructure_error_naming_file_and_key(setup):
    store(setup, {"b.S.time_x": bench("fast")}, {"b.S.time_x": bench(1.0)})
    assert setup["gate"]() == GateExit.INFRASTRUCTURE
    error = setup["verdict"]()["errors"][0]
    assert "b.S.time_x" in error and setup["base"][:8] in error and "non-numeric" in error


def test_non_numeric_samples_are_an_infrastructure_error(setup):
    store(setup, {"b.S.time_x": bench(1.0, samples=[1.0, "x"])}, {"b.S.time_x": bench(1.0)})
    assert setup["gate"]() == GateExit.INFRASTRUCTURE
    assert "samples" in setup["verdict"]()["errors"][0]


def test_an_unexpected_exception_exits_5_with_the_traceback_and_no_output(setup, monkeypatch, capsys):
    same_pair(setup)

    def boom(*args, **kwargs):
        raise RuntimeError("judge exploded")

    monkeypatch.setattr(flow, "judge", boom)
    assert setup["gate"]() == GateExit.INFRASTRUCTURE
    err = capsys.readouterr().err
    assert "Traceback" in err and "judge exploded" in err and "exit 5" in err
    assert no_outputs(setup)


def test_bench_restricts_the_compared_points_and_the_coverage_check(setup):
    both = {"b.Env.time_x": bench(1.0, samples=spread(1.0))}
    store(setup, {**both, "b.Replay.time_y": bench(2.0, samples=spread(2.0))}, both)
    assert setup["gate"]() == GateExit.COVERAGE_LOSS
    assert setup["gate"]("--bench", "^b\\.Env") == GateExit.OK
    assert [f["name"] for f in setup["verdict"]()["findings"]] == ["b.Env.time_x"]
    assert setup["gate"]("--bench", "^nothing") == GateExit.INFRASTRUCTURE
    assert "selects none" in setup["verdict"]()["errors"][0]


def test_a_bad_bench_regex_is_a_usage_error(setup):
    same_pair(setup)
    assert setup["gate"]("--bench", "(") == GateExit.USAGE
    assert no_outputs(setup)


def test_environments_of_different_python_identity_are_not_compared(setup):
    same_pair(setup, head_kw={"env": "existing-py-other", "python": {"numba": "0.60.0"}})
    assert setup["gate"]() == GateExit.INFRASTRUCTURE
    assert "numba: base '0.68.1', head '0.60.0'" in setup["verdict"]()["errors"][0]


def test_environments_of_one_python_identity_pair_across_names(setup):
    same_pair(setup, head_kw={"env": "existing-py-elsewhere"})
    assert setup["gate"]() == GateExit.OK
    assert any("paired by Python identity" in n for n in setup["verdict"]()["notes"])


def test_a_changed_benchmark_version_fails_with_exit_6_until_accepted(setup):
    store(setup, {"b.S.time_x": bench(1.0, samples=spread(1.0))},
          {"b.S.time_x": bench(2.0, samples=spread(2.0), version="v2")})
    assert setup["gate"]() == GateExit.CHANGED_BENCHMARK
    assert setup["verdict"]()["findings"][0]["status"] == "changed"
    assert setup["gate"]("--accept-changed", "b.S.time_*") == GateExit.OK
    assert "--accept-changed" in (setup["out"] / "v.md").read_text()
    assert setup["verdict"]()["accepted_changed"] == ["b.S.time_*"]


@pytest.mark.parametrize("factor", ["nan", "inf", "-inf", "0.9", "1.0", "1"])
def test_factor_must_be_finite_and_above_one(setup, factor, capsys):
    same_pair(setup)
    assert setup["gate"](f"--factor={factor}") == GateExit.USAGE
    assert "finite number > 1" in capsys.readouterr().err
    assert no_outputs(setup)


@pytest.mark.parametrize("text", ["[gate]\nfactor = nan\n", "[gate]\nfactor = inf\n", "[gate]\nfactor = 0.9\n",
                                  '[gate]\nfactor = "1.1"\n', "[[rule]]\nmatch = 'b.*'\nfactor = inf\n",
                                  "[gate]\np_threshold = nan\n", "[gate]\npasses = 0\n"])
def test_bad_gate_toml_values_are_usage_errors(setup, text):
    same_pair(setup)
    setup["config"].write_text(text)
    assert setup["gate"]() == GateExit.USAGE
    assert no_outputs(setup)


def test_output_paths_are_checked_before_anything_is_compared(setup, tmp_path, monkeypatch):
    same_pair(setup)
    monkeypatch.setattr(flow, "gate", lambda *a, **k: pytest.fail("measured before checking outputs"))
    (tmp_path / "afile").write_text("x")
    base = ["gate", "--repo", str(tmp_path / "repo"), "--base", setup["base"], "--no-run", "--machine", MACHINE,
            "--results-dir", str(setup["results"])]
    assert main(base + ["--out-json", str(tmp_path / "afile" / "v.json")]) == GateExit.USAGE
    assert main(base + ["--out-md", str(tmp_path)]) == GateExit.USAGE
    assert (tmp_path / "afile").read_text() == "x"


def test_an_output_where_nothing_can_be_created_is_a_usage_error(setup, tmp_path, monkeypatch):
    """os.access says yes to root under /proc, where no file can be created: the probe file decides."""
    same_pair(setup)
    monkeypatch.setattr(flow, "gate", lambda *a, **k: pytest.fail("measured before checking outputs"))
    base = ["gate", "--repo", str(tmp_path / "repo"), "--base", setup["base"], "--no-run", "--machine", MACHINE,
            "--results-dir", str(setup["results"])]
    assert main(base + ["--out-json", "/proc/rlperf-gate-test/v.json"]) == GateExit.USAGE
    assert main(base + ["--out-md", "/proc/v.md"]) == GateExit.USAGE


def test_two_result_sets_that_differ_only_by_host_are_refused(setup):
    """The real case: two leases of one host name, only the kernel string differed, 45 false 'improvements'."""
    base = {f"b.S.time_{i}": bench(1.0, samples=spread(1.0)) for i in range(45)}
    head = {f"b.S.time_{i}": bench(0.5, samples=spread(0.5)) for i in range(45)}
    store(setup, base, head, head_kw={"host": {"os": "Linux 6.8.0-49-generic"}})
    assert setup["gate"]() == GateExit.INFRASTRUCTURE
    error = setup["verdict"]()["errors"][0]
    assert "different hosts" in error and "os: base 'Linux 6.18.44', head 'Linux 6.8.0-49-generic'" in error
    assert setup["verdict"]()["findings"] == []
    assert setup["gate"]("--allow-host-change") == GateExit.OK
    assert "HOST CHANGED" in (setup["out"] / "v.md").read_text()
    assert setup["verdict"]()["counts"] == {"improved": 45}


@pytest.mark.parametrize("base_flags, head_flags, code", [
    ("aaaa", "bbbb", GateExit.INFRASTRUCTURE),  # another CPU under the same model string: refused
    ("unrecorded", "bbbb", GateExit.OK),  # stored before the facet existed (scripts/stamp_host_facet.py)
    (None, "bbbb", GateExit.OK),  # absent: not known either
])
def test_the_cpu_flags_facet_refuses_only_when_both_sides_recorded_it(setup, base_flags, head_flags, code):
    base = {"b.S.time_x": bench(1.0, samples=spread(1.0))}
    store(setup, base, base, base_kw={"host": {"cpu_flags": base_flags}} if base_flags else {},
          head_kw={"host": {"cpu_flags": head_flags}})
    assert setup["gate"]() == code
    if code:
        assert "cpu_flags: base 'aaaa', head 'bbbb'" in setup["verdict"]()["errors"][0]
    else:
        assert "cpu_flags unrecorded on one side" in setup["verdict"]()["host"]


def _fp(canary: float, flags: str = "abc") -> dict:
    q = {"best": canary * 0.99, "median": canary, "min": canary * 0.99, "max": canary * 1.01, "samples": [canary]}
    return {"schema": fingerprint.SCHEMA, "static": {"cpu_flags_sha256": flags},
            "measured": {"cpu_canary_s": q}}


@pytest.mark.parametrize("head_fp, code, warned", [(_fp(0.20), GateExit.OK, False), (_fp(0.28), GateExit.OK, False),
                                                   (_fp(0.50), GateExit.OK, True),
                                                   (_fp(0.20, flags="xyz"), GateExit.INFRASTRUCTURE, False)])
def test_fingerprints_refuse_on_static_parts_and_warn_on_measured_ones(setup, head_fp, code, warned):
    same_pair(setup)
    fingerprint.store(str(setup["results"]), MACHINE, setup["base"], _fp(0.20))
    fingerprint.store(str(setup["results"]), MACHINE, setup["head"], head_fp)
    assert setup["gate"]() == code
    if code:
        assert "different hosts" in setup["verdict"]()["errors"][0]
    assert ("WARNING" in setup["verdict"]()["host"]) == warned


def test_fingerprint_sidecars_are_not_seen_by_asv_as_results(setup):
    from asv.results import iter_results_paths

    same_pair(setup)
    fingerprint.store(str(setup["results"]), MACHINE, setup["base"], _fp(0.2))
    assert all(not f.endswith(fingerprint.SUFFIX) for _, f, _ in iter_results_paths(str(setup["results"])))


@pytest.mark.parametrize("side, code", [("head", GateExit.BENCHMARK_FAILURE), ("base", GateExit.INFRASTRUCTURE)])
def test_a_suite_that_does_not_import_blames_head_3_and_base_5(setup, monkeypatch, side, code):
    def broken(where, base, head, passes, echo, keep=None, **_paired):
        raise SuiteImportError("the benchmark suite does not import", {"base": base, "head": head}[side])

    monkeypatch.setattr(flow, "measure_interleaved", broken)
    argv = ["gate", "--repo", str(setup["results"].parent / "repo"), "--base", setup["base"], "--head",
            setup["head"], "--run", "--machine", MACHINE, "--results-dir", str(setup["results"]),
            "--config", str(setup["config"]), "--out-json", str(setup["out"] / "v.json")]
    assert main(argv) == code
    v = setup["verdict"]()
    assert (v["failures"] if side == "head" else v["errors"])


def test_passes_without_run_is_a_usage_error(setup):
    same_pair(setup)
    assert setup["gate"]("--passes", "3") == GateExit.USAGE


def test_direction_metadata_comes_from_benchmarks_json(setup):
    store(setup, {"b.S.track_speedup": bench(3.0)}, {"b.S.track_speedup": bench(2.0)})
    write_benchmarks_json(setup["results"], {"b.S.track_speedup": {"direction": "higher", "unit": "x"}})
    assert setup["gate"]() == GateExit.REGRESSION
    assert not math.isnan(setup["verdict"]()["findings"][0]["ratio"])


@pytest.mark.parametrize("extra", [["--bisect", "nodots"], ["--bisect", "a..b", "--backfill", "a..b"]])
def test_bisect_needs_a_range_and_no_other_mode(setup, extra):
    argv = ["gate", "--repo", str(setup["results"].parent / "repo"), "--machine", MACHINE, *extra]
    assert main(argv) == GateExit.USAGE


def test_bisect_on_stored_results_names_the_first_regressed_commit(tmp_path, capsys):
    import subprocess

    repo, c1, c2 = git_repo(tmp_path / "repo")
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q",
                    "--allow-empty", "-m", "c3"], check=True)
    c3 = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    results = tmp_path / "results"
    for sha, value in ((c1, 1.0), (c2, 2.0), (c3, 2.0)):
        write_results(results, sha, {"b.S.time_x": bench(value, samples=spread(value)),
                                     "b.S.time_y": bench(1.0, samples=spread(1.0))})
    argv = ["gate", "--repo", str(repo), "--bisect", f"{c1}..{c3}", "--no-run", "--machine", MACHINE,
            "--results-dir", str(results)]
    assert main(argv) == GateExit.REGRESSION
    assert f"first commit that regressed: {c2}" in capsys.readouterr().out


# --- Profiles, --quick and what the verdict says about them ---------------------------------------------

PROFILES = ("[gate]\nfactor = 1.10\n[profile.xeon]\nbench = '^b\\.Env'\npasses = 5\npaired_seconds = 9\n"
            "[profile.gpu]\nbench = '^b\\.Replay'\npasses = 5\n")


def _cuda(monkeypatch, visible: bool):
    from rlperf.measure import machine

    monkeypatch.setattr(machine, "machine_identity", lambda: {"gpu_count": int(visible)})


@pytest.mark.parametrize("cuda, profile, compared", [(False, "xeon", ["b.Env.time_x"]),
                                                     (True, "gpu", ["b.Replay.time_y"])])
def test_a_comparison_uses_the_default_profile_of_this_host_and_says_so(setup, monkeypatch, cuda, profile, compared):
    setup["config"].write_text(PROFILES)
    _cuda(monkeypatch, cuda)
    x, y = bench(1.0, samples=spread(1.0)), bench(2.0, samples=spread(2.0))
    store(setup, {"b.Env.time_x": x, "b.Replay.time_y": y}, {"b.Env.time_x": x, "b.Replay.time_y": y})
    assert setup["gate"]() == GateExit.OK
    v = setup["verdict"]()
    assert [f["name"] for f in v["findings"]] == compared  # the profile's bench selection
    assert v["profile"] == profile and v["quick"] is False
    assert v["mode"].startswith(f"profile {profile} of {setup['config']} (default here: ")
    md = (setup["out"] / "v.md").read_text()
    assert f"--profile {profile}" in md  # the reproduce line names it, whichever way it was chosen


def test_an_explicit_profile_and_flags_override_and_the_mode_names_them(setup, monkeypatch):
    setup["config"].write_text(PROFILES)
    monkeypatch.setattr("rlperf.measure.machine.machine_identity", lambda: pytest.fail("a named profile asks no host"))
    x = bench(1.0, samples=spread(1.0))
    store(setup, {"b.Env.time_x": x, "b.Replay.time_y": x}, {"b.Env.time_x": x, "b.Replay.time_y": x})
    assert setup["gate"]("--profile", "gpu", "--bench", "^b\\.", "--factor", "1.2") == GateExit.OK
    v = setup["verdict"]()
    assert v["profile"] == "gpu" and len(v["findings"]) == 2  # --bench wins over the profile's
    assert "profile gpu of" in v["mode"] and "(--profile)" in v["mode"]
    assert "overridden on the command line: --factor 1.2, --bench '^b\\.'" in v["mode"]


def test_an_unknown_profile_is_a_usage_error_naming_the_valid_ones(setup, capsys):
    setup["config"].write_text(PROFILES)
    same_pair(setup)
    assert setup["gate"]("--profile", "h200") == GateExit.USAGE
    assert "valid: gpu, xeon" in capsys.readouterr().err
    assert no_outputs(setup)


def test_quick_needs_run(setup, capsys):
    same_pair(setup)
    assert setup["gate"]("--quick") == GateExit.USAGE
    assert "--quick applies to --run" in capsys.readouterr().err


def test_a_quick_run_measures_one_pass_unpaired_and_says_loudly_it_is_not_ci(setup, monkeypatch):
    from rlperf.gate.verdict import Verdict

    setup["config"].write_text(PROFILES)
    _cuda(monkeypatch, False)
    seen = {}

    def fake_gate(where, base, head, config, **kw):
        seen.update(config=config, where=where, run=kw["run"])
        return Verdict(base=base, head=head, machine=where.machine, factor=config.factor,
                       mode=f"interleaved: {config.passes} pass(es)")

    monkeypatch.setattr(flow, "gate", fake_gate)
    argv = ["gate", "--repo", str(setup["results"].parent / "repo"), "--base", setup["base"], "--head", setup["head"],
            "--run", "--quick", "--machine", MACHINE, "--results-dir", str(setup["results"]),
            "--config", str(setup["config"]), "--out-json", str(setup["out"] / "v.json"),
            "--out-md", str(setup["out"] / "v.md")]
    main(argv)
    config = seen["config"]
    assert (config.passes, config.paired_seconds, config.profile, seen["where"].bench) == (1, 0.0, "xeon", "^b\\.Env")
    v, md = setup["verdict"](), (setup["out"] / "v.md").read_text()
    assert v["quick"] is True
    assert v["mode"].startswith("QUICK LOOK (--quick: 1 pass, no paired sampling), NOT what CI runs")
    headline, _, note = md.splitlines()[:3]
    assert "QUICK LOOK, not CI's settings" in headline and "This is NOT what CI runs" in note
    assert "--run --profile xeon --quick" in md
    main(argv[:-4] + ["--passes", "3"])  # an explicit flag still wins, and is named
    assert seen["config"].passes == 3 and seen["config"].overrides == ("--passes 3",)


def test_a_run_without_quick_carries_no_quick_label():
    from rlperf.gate.report import to_markdown
    from rlperf.gate.verdict import Verdict

    md = to_markdown(Verdict(base="a" * 40, head="b" * 40, machine=MACHINE, factor=1.1, mode="interleaved"))
    assert "quick" not in md.lower()


def test_backfill_applies_only_a_named_profile(setup, monkeypatch):
    """A backfill measures every suite unless a profile is named (gate.yml's base job names its leg's)."""
    from rlperf.cli import build_parser
    from rlperf.commands.gate import _validate

    setup["config"].write_text(PROFILES)
    monkeypatch.setattr("rlperf.measure.machine.machine_identity", lambda: pytest.fail("--backfill asks no default"))

    def config(*extra):
        argv = ["gate", "--backfill", "a..b", "--config", str(setup["config"]), *extra]
        return _validate(build_parser(argv).parse_args(argv))

    assert config().bench is None and config().profile is None
    assert config("--profile", "gpu").bench == "^b\\.Replay"


def test_make_gate_runs_interleaved_under_the_default_profile():
    """`make gate` is the CI leg of this machine: --run (not the stored-results mode), no repeated settings."""
    import shutil
    import subprocess
    from pathlib import Path

    if shutil.which("make") is None:
        pytest.skip("needs make")
    root = Path(__file__).resolve().parents[2]

    def dry(*extra):
        out = subprocess.run(["make", "-n", "-s", "-C", str(root), "gate", "MACHINE=m", *extra],
                             capture_output=True, text=True, check=True).stdout.replace("\\\n", " ")
        return next(line for line in out.splitlines() if "rlperf gate" in line).split()

    plain = dry("PROFILE=", "QUICK=")
    assert "--run" in plain and not {"--passes", "--paired", "--profile", "--quick", "--bench"} & set(plain)
    picked = dry("PROFILE=gpu", "QUICK=1")
    assert '"gpu"' in picked and picked[picked.index('"gpu"') - 1] == "--profile" and "--quick" in picked
