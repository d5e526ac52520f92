"""One finding per point: the comparison of base and head under that point's direction and factor."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from rlperf.gate.config import GateConfig, policy_for
from rlperf.gate.exitcodes import GateExit
from rlperf.gate.results import Point, pair_envs
from rlperf.gate.significance import assess

# status -> the exit code it contributes; statuses not listed are informational.
BLOCKING = {
    "regression": GateExit.REGRESSION,
    "parity": GateExit.REGRESSION,
    "failed": GateExit.BENCHMARK_FAILURE,
    "skipped-on-head": GateExit.COVERAGE_LOSS,
    "missing-on-head": GateExit.COVERAGE_LOSS,
}


@dataclass(frozen=True)
class Finding:
    """The verdict on one point; `ratio` > 1 always means worse (head/base, or base/head if higher is better)."""

    name: str
    status: str  # regression | parity | failed | skipped-on-head | missing-on-head | improved | ok
    #              | noise (over the factor, not significant) | new | changed (benchmark version differs)
    #              | still-failing | not-measured
    direction: str
    base: float | None
    head: float | None
    ratio: float | None
    factor: float
    tolerance: float | None
    method: str
    detail: str
    unit: str | None
    source: str

    @property
    def exit_code(self) -> GateExit:
        return BLOCKING.get(self.status, GateExit.OK)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["exit_code"] = int(self.exit_code)
        # strict JSON has no inf/NaN: an infinite ratio (base 0) is written as null with the detail kept
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def _worse_ratio(direction: str, base: float, head: float) -> float:
    """How many times worse head is than base (> 1 worse, < 1 better)."""
    num, den = (head, base) if direction == "lower" else (base, head)
    if den == 0:
        return 1.0 if num == 0 else math.inf
    return num / den


def _value(p: Point | None) -> float | None:
    return None if p is None or not p.measured else p.value


def judge_point(base: Point | None, head: Point | None, policy, meta: dict, p_threshold: float) -> Finding:
    """Classify one point (see Finding.status); the policy supplies direction, factor and tolerance."""
    name = (head or base).name
    common = dict(name=name, direction=policy.direction, base=_value(base), head=_value(head), ratio=None,
                  factor=policy.factor, tolerance=policy.tolerance, method="", detail="",
                  unit=meta.get("unit"), source=policy.source)

    def finding(status, **kw):
        return Finding(**{**common, "status": status, **kw})

    if head is None or not head.measured:
        if head is not None and head.failed:
            if base is not None and base.failed:
                return finding("still-failing", detail="failed on base and head")
            return finding("failed", detail=(head.stderr.splitlines() or ["failed on head"])[-1][:300])
        if base is not None and base.measured:
            return finding("skipped-on-head" if head is not None else "missing-on-head",
                           detail="measured on base, " + ("n/a (skipped)" if head is not None else "absent") + " on head")
        return finding("not-measured", detail="not measured on either commit")

    if policy.direction == "tolerance":
        ok = abs(head.value) <= policy.tolerance
        return finding("ok" if ok else "parity", method="tolerance",
                       detail=f"|head| {'<=' if ok else '>'} {policy.tolerance:g}")
    if base is None or not base.measured:
        return finding("new", detail="no measurement on base")

    ratio = _worse_ratio(policy.direction, base.value, head.value)
    sig = assess(base.samples, head.samples, base.stats, head.stats, p_threshold)
    if base.version != head.version:
        return finding("changed", ratio=ratio, method=sig.method,
                       detail="benchmark code changed between commits: not compared (asv shows 'x')")
    if ratio > policy.factor:
        status = "regression" if sig.significant else "noise"
    elif ratio < 1 / policy.factor and sig.significant:
        status = "improved"
    else:
        status = "ok"
    return finding(status, ratio=ratio, method=sig.method, detail=sig.detail)


def judge(base: dict, head: dict, config: GateConfig, bench_meta: dict[str, dict]) -> list[Finding]:
    """Findings for every point of base ∪ head, keyed as load_points() keys them."""
    env_map = pair_envs(base, head)
    head_env_of = {v: k for k, v in env_map.items()}
    pairs: dict[tuple[str, str], list] = {}
    for (env, name), point in base.items():
        pairs.setdefault((env, name), [None, None])[0] = point
    for (env, name), point in head.items():
        pairs.setdefault((head_env_of.get(env, env), name), [None, None])[1] = point
    multi_env = len({env for env, _ in pairs}) > 1
    findings = []
    for (env, name), (b, h) in sorted(pairs.items()):
        point = h or b
        meta = bench_meta.get(point.key, {})
        policy = policy_for(config, point.key, name, meta, point.params)
        f = judge_point(b, h, policy, meta, config.p_threshold)
        findings.append(Finding(**{**f.__dict__, "name": f"{env}: {name}" if multi_env else name}))
    return findings


__all__ = ["BLOCKING", "Finding", "judge", "judge_point"]
