"""gate.toml: the repository's file is valid, and bad files are usage errors that name the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlperf.errors import UsageError
from rlperf.gate.config import load_config, policy_for

ROOT = Path(__file__).resolve().parents[1]


def test_repository_gate_toml_loads():
    config = load_config(str(ROOT / "gate.toml"))
    assert config.factor >= 1.0 and config.rules


@pytest.mark.parametrize("placement, factor", [("gpu-compact", 4.0), ("gpu-fused-bf16", 2.9), ("gpu-fused", 1.30)])
def test_repository_bands_of_the_bimodal_gpu_gathers_reach_their_points(placement, factor):
    """The measured-noise bands (gate.toml) must match the parameterised asv keys, and not their neighbours."""
    config = load_config(str(ROOT / "gate.toml"))
    key = f"bench_replay.ReplayGpuSample.track_ms(20, '{placement}', 1)"
    assert policy_for(config, key, "bench_replay.ReplayGpuSample.track_ms", {}).factor == factor


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
