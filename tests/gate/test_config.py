"""gate.toml: the repository's file is valid, and bad files are usage errors that name the problem."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlperf.errors import UsageError
from rlperf.gate.config import default_profile, load_config, settings_label
from rlperf.gate.verdict import policy_for

ROOT = Path(__file__).resolve().parents[2]


def test_repository_gate_toml_loads():
    config = load_config(str(ROOT / "gate.toml"))
    assert config.factor >= 1.0 and config.rules


@pytest.mark.parametrize("key, factor", [("bench_replay.ReplayGpuSample.track_ms(20, 'gpu-compact', 1)", 1.25),
                                         ("bench_env.EnvFused.time_fused('probe', 8192, 1)", 1.10)])
def test_repository_replay_fallback_reaches_replay_points_only(key, factor):
    """Without a thresholds table the replay rule's fallback (gate.toml) reaches the parameterised asv keys;
    the bimodal gathers' hand-set 4.0 and 2.9 are gone (they are advisory from their measured noise instead,
    tests/gate/test_thresholds.py)."""
    config = load_config(str(ROOT / "gate.toml"))
    assert policy_for(config, key, key.split("(")[0], {}).factor == factor


def test_cli_factor_overrides_the_file_default_but_not_rules(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text('[gate]\nfactor = 1.2\n[[rule]]\nmatch = "a.*"\nfactor = 2.0\n')
    config = load_config(str(path), factor=1.5)
    assert config.factor == 1.5
    assert policy_for(config, "a.b", "a.b", {}).factor == 2.0
    assert policy_for(config, "c.d", "c.d", {}).factor == 1.5


def test_benchmark_attributes_win_over_rules(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text('[[rule]]\nmatch = "a.*"\ndirection = "higher"\n')
    config = load_config(str(path))
    assert policy_for(config, "a.b", "a.b", {}).direction == "higher"
    assert policy_for(config, "a.b", "a.b", {"direction": "lower"}).direction == "lower"
    assert policy_for(config, "a.b", "a.b", {"tolerance": 0.1}).direction == "tolerance"


@pytest.mark.parametrize("text, words", [
    ('[gate]\nfactor = 0.9\n', "factor"),
    ('[[rule]]\nmatch = "x"\ndirection = "up"\n', "direction"),
    ('[[rule]]\npattern = "x"\n', "match"),
    ('[gates]\n', "unknown keys"),
    ('[gate\n', "not valid TOML"),
])
def test_bad_config_is_a_usage_error(tmp_path, text, words):
    path = tmp_path / "g.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=words):
        load_config(str(path))


def test_missing_explicit_config_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        load_config(str(tmp_path / "absent.toml"))


# --- Profiles: what one CI leg measures and how ---------------------------------------------------------

PROFILES = """
[gate]
factor = 1.10
passes = 3
paired_restarts = 2
[profile.xeon]
bench = "."
passes = 5
paired_seconds = 9
paired_bench = '^bench_env\\.EnvFused\\.'
paired_restarts = 9
paired_confirm = 1
paired_screen = 0.6
[profile.gpu]
bench = '^bench_replay'
passes = 5
paired_seconds = 3
"""


def _profiles(tmp_path, text=PROFILES):
    path = tmp_path / "g.toml"
    path.write_text(text)
    return str(path)


def test_the_repository_profiles_hold_what_gate_yml_used_to_pass():
    """The settings the CI legs ran with before profiles (gate.yml's matrix): 5 passes, 9 s of pairs from 9
    worker pairs for the fused env kernels on Xeon; 3 s from 3 for the 2^20 GPU gathers; one confirming
    round at screen 0.6 on both; the GPU leg gates replay only."""
    xeon = load_config(str(ROOT / "gate.toml"), profile="xeon")
    gpu = load_config(str(ROOT / "gate.toml"), profile="gpu")
    assert (xeon.passes, xeon.paired_seconds, xeon.paired_restarts) == (5, 9.0, 9)
    assert (gpu.bench, gpu.passes, gpu.paired_seconds, gpu.paired_restarts) == ("^bench_replay", 5, 3.0, 3)
    assert (xeon.paired_confirm, xeon.paired_screen) == (gpu.paired_confirm, gpu.paired_screen) == (1, 0.6)
    assert re.search(xeon.paired_bench, "bench_env.EnvFused.time_fused")
    assert not re.search(xeon.paired_bench, "bench_env.EnvWalk.time_x")
    assert re.search(gpu.paired_bench, "bench_replay.ReplayGpuSample.track_ms(20, 'gpu-fused', 1)")
    assert not re.search(gpu.paired_bench, "bench_replay.ReplayGpuSample.track_ms(24, 'gpu-fused', 1)")
    assert not re.search(gpu.bench, "bench_env.EnvFused.time_fused")
    assert xeon.factor == gpu.factor and xeon.rules == gpu.rules  # a profile never changes how a number is judged


def test_a_profile_stacks_over_gate_and_under_the_command_line(tmp_path):
    path = _profiles(tmp_path)
    plain = load_config(path)  # no profile asked for, no default wanted (--backfill): [gate] alone
    assert (plain.profile, plain.passes, plain.paired_restarts, plain.bench) == (None, 3, 2, None)
    xeon = load_config(path, profile="xeon")
    assert (xeon.profile, xeon.profile_from) == ("xeon", "--profile")
    assert (xeon.passes, xeon.paired_restarts, xeon.bench) == (5, 9, ".")
    assert xeon.overrides == ()
    gpu = load_config(path, profile="gpu")
    assert (gpu.passes, gpu.paired_seconds, gpu.paired_restarts) == (5, 3.0, 2)  # unset in the profile: [gate]'s
    cli = load_config(path, profile="xeon", passes=7, bench="^x", paired_seconds=0.0, factor=1.2)
    assert (cli.passes, cli.bench, cli.paired_seconds, cli.paired_restarts, cli.factor) == (7, "^x", 0.0, 9, 1.2)
    assert cli.overrides == ("--factor 1.2", "--bench '^x'", "--passes 7", "--paired 0")


def test_quick_is_one_pass_without_pairs_and_explicit_flags_still_win(tmp_path):
    path = _profiles(tmp_path)
    quick = load_config(path, profile="xeon", quick=True)
    assert (quick.quick, quick.passes, quick.paired_seconds, quick.bench) == (True, 1, 0.0, ".")
    assert "QUICK LOOK" in settings_label(quick) and "NOT what CI runs" in settings_label(quick)
    short = load_config(path, profile="xeon", quick=True, paired_seconds=2.0)
    assert (short.passes, short.paired_seconds, short.overrides) == (1, 2.0, ("--paired 2",))
    assert "--paired 2" in settings_label(short)


def test_the_default_profile_is_the_leg_of_a_machine_like_this_one(tmp_path):
    path = _profiles(tmp_path)
    assert default_profile(True)[0] == "gpu" and default_profile(False)[0] == "xeon"
    for cuda, name in ((True, "gpu"), (False, "xeon")):
        config = load_config(path, default_profile=lambda cuda=cuda: default_profile(cuda))
        assert config.profile == name and "CUDA" in config.profile_from
        assert f"profile {name} of {path} (default here" in settings_label(config)
    named = load_config(path, profile="gpu", default_profile=lambda: pytest.fail("a named profile needs no default"))
    assert named.profile == "gpu"
    bare = _profiles(tmp_path, "[gate]\nfactor = 1.1\n")  # a file without profiles: its [gate] settings alone
    assert load_config(bare, default_profile=lambda: ("xeon", "x")).profile is None


@pytest.mark.parametrize("text, kwargs, words", [
    (PROFILES, {"profile": "h100"}, "'h100' is not a profile of .*; valid: gpu, xeon"),
    ("[gate]\nfactor = 1.1\n", {"profile": "xeon"}, "'xeon' is not a profile of .* defines none"),
    ("[profile.cpu]\npasses = 3\n", {"default_profile": lambda: ("xeon", "default here")},
     r"no \[profile.xeon\] for this host \(default here\); valid: cpu: pass --profile NAME"),
    ("[profile.xeon]\nfactor = 1.2\n", {}, r"\[profile.xeon\] unknown keys \['factor'\]; allowed: bench, passes, .*"
                                            "factors stay in"),
    ("[profile.xeon]\npasses = 0\n", {}, r"\[profile.xeon\] passes: passes must be a whole number"),
    ("[profile.xeon]\nbench = '('\n", {}, r"\[profile.xeon\] bench: '\(' is not a valid regular expression"),
    ("[profile.xeon]\npaired_screen = 2\n", {}, "paired_screen must be"),
    ('profile = "xeon"\n', {}, r"profiles are tables \[profile.NAME\]"),
    ("[profile]\npasses = 3\n", {}, r"profiles are tables \[profile.NAME\]"),
])
def test_bad_profiles_are_usage_errors_naming_the_valid_choices(tmp_path, text, kwargs, words):
    with pytest.raises(UsageError, match=words):
        load_config(_profiles(tmp_path, text), **kwargs)


def test_a_rule_can_mark_points_advisory_with_its_reason_never_blocking(tmp_path):
    """A family whose measured power is too low to gate on (docs/gate.md, Measured power) is advisory by
    rule: listed with the rule's reason, on passes and on pairs alike, never blocking."""
    from rlperf.gate.exitcodes import GateExit
    from rlperf.gate.results import Point
    from rlperf.gate.verdict import judge_point

    path = tmp_path / "gate.toml"
    path.write_text('[gate]\nfactor = 1.10\n\n[[rule]]\nmatch = "bench_noise.*"\n'
                    'advisory = "10 % caught in 40 % of 30 trials"\n')
    config = load_config(str(path))
    name = "bench_noise.NoiseGeneration.track_ms('counter-numba', 'uniform', 32768, 1)"
    policy = policy_for(config, "bench_noise.NoiseGeneration.track_ms", name, {})
    assert policy.advisory == "advisory by rule bench_noise.*: 10 % caught in 40 % of 30 trials"
    assert policy.advisory_paired
    point = lambda v: Point(key=name.split("(")[0], name=name, value=v, stats=None, samples=None,  # noqa: E731
                            version="1", env="e")
    for paired in (False, True):
        f = judge_point(point(1.0), point(2.0), policy, {"unit": "ms"}, 0.002, pass_values=[(1.0, 2.0)] * 5,
                        paired=paired)
        assert (f.status, f.exit_code) == ("advisory", GateExit.OK) and "would read regression" in f.detail
    other = policy_for(config, "bench_env.EnvFused.time_fused", "bench_env.EnvFused.time_fused('probe', 8192, 1)", {})
    assert other.advisory is None


@pytest.mark.parametrize("value", ['""', "1.5", "true"])
def test_a_rules_advisory_must_say_why(tmp_path, value):
    path = tmp_path / "gate.toml"
    path.write_text(f'[[rule]]\nmatch = "bench_noise.*"\nadvisory = {value}\n')
    with pytest.raises(UsageError, match="advisory must be a non-empty string"):
        load_config(str(path))


def test_the_xeon_leg_pairs_the_noise_point_its_power_was_measured_on_and_no_other_noise_point():
    """power-families/noise/: paired, a ~9 % step in the counter kernel was caught in every trial; by its
    passes at x1.10 it sits under the factor. Only the measured point is paired."""
    xeon = load_config(str(ROOT / "gate.toml"), profile="xeon")
    point = "bench_noise.NoiseGeneration.track_ms('counter-numba', 'uniform', 32768, 1)"
    assert re.search(xeon.paired_bench, point)
    for other in (point.replace("32768, 1", "32768, 2"), point.replace("uniform", "normal"),
                  point.replace("counter-numba", "numpy")):
        assert not re.search(xeon.paired_bench, other)


def test_the_xeon_leg_gates_every_point_but_those_that_can_skip_on_their_value():
    """Every point of the suite, less the in-kernel noise draws-only ratio: n/a by its value, it can skip on
    head where base measured it (exit 4 on a change of nothing). Its whole-step twin is gated. The other
    in-body skips left in are the device peaks, n/a on both commits of a box without CUDA."""
    from rlperf.asvtools.bench_plan import NEEDS_CUDA, points_of
    from rlperf.gate.power import null_sample

    xeon = load_config(str(ROOT / "gate.toml"), profile="xeon")
    benchmarks = null_sample.load_benchmarks(str(ROOT / "results" / "asv" / "benchmarks.json"))
    left_out = set()
    for name, b in benchmarks.items():
        selected = {bool(re.search(xeon.bench, p.name)) for p in points_of(b)}
        assert len(selected) == 1, name  # whole benchmarks in or out
        if not selected.pop():
            left_out.add(name)
        elif null_sample.skips_in_body(b):
            assert any(name == k or name.startswith(k + ".") for k in NEEDS_CUDA), name
    assert left_out == {f"bench_noise.{cls}.track_numpy_over_in_kernel_draws"
                        for cls in ("ProbeInKernelNoise", "MotionTrackingInKernelNoise")}
    assert re.search(xeon.bench, "bench_noise.MotionTrackingInKernelNoise.track_numpy_path_over_in_kernel(8192, 1)")


def test_the_replay_host_gather_is_advisory_by_its_measured_power_and_its_neighbours_are_not():
    config = load_config(str(ROOT / "gate.toml"), profile="xeon")
    name = "bench_replay.ReplayCpuSample.track_ms(20, 'host', 1)"
    policy = policy_for(config, "bench_replay.ReplayCpuSample.track_ms", name, {})
    assert policy.advisory and "power-families/replay-host" in policy.advisory and policy.factor == 1.25
    assert policy_for(config, "bench_replay.ReplayCpuSample.track_ms", name.replace("(20", "(24"), {}).advisory is None
