"""Parity that catches every term: coverage inputs reach every reward term and termination branch,
each term alone contributes for the same known share of envs in kernel and oracle, tolerances come
from the derived data file, and a 0.5% mutation of one term in the fused kernel fails parity."""

import dataclasses
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from rlperf.envs import parity, registry, tolerances
from rlperf.envs.motion_tracking import inputs as mt_inputs
from rlperf.envs.walk import inputs as walk_inputs

ROOT = Path(__file__).resolve().parents[2]
FULL = {"g1_walk_flat": "full_supported", "probe": "default", "g1_motion_tracking": "full_supported"}
N = 1000


@pytest.fixture(scope="module", params=sorted(FULL))
def task(request):
    w = registry.get(request.param)
    w.compile()
    return request.param, w, FULL[request.param]


def _shares(w, inputs):
    """Per term slot: (oracle share, kernel share, masks equal) with that term's scale alone."""
    out = {}
    for k, name in enumerate(parity.term_names(w)):
        alone = parity.term_alone(inputs, k)
        ref = w.reference(alone).reward
        got = w.fused_runner(alone, 1)().reward.copy()
        out[name] = (parity.active_share(ref), parity.active_share(got), np.array_equal(ref != 0, got != 0))
    return out


def test_every_term_alone_contributes_for_the_same_known_share_of_envs(task):
    name, w, profile = task
    inputs = parity.make_parity_inputs(w, N, profile, seed=3)
    assert np.all(parity.scale_vector(inputs) != 0), "the coverage profile must activate every slot"
    for term, (ref_share, got_share, same_rows) in _shares(w, inputs).items():
        assert ref_share > 0.0, f"{name}: {term} is zero for every env of the coverage inputs"
        assert got_share == ref_share and same_rows, (name, term, ref_share, got_share)


def test_close_feet_and_joint_limit_reach_their_designed_shares(task):
    """The terms C5's timing inputs never activate: close feet (walk, probe) and joint limits (MT)."""
    name, w, profile = task
    shares = _shares(w, parity.make_parity_inputs(w, N, profile, seed=0))
    timing = w.make_inputs(N, profile, seed=0, noise_level=0.0)
    if name == "g1_motion_tracking":
        term, designed = "joint_limit", 1.0 / mt_inputs.JOINT_LIMIT_EVERY
    else:
        term, designed = "penalty_close_feet_xy", 1.0 / walk_inputs.CLOSE_FEET_EVERY
    assert shares[term][0] == pytest.approx(designed, abs=1.0 / N)
    k = parity.term_names(w).index(term)
    assert parity.active_share(w.reference(parity.term_alone(timing, k)).reward) == 0.0  # why this exists


def test_coverage_inputs_pass_parity_at_one_and_two_threads(task):
    name, w, profile = task
    inputs = parity.make_parity_inputs(w, 513, profile, seed=1)
    for threads in (1, 2):
        result = parity.check(w, profile, 513, threads, inputs=inputs)
        assert result.ok, (name, threads, result.failures)


def _terminated(w, inputs, threads=1):
    ref = w.reference(inputs).terminated
    got = w.fused_runner(inputs, threads)().terminated.copy()
    np.testing.assert_array_equal(got, ref)
    return ref


@pytest.mark.parametrize("profile", ["ppo_default", "sac_default"])
def test_walk_tilt_and_both_base_heights_terminate_in_kernel_and_oracle(profile):
    w = registry.get("g1_walk_flat")
    inputs = walk_inputs.make_parity_inputs(N, profile, seed=2)
    done = _terminated(w, inputs)
    rows = np.arange(N)
    forced = rows < int(N * walk_inputs.DONE_FRAC)
    tilted = rows % walk_inputs.TILT_EVERY == 3
    mid = rows % walk_inputs.MID_HEIGHT_EVERY == 7
    assert done[tilted].all() and done[forced & ~mid].all()
    assert done[mid & ~tilted].all() == (profile == "ppo_default")  # 0.45 is below 0.55 only
    assert not done[~(tilted | forced | mid)].any()


def test_motion_tracking_reaches_every_termination_branch_alone():
    w = registry.get("g1_motion_tracking")
    inputs = mt_inputs.make_parity_inputs(N, "full_supported", seed=4)
    rows = np.arange(N)
    lifted = rows < int(N * mt_inputs.FORCED_TERMINATION_FRACTION)
    flipped = (rows % mt_inputs.ORI_TERM_EVERY == 7) & ~lifted
    ee = (rows % mt_inputs.EE_TERM_EVERY == 11) & ~lifted
    contact = (rows % mt_inputs.CONTACT_EVERY == 4) & ~lifted
    done = _terminated(w, inputs)
    assert done[lifted].all() and done[flipped].all() and done[ee].all()
    prof = inputs.profile
    no_ori = _terminated(w, dataclasses.replace(inputs, profile=dataclasses.replace(prof, anchor_ori_threshold=2.0)))
    assert not no_ori[flipped].any() and no_ori[ee].all()  # the orientation branch is what fired
    with_contacts = _terminated(w, dataclasses.replace(
        inputs, profile=dataclasses.replace(prof, terminate_on_undesired_contacts=True)))
    assert with_contacts[contact].all() and with_contacts.sum() > done.sum()


def test_tolerances_are_read_from_the_derived_data_file_with_their_provenance():
    doc = tolerances.document()
    assert doc["seeds"] >= 1 and doc["numba"] and doc["numpy"] and doc["date_utc"] and doc["command"]
    for name in registry.TASKS:
        record = tolerances.record(name)["outputs"]
        tol = registry.get(name).tolerances
        for out in tolerances.OUTPUTS:
            assert getattr(tol, f"{out}_atol") == record[out]["atol"] == tolerances.tolerance_from(
                record[out]["worst_abs_diff"])
            assert getattr(tol, f"{out}_rtol") == record[out]["rtol"] == 0.0


def test_tolerance_rule_is_ten_times_the_worst_difference_rounded_up():
    assert tolerances.tolerance_from(2.384e-7) == pytest.approx(2.4e-6)
    assert tolerances.tolerance_from(5.96e-7) == pytest.approx(6.0e-6)
    assert tolerances.tolerance_from(1e-8) == pytest.approx(1.2e-6)  # below float32's step at 1.0
    assert tolerances.tolerance_from(0.0) == pytest.approx(10 * tolerances.RESOLUTION, rel=0.05)
    with pytest.raises(ValueError):
        tolerances.tolerance_from(float("nan"))


def test_a_missing_task_in_the_data_file_is_a_clear_error(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"schema": "rlperf.tolerances", "schema_version": 1, "tasks": {}}')
    with pytest.raises(RuntimeError, match="derive_tolerances"):
        tolerances.load("probe", path)


def _mutation_script():
    spec = importlib.util.spec_from_file_location("mutation_check", ROOT / "scripts" / "mutation_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_check"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def test_every_term_of_every_task_has_exactly_one_mutation_anchor():
    script = _mutation_script()
    for task_name, term in script.plan(list(script.TASKS), None):
        source = script.mutated_source(task_name, term)
        assert "1.005" in source, (task_name, term)


def test_a_missing_anchor_fails_loudly():
    script = _mutation_script()
    broken = dataclasses.replace(script.TASKS["probe"], anchor="weighted-scale")  # probe has no `w = scale[k]`
    script.TASKS["probe"] = broken
    with pytest.raises(script.AnchorError, match="penalty_close_feet_xy"):
        script.mutated_source("probe", "penalty_close_feet_xy")


@pytest.mark.slow
def test_a_half_percent_mutation_of_close_feet_in_the_walk_kernel_is_caught():
    """The term that used to survive every test; the full per-term sweep is the script itself."""
    outcome = _mutation_script().run_one("g1_walk_flat", "penalty_close_feet_xy")
    assert outcome.caught, outcome
    assert any("penalty_close_feet_xy" in f for f in outcome.failures)
