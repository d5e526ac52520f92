"""Were base and head measured on the same host? Static facts must match; measured ones within their noise.

Two sources, both compared when present: the host params asv copies into every result (os = kernel,
cpu, cpu_flags, num_cpu, ram, gpu, driver; a param stored as "unrecorded" or absent on one side, as in
results older than it, is left out and named) and the fingerprint sidecar the gate writes
(rlperf.asvtools.fingerprint: CPU flags hash plus the canary, host copy and H2D measurements).
A measured quantity differs when the ratio of its best repeats (least disturbed by neighbours)
exceeds 1 + max(MIN_BAND, 2 x (spread of base + spread of head)), where a spread is (max - min) /
median of that side's repeats: a busy box widens its own band instead of raising a false alarm.
Only the static facts refuse: on a shared 2-vCPU box under load (load average 11-20) the measured
parts moved by more than 2x between sessions on one host during development, which made false
refusals; measured differences are therefore reported as warnings in the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlperf.asvtools.stored import HOST_KEYS, UNRECORDED

MIN_BAND = 1.0  # the narrowest band of a measured part (see the module docstring for why it is wide)


@dataclass(frozen=True)
class HostCheck:
    same: bool
    differences: tuple[str, ...]  # static facts: these refuse the comparison
    compared: str  # what was compared, for the report
    warnings: tuple[str, ...] = ()  # measured parts beyond their band: reported, not refused


def _host_params(envs: dict[str, dict]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for params in envs.values():
        merged.update({k: str(params[k]) for k in HOST_KEYS if k in params and k != "machine"})
    return merged


def differing(a: dict, b: dict, a_name: str = "base", b_name: str = "head", prefix: str = "") -> list[str]:
    """One line per key whose value differs between two sets of facts (a key missing on one side differs)."""
    return [f"{prefix}{k}: {a_name} {a.get(k)!r}, {b_name} {b.get(k)!r}" for k in sorted(set(a) | set(b))
            if a.get(k) != b.get(k)]


def _spread(q: dict) -> float:
    return (q["max"] - q["min"]) / q["median"] if q.get("median") else 0.0


def _measured_differences(base: dict, head: dict) -> list[str]:
    out = []
    for name in sorted(set(base) & set(head)):
        b, h = base[name], head[name]
        if not all(isinstance(q.get(k), (int, float)) and q[k] > 0 for q in (b, h) for k in ("best", "median")):
            continue
        ratio = max(b["best"], h["best"]) / min(b["best"], h["best"])
        band = max(MIN_BAND, 2 * (_spread(b) + _spread(h)))
        if ratio > 1 + band:
            out.append(f"{name}: base {b['best']:.4g}, head {h['best']:.4g} (×{ratio:.2f}, band ±{band:.0%})")
    return out


def compare_hosts(base_envs: dict[str, dict], head_envs: dict[str, dict],
                  base_fp: dict | None, head_fp: dict | None) -> HostCheck:
    """Static host params from the results, then the fingerprints when both commits have one."""
    bp, hp = _host_params(base_envs), _host_params(head_envs)
    unknown = sorted(k for k in set(bp) | set(hp) if UNRECORDED in (bp.get(k, UNRECORDED), hp.get(k, UNRECORDED)))
    for key in unknown:  # stored before the param existed (absent, or stamped so): not comparable
        bp.pop(key, None), hp.pop(key, None)
    diffs = differing(bp, hp)
    compared = "asv host params" + (f" ({', '.join(unknown)} unrecorded on one side)" if unknown else "")
    if base_fp and head_fp:
        compared += " + fingerprints"
        bs, hs = base_fp.get("static", {}), head_fp.get("static", {})
        diffs += differing(bs, hs, prefix="fingerprint ")
        warnings = _measured_differences(base_fp.get("measured", {}), head_fp.get("measured", {}))
    else:
        warnings = []
        if base_fp or head_fp:
            compared += " (fingerprint on one side only)"
    return HostCheck(same=not diffs, differences=tuple(diffs), compared=compared, warnings=tuple(warnings))


def history_host_change(results_dir: str, machine: str) -> list[str]:
    """This host's static facts against those of the newest fingerprint stored under `machine`: one series
    must hold one host, or its graph draws a step no commit made. [] when they agree or the history has no
    fingerprint yet."""
    from rlperf.asvtools.fingerprint import newest, static_facts

    stored = (newest(results_dir, machine) or {}).get("static")
    return differing(stored, static_facts(), "history", "this host") if stored else []


def foreign_factors_note(history_dir: str, machine: str) -> str | None:
    """A verdict's note when `machine`'s derived factors come from another host's noise than this one's (None when
    the hosts agree or the history has no fingerprint): the false-alarm rate measured for those factors is that
    host's, so here they are untested (seen: a 2-vCPU Intel box gated under the AMD box's name, 2026-12-05)."""
    changed = history_host_change(history_dir, machine)
    if not changed:
        return None
    return (f"the factors of machine {machine!r} were derived from noise measured on another host "
            f"({'; '.join(changed)}), so their false-alarm rate on this host is unmeasured: gate under this host's "
            "own machine name (`rlperf machine --print-name`) to use factors measured here")


__all__ = ["MIN_BAND", "HostCheck", "compare_hosts", "differing", "foreign_factors_note", "history_host_change"]

