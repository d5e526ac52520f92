"""One finding per point: the comparison of base and head under that point's direction and factor."""

from __future__ import annotations

import fnmatch
import math
import statistics
from dataclasses import asdict, dataclass

from rlperf.gate.config import GateConfig, policy_for
from rlperf.gate.exitcodes import GateExit
from rlperf.gate.results import Point
from rlperf.gate.significance import assess

# status -> the exit code it contributes; statuses not listed are informational.
BLOCKING = {
    "regression": GateExit.REGRESSION,
    "parity": GateExit.REGRESSION,
    "failed": GateExit.BENCHMARK_FAILURE,
    "skipped-on-head": GateExit.COVERAGE_LOSS,
    "missing-on-head": GateExit.COVERAGE_LOSS,
    "changed": GateExit.CHANGED_BENCHMARK,
}


@dataclass(frozen=True)
class Finding:
    """The verdict on one point; `ratio` > 1 always means worse (head/base, or base/head if higher is better)."""

    name: str
    status: str  # regression | parity | failed | skipped-on-head | missing-on-head | changed (asv version
    #              differs, blocks) | improved | ok | noise (over the factor, not significant) | new
    #              | changed-accepted (--accept-changed) | still-failing | not-measured
    #              | advisory (too noisy to gate: compared and shown, never blocking; detail says why)
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


def accepted_by(patterns, key: str, name: str) -> str | None:
    """The first --accept-changed glob that names this benchmark (with or without parameters)."""
    return next((p for p in patterns if fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(key, p)), None)


def _median_of_passes(direction: str, pass_values) -> tuple[float, float, float, list[float]] | None:
    """(median base, median head, median of per-pass worse-ratios, the ratios) over passes measured on both."""
    both = [(b, h) for b, h in pass_values if b is not None and h is not None
            and not math.isnan(b) and not math.isnan(h)]
    if not both:
        return None
    ratios = [_worse_ratio(direction, b, h) for b, h in both]
    return (statistics.median(b for b, _ in both), statistics.median(h for _, h in both),
            statistics.median(ratios), ratios)


def _ratios_detail(ratios: list[float]) -> str:
    """Every per-pass ratio when there are a few; quartiles of the per-block ratios of paired sampling."""
    if len(ratios) <= 9:
        return "per-pass " + ", ".join(f"×{r:.3f}" for r in ratios)
    q1, q2, q3 = statistics.quantiles(ratios, n=4)
    return f"{len(ratios)} paired blocks, quartiles ×{q1:.3f} / ×{q2:.3f} / ×{q3:.3f}"


def judge_point(base: Point | None, head: Point | None, policy, meta: dict, p_threshold: float, *,
                accept_changed=(), pass_values=None, paired: bool = False) -> Finding:
    """Classify one point (see Finding.status); the policy supplies direction, factor and tolerance.

    `pass_values` [(base, head), ...] from interleaved passes replaces the significance test: the
    median of per-pass ratios is judged against the factor (see docs/gate.md)."""
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

    passes = _median_of_passes(policy.direction, pass_values) if pass_values is not None else None
    factor = policy.factor
    if passes is not None:
        base_value, head_value, ratio, ratios = passes
        significant, method = True, f"{'paired-' if paired else ''}median-of-{len(ratios)}"
        detail = _ratios_detail(ratios)
        if paired and policy.paired_factor is not None:
            factor = policy.paired_factor
        common.update(base=base_value, head=head_value, factor=factor)
    else:
        ratio = _worse_ratio(policy.direction, base.value, head.value)
        sig = assess(base.samples, head.samples, base.stats, head.stats, p_threshold)
        significant, method, detail = sig.significant, sig.method, sig.detail
    if base.version != head.version:
        pattern = accepted_by(accept_changed, base.key, name)
        if pattern is None:
            return finding("changed", ratio=ratio, method=method,
                           detail="benchmark code changed (asv version differs): not comparable; "
                                  "pass --accept-changed NAME to accept the new baseline")
        return finding("changed-accepted", ratio=ratio, method=method,
                       detail=f"benchmark code changed, accepted by --accept-changed {pattern!r}")
    if ratio > factor:
        status = "regression" if significant else "noise"
    elif ratio < 1 / factor and significant:
        status = "improved"
    else:
        status = "ok"
    if policy.advisory and (not paired or policy.advisory_paired):
        return finding("advisory", ratio=ratio, method=method,
                       detail=f"{policy.advisory}; at ×{factor:.2f} it would read {status} ({detail})")
    return finding(status, ratio=ratio, method=method, detail=detail)


def worth_confirming(status: str, ratio: float | None, factor: float, screen: float = 1.0) -> bool:
    """Whether a confirming round re-samples a paired point (gate.interleave._confirm): flagged as a
    regression, or, with screen < 1, above 1 + screen x (factor - 1) though under the factor."""
    return status == "regression" or (status in ("ok", "noise") and ratio is not None
                                      and ratio > 1 + screen * (factor - 1))


def judge(base: dict, head: dict, config: GateConfig, bench_meta: dict[str, dict], *,
          env_map: dict[str, str] | None = None, accept_changed=(), pass_values=None,
          paired_keys=frozenset()) -> list[Finding]:
    """Findings for every point of base ∪ head, keyed as load_points() keys them.

    env_map (base env -> head env, see results.pair_envs) defaults to pairing equal names;
    pass_values maps a base-side key (env, name) to its interleaved [(base, head), ...]; for the keys
    in paired_keys those are blocks of paired samples, judged at the policy's paired factor."""
    if env_map is None:
        env_map = {e: e for e, _ in base}
    head_env_of = {v: k for k, v in env_map.items()}
    pairs: dict[tuple[str, str], list] = {}
    for (env, name), point in base.items():
        pairs.setdefault((env, name), [None, None])[0] = point
    base_envs = {e for e, _ in base}
    for (env, name), point in head.items():
        # an unpaired head env never joins a base env that happens to share its name
        side = head_env_of.get(env) or (f"{env} (head only)" if env in base_envs else env)
        pairs.setdefault((side, name), [None, None])[1] = point
    multi_env = len({env for env, _ in pairs}) > 1
    findings = []
    for (env, name), (b, h) in sorted(pairs.items()):
        point = h or b
        meta = bench_meta.get(point.key, {})
        policy = policy_for(config, point.key, name, meta, point.params)
        f = judge_point(b, h, policy, meta, config.p_threshold, accept_changed=accept_changed,
                        pass_values=None if pass_values is None else pass_values.get((env, name), []),
                        paired=(env, name) in paired_keys)
        findings.append(Finding(**{**f.__dict__, "name": f"{env}: {name}" if multi_env else name}))
    return findings


__all__ = ["BLOCKING", "Finding", "accepted_by", "judge", "judge_point", "worth_confirming"]
