"""Correct a ceiling a replay run measured wrongly, and every floor that rested on it, in its result document:
withdraw it, or raise it to what the same machine measured in another part of the same sweep.

Why: a floor is a floor only if its ceiling was measured right. When a run's ceiling is found wrong (the
2026-12-04 H200 sweep timed its device-copy ceiling on one allocation, and the same copy runs 3.14-3.74 TB/s from
one allocation to another, so the fused gathers read 0.87-0.92 of their "floor"), the honest record keeps the run's timings and drops that ceiling's floors,
saying why, instead of showing floors the measurements beat. The value and the reason move to
`withdrawn_ceilings`; each timing's floor is recomputed from the ceilings that remain (its metric's own
ceiling and bytes, `records.CEILING_OF`), so a metric bounded by another resource keeps its floor, unchanged.

Raising (`raise_ceiling`): a sweep split into processes measures its ceilings once per process, and the device
copy rate moves from one process to the next on the H200 host (3.40-3.47 TB/s in one, 3.68-3.75 in the next,
2026-12-04, the best of four allocations each), while the gathers run at one speed in both: the lower part's
floors are beaten. The machine's ceiling is the best rate it was measured at, so that part takes the other's
value; the measured one and where the new one came from move to `raised_ceilings`. Refused if a floor is still
beaten after it.
"""

from __future__ import annotations

import copy

from rlperf.errors import UsageError
from rlperf.replay.metrics import END_TO_END
from rlperf.replay.records import CEILING_OF, floor_ms, set_floor

CEILING_KEYS = tuple(dict.fromkeys(CEILING_OF.values()))  # the ceilings a floor is computed from
# Metrics whose floor may include a second resource (records.resource_bytes): their floor is recomputed from the
# metric's own ceiling; every other metric's floor must come out the same, which checks the recomputation.
TWO_RESOURCES = (END_TO_END,)


def withdraw_ceiling(doc: dict, key: str, reason: str) -> dict:
    """A copy of `doc` (one run's replay results: one set of ceilings) without ceiling `key` and its floors."""
    if key not in CEILING_KEYS:
        raise UsageError(f"unknown ceiling {key!r}; valid: {', '.join(CEILING_KEYS)}")
    if "parts" in doc:
        raise UsageError("a merged document holds several runs' ceilings: withdraw from each part, then merge")
    if not reason.strip():
        raise UsageError("say why the ceiling is withdrawn (--reason)")
    ceilings = doc.get("ceilings") or {}
    if not ceilings.get(key):
        raise UsageError(f"the run has no {key} ceiling to withdraw (its ceilings: {', '.join(sorted(ceilings))})")
    out = copy.deepcopy(doc)
    left = dict(out["ceilings"])
    value = left.pop(key)
    out["ceilings"] = left
    out.setdefault("withdrawn_ceilings", {})[key] = {"value": value, "reason": reason}
    for result in out["results"]:
        for metric, timing in result["timings"].items():
            _refloor(timing, metric, left, changed=CEILING_OF[metric] == key or metric in TWO_RESOURCES,
                     where=f"{result['placement']} {result['capacity_rows']} {metric}")
    return out


def _refloor(timing: dict, metric: str, ceilings: dict, *, changed: bool, where: str) -> None:
    floor = floor_ms({CEILING_OF[metric]: timing["bytes_moved"]}, ceilings)
    if not changed:
        old = timing.get("floor_ms")
        if (old is None) != (floor is None) or (old is not None and abs(old - floor) > 1e-9 * old):
            raise UsageError(f"{where}: its floor {old} does not come from its own ceiling ({floor}); not this "
                             "document's floors")
        return
    set_floor(timing, floor)


def raise_ceiling(doc: dict, key: str, value: float, source: str, reason: str) -> dict:
    """A copy of `doc` (one run's replay results) with ceiling `key` raised to `value` (measured by `source`, on the
    same machine) and every floor on it recomputed; refused if a recomputed floor is beaten by its median."""
    if key not in CEILING_KEYS:
        raise UsageError(f"unknown ceiling {key!r}; valid: {', '.join(CEILING_KEYS)}")
    if "parts" in doc:
        raise UsageError("a merged document holds several runs' ceilings: raise in one part, then merge")
    if not reason.strip() or not source.strip():
        raise UsageError("say where the new value was measured (--from) and why it replaces this run's (--reason)")
    old = (doc.get("ceilings") or {}).get(key)
    if not old:
        have = ", ".join(sorted(doc.get("ceilings") or {}))
        raise UsageError(f"the run has no {key} ceiling to raise (its ceilings: {have})")
    if not value > old:
        raise UsageError(f"{key}: {value / 1e9:.1f} GB/s is not above this run's {old / 1e9:.1f} GB/s; "
                         "nothing to raise")
    out = copy.deepcopy(doc)
    out["ceilings"] = {**out["ceilings"], key: value}
    out.setdefault("raised_ceilings", {})[key] = {"measured": old, "value": value, "from": source, "reason": reason}
    beaten = []
    for result in out["results"]:
        for metric, timing in result["timings"].items():
            if timing.get("floor_ms") is None or (CEILING_OF[metric] != key and metric not in TWO_RESOURCES):
                continue
            set_floor(timing, _raised_floor(timing, metric, doc["ceilings"], out["ceilings"], key))
            if timing.get("x_floor", 1.0) < 1.0:
                beaten.append(f"{result['placement']} {result['capacity_rows']} {metric} x{timing['x_floor']:.3f}")
    if beaten:
        raise UsageError(f"with {key} at {value / 1e9:.1f} GB/s these medians still beat their floors: "
                         f"{'; '.join(beaten)}; no ceiling measured yet bounds them")
    return out


def raise_ceiling_from(doc: dict, other: dict, key: str, other_name: str, reason: str) -> dict:
    """`raise_ceiling` with the value `other` (another part of the same sweep, read from `other_name`) measured:
    refused unless both were measured on the same machine and `other` has that ceiling."""
    mine, theirs = (doc.get("machine") or {}).get("name"), (other.get("machine") or {}).get("name")
    if mine != theirs:
        raise UsageError(f"{other_name} was measured on {theirs!r}, this run on {mine!r}: a ceiling comes from the "
                         "same machine")
    value = (other.get("ceilings") or {}).get(key)
    if not value:
        raise UsageError(f"{other_name} measured no {key}")
    return raise_ceiling(doc, key, float(value), f"{other_name} ({other.get('created_at', '?')})", reason)


def _raised_floor(timing: dict, metric: str, before: dict, after: dict, key: str) -> float | None:
    """The floor of `timing` with ceiling `key` raised: its own resource's time at the new ceilings, or the other
    resource's (a two-resource metric whose old floor exceeds its own resource's time was bound by the other one:
    that time, scaled by the raise when the other one is `key`)."""
    own = CEILING_OF[metric]
    moved = timing["bytes_moved"]
    own_before = floor_ms({own: moved}, before) or 0.0
    other = timing["floor_ms"] if timing["floor_ms"] > own_before * (1 + 1e-9) else 0.0
    if other and key != own:
        other *= before[key] / after[key]
    return max(floor_ms({own: moved}, after) or 0.0, other) or None


__all__ = ["CEILING_KEYS", "raise_ceiling", "raise_ceiling_from", "withdraw_ceiling"]
