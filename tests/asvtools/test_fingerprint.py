"""The host fingerprint: what it records, that it round-trips beside the results, and the CUDA part."""

from __future__ import annotations

import pytest

from rlperf.asvtools import fingerprint
from rlperf.gate.exitcodes import InfrastructureError


def test_static_facts_name_the_host():
    facts = fingerprint.static_facts()
    assert set(facts) == {"cpu", "cpu_flags_sha256", "kernel", "num_cpu", "ram_gib"}
    assert facts["num_cpu"] >= 1 and facts["ram_gib"] > 0 and len(facts["cpu_flags_sha256"]) == 16


def test_measured_facts_keep_their_repeats_so_their_noise_is_known():
    measured = fingerprint.measured_facts(cuda=False)
    assert set(measured) == {"cpu_canary_s", "host_copy_gbps"}
    canary = measured["cpu_canary_s"]
    assert len(canary["samples"]) == 5 and canary["best"] == canary["min"] > 0
    assert measured["host_copy_gbps"]["best"] == measured["host_copy_gbps"]["max"] > 0


def test_a_fingerprint_round_trips_beside_the_results(tmp_path):
    doc = {"schema": fingerprint.SCHEMA, "static": {"kernel": "k"}, "measured": {}}
    path = fingerprint.store(str(tmp_path), "m", "abcdef0123456789", doc)
    assert path.endswith("m/fingerprints/abcdef01.fingerprint")
    assert fingerprint.load(str(tmp_path), "m", "abcdef01") == doc
    assert fingerprint.load(str(tmp_path), "m", "00000000") is None
    (tmp_path / "m" / "fingerprints" / "abcdef01.fingerprint").write_text('{"schema": "other"}')
    with pytest.raises(InfrastructureError, match="malformed host fingerprint"):
        fingerprint.load(str(tmp_path), "m", "abcdef01")


@pytest.mark.gpu
def test_on_cuda_machines_the_fingerprint_measures_h2d():
    rates = fingerprint.h2d_gbps(repeats=3)
    assert rates is not None and len(rates) == 3 and all(r > 0 for r in rates)
    assert "h2d_gbps" in fingerprint.measured_facts()
