"""The verdict: one finding per point, the significance rule, and the exit code they reduce to.

Every decision of the gate is made here, in one place: a point's policy (gate.policy.policy_for),
whether a difference is real (`assess`, asv's rule; its statistics live in gate.significance),
the point's status (`judge_point`), which paired points a confirming round re-samples
(`worth_confirming`), and the exit code of the whole (`Verdict.exit_code`: the most severe of its
findings, exitcodes.SEVERITY). gate.report only formats a Verdict; gate.config only parses gate.toml.
"""

from __future__ import annotations

import fnmatch
import math
import statistics
from dataclasses import asdict, dataclass, field

from rlperf.gate.config import GateConfig
from rlperf.gate.exitcodes import GateExit, worst
from rlperf.gate.policy import Policy, policy_for
from rlperf.gate.results import Point
from rlperf.gate.significance import ci99_disjoint, mann_whitney_p, smallest_p

# status -> the exit code it contributes; statuses not listed are informational.
BLOCKING = {
    "regression": GateExit.REGRESSION,
    "parity": GateExit.REGRESSION,
    "failed": GateExit.BENCHMARK_FAILURE,
    "skipped-on-head": GateExit.COVERAGE_LOSS,
    "missing-on-head": GateExit.COVERAGE_LOSS,
    "changed": GateExit.CHANGED_BENCHMARK,
    "unjudgeable": GateExit.INFRASTRUCTURE,
}
# Statuses of a point the gate judged (a ratio against base, or a tolerance on head) ...
JUDGED = ("regression", "parity", "improved", "ok", "noise", "changed", "changed-accepted", "advisory")
# ... and of those, the ones whose judgement can block: a point in GATED is gated, an advisory one is not.
GATED = ("regression", "parity", "improved", "ok", "noise")


@dataclass(frozen=True)
class Significance:
    significant: bool
    method: str  # "mann-whitney" | "ci99" | "factor-only"
    detail: str


def _clean(samples) -> list[float]:
    return [x for x in samples or [] if x is not None and not math.isnan(x)]


def _finite_ci(stats) -> bool:
    return bool(stats) and all(k in stats and math.isfinite(stats[k]) for k in ("ci_99_a", "ci_99_b"))


def assess(base_samples, head_samples, base_stats, head_stats, p_threshold: float = 0.002) -> Significance:
    """Is a stored difference real? asv's rule: Mann–Whitney (p < p_threshold) when both sides have
    enough samples for such a p to exist, else disjoint 99 % CIs, else the factor alone (and it says so)."""
    a, b = _clean(base_samples), _clean(head_samples)
    if a and b and smallest_p(len(a), len(b)) < p_threshold:
        p = mann_whitney_p(a, b)
        return Significance(p < p_threshold, "mann-whitney", f"p={p:.2g} (n={len(a)}+{len(b)})")
    if _finite_ci(base_stats) and _finite_ci(head_stats):
        different = ci99_disjoint(base_stats, head_stats)
        return Significance(different, "ci99", f"99% CIs {'disjoint' if different else 'overlap'}"
                                               f" (n={len(a)}+{len(b)} samples)")
    reason = f"only {len(a)}+{len(b)} samples" if (a or b) else "no samples stored"
    return Significance(True, "factor-only", f"{reason}: factor alone decides")


@dataclass(frozen=True)
class Finding:
    """The verdict on one point; `ratio` > 1 always means worse (head/base, or base/head if higher is better)."""

    name: str
    status: str  # regression | parity | failed | skipped-on-head | missing-on-head | changed (asv version
    #              differs, blocks) | improved | ok | noise (over the factor, not significant) | new
    #              | changed-accepted (--accept-changed) | still-failing | not-measured
    #              | advisory (too noisy to gate: compared and shown, never blocking; detail says why)
    #              | unjudgeable (no ratio can judge its values: a sign change, a negative or a lone zero; 5)
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
        # strict JSON has no inf/NaN: a non-finite number is written as null with the detail kept
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def unratioable(base: float, head: float) -> str | None:
    """Why no worse-ratio can compare these values (None when one can).

    A factor is a multiplicative band: it means something only between two values of one sign. Both
    > 0 compare; both 0 are equal. A negative value makes head/base read backwards (base -1, head -2
    reads x2 "worse" though lower), a sign change or a lone zero gives a ratio <= 0 or infinite, which
    would read as improved or as a regression of any size. Such a point wants an absolute judgement
    (`within_tolerance`), not a factor."""
    if base > 0 and head > 0 or base == head == 0:
        return None
    if base < 0 or head < 0:
        return f"a negative value (base {base:g}, head {head:g})"
    return f"a zero {'base' if base == 0 else 'head'} (base {base:g}, head {head:g})"


def _worse_ratio(direction: str, base: float, head: float) -> float:
    """How many times worse head is than base (> 1 worse, < 1 better); both > 0 or both 0 (unratioable)."""
    num, den = (head, base) if direction == "lower" else (base, head)
    return 1.0 if num == den == 0 else num / den


def _value(p: Point | None) -> float | None:
    return None if p is None or not p.measured else p.value


def accepted_by(patterns, key: str, name: str) -> str | None:
    """The first --accept-changed glob that names this benchmark (with or without parameters)."""
    return next((p for p in patterns if fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(key, p)), None)


def _both(pass_values) -> list[tuple[float, float]]:
    """The passes (or paired blocks) measured on both sides."""
    return [(b, h) for b, h in pass_values if b is not None and h is not None and not math.isnan(b)
            and not math.isnan(h)]


def _median_of_passes(direction: str, both) -> tuple[float, float, float, list[float]]:
    """(median base, median head, median of per-pass worse-ratios, the ratios) over passes measured on both."""
    ratios = [_worse_ratio(direction, b, h) for b, h in both]
    return (statistics.median(b for b, _ in both), statistics.median(h for _, h in both),
            statistics.median(ratios), ratios)


def _ratios_detail(ratios: list[float]) -> str:
    """Every per-pass ratio when there are a few; quartiles of the per-block ratios of paired sampling."""
    if len(ratios) <= 9:
        return "per-pass " + ", ".join(f"×{r:.3f}" for r in ratios)
    q1, q2, q3 = statistics.quantiles(ratios, n=4)
    return f"{len(ratios)} paired blocks, quartiles ×{q1:.3f} / ×{q2:.3f} / ×{q3:.3f}"


def judge_point(base: Point | None, head: Point | None, policy: Policy, meta: dict, p_threshold: float, *,
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

    both = _both(pass_values) if pass_values is not None else []
    factor = policy.factor
    for b, h in both or [(base.value, head.value)]:
        why = unratioable(b, h)
        if why:
            return finding("unjudgeable", method="ratio", detail=f"{why}: no factor can judge it; a corrupt value, "
                           "or a metric that wants an absolute tolerance (rlperf.gate.meta.within_tolerance)")
    if both:
        base_value, head_value, ratio, ratios = _median_of_passes(policy.direction, both)
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
    """Findings for every point of base ∪ head, keyed as results.load_points() keys them.

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


def nothing_compared(findings) -> str | None:
    """The error when no point was judged and nothing else blocks: a verdict that compared nothing
    is never a pass (a --bench that finds only points this machine skips, say CUDA ones on a CPU box).
    Lost coverage (4) or a failure (3) keeps its own code."""
    if any(f.status in JUDGED for f in findings) or any(f.exit_code for f in findings):
        return None
    counts = {}
    for f in findings:
        counts[f.status] = counts.get(f.status, 0) + 1
    why = {"not-measured": "measured on neither commit, skipped on this machine", "new": "measured on head only",
           "still-failing": "failed on both"}
    listed = "; ".join(f"{n} {why.get(s, s)}" for s, n in sorted(counts.items()))
    return (f"nothing compared: none of the {len(findings)} selected point(s) was measured on both commits "
            f"({listed}); a verdict that compared nothing is not a pass. Select points this machine can "
            "measure (--bench), or gate on a machine that has what they need")


@dataclass
class Verdict:
    """Everything the gate decided, with enough context to reproduce it."""

    base: str
    head: str
    machine: str
    factor: float
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # infrastructure: no verdict on the code (5)
    failures: list[str] = field(default_factory=list)  # head's suite itself is broken (3)
    notes: list[str] = field(default_factory=list)
    config: str | None = None
    mode: str = ""
    host: str = ""
    accepted: tuple[str, ...] = ()
    working_tree: tuple[str, ...] = ()  # --allow-dirty: head was the working tree, with these uncommitted paths
    profile: str | None = None  # gate.toml's [profile.NAME] the run used (the mode says why and what overrode it)
    quick: bool = False  # --quick: a fast look, not the settings CI runs

    @property
    def exit_code(self) -> GateExit:
        """The most severe code of the findings (exitcodes.SEVERITY); any infrastructure error is 5."""
        if self.errors:
            return GateExit.INFRASTRUCTURE
        codes = [f.exit_code for f in self.findings]
        return worst(codes + [GateExit.BENCHMARK_FAILURE] * bool(self.failures))

    @property
    def gated(self) -> int:
        """How many points were gated: judged by a rule that can block (advisory points are not)."""
        return sum(1 for f in self.findings if f.status in GATED)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.status] = out.get(f.status, 0) + 1
        return dict(sorted(out.items()))


__all__ = ["BLOCKING", "Finding", "GATED", "JUDGED", "Policy", "Significance", "Verdict", "accepted_by", "assess",
           "judge", "judge_point", "nothing_compared", "policy_for", "unratioable", "worth_confirming"]
