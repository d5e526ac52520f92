"""Withdraw a ceiling a replay run measured wrongly, and every floor that rested on it, from its result document.

Why: a floor is a floor only if its ceiling was measured right. When a run's ceiling is found wrong (the
2026-12-04 H200 sweep timed its device-copy ceiling on one allocation, and the same copy runs 3.14-3.74 TB/s from
one allocation to another, so the fused gathers read 0.87-0.92 of their "floor"), the honest record keeps the run's timings and drops that ceiling's floors,
saying why, instead of showing floors the measurements beat. The value and the reason move to
`withdrawn_ceilings`; each timing's floor is recomputed from the ceilings that remain (its metric's own
ceiling and bytes, `records.CEILING_OF`), so a metric bounded by another resource keeps its floor, unchanged.
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


__all__ = ["CEILING_KEYS", "withdraw_ceiling"]
