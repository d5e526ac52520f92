"""Carry stored asv results over to today's benchmark `version` where they still measure the same thing.

`asv publish` (and the gate) use a stored value only while its benchmark's stored version equals the
version in results/asv/benchmarks.json (asv/results.py `Results.get_result_keys`); anything else is
dropped without a word. Before every class set an explicit `version`, the version was sha256 of the
benchmark's code (rlperf.asvtools.benchmark_code), so a refactor hid the whole history of a benchmark.

For each stored (result, benchmark) whose version is not today's, this reads the benchmark's code at
the result's own commit (`git show SHA:benchmarks/MODULE.py`), checks that it reproduces the stored
version (the code that produced the value, proven), and decides:

- same-code: the code is today's code, byte for byte;
- cosmetic: only comments or whitespace differ (asv_runner's token fingerprint is equal);
- judged-same / judged-changed: a reviewed judgment for this exact (old code, today's code) pair;
- unreviewed: the code differs and nobody has judged it; params-differ: the parameter names or the
  number of dimensions differ; unverified: the stored version cannot be traced to code at its commit;
  gone: the benchmark no longer exists.

Only the first three rewrite the stored version to today's; everything else is left as it is and
listed. Judgments live in a TOML file (results/asv/version-judgments.toml), each with its reason.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass

from asv_runner.benchmarks._base import code_fingerprint

from rlperf.asvtools.benchmark_code import NotFound, benchmark_code
from rlperf.asvtools.git import git
from rlperf.asvtools.json_layout import dumps_like
from rlperf.errors import InfrastructureError, UsageError
from rlperf.atomic import write_text

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

MACHINE_FILE, BENCHMARKS_FILE = "machine.json", "benchmarks.json"
REWRITES = ("same-code", "cosmetic", "judged-same")
LEFT = ("judged-changed", "unreviewed", "params-differ", "unverified", "gone")


@dataclass(frozen=True)
class Judgment:
    """A reviewed answer to "does the code that stored these results measure what today's code does?"."""

    benchmarks: tuple[str, ...]
    stored: tuple[str, ...]  # sha256 of the benchmark code at the stored commit (one per benchmark, or shared)
    today: str | None  # sha256 of today's code the judgment was made against (required when same)
    same: bool
    reason: str


@dataclass(frozen=True)
class Decision:
    path: str  # the result file
    benchmark: str
    stored: str  # the version the file holds
    target: str | None  # today's version (None: the benchmark is gone)
    outcome: str  # one of REWRITES + LEFT + ("current",)
    detail: str

    @property
    def rewrites(self) -> bool:
        return self.outcome in REWRITES


@dataclass(frozen=True)
class _Today:
    version: str
    code: str
    param_names: tuple[str, ...]

    @property
    def code_hash(self) -> str:
        return hashlib.sha256(self.code.encode("utf-8")).hexdigest()


def load_judgments(path: str) -> list[Judgment]:
    """The `[[judgment]]` tables of a TOML file; a UsageError naming the entry and field at fault."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise UsageError(f"cannot read judgments file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"judgments file {path} is not valid TOML: {exc}") from None
    out = []
    for i, entry in enumerate(data.get("judgment", [])):
        where = f"{path}: judgment {i + 1}"
        unknown = set(entry) - {"benchmarks", "stored", "today", "same", "reason"}
        if unknown:
            raise UsageError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}; valid: benchmarks, stored, "
                             "today, same, reason")
        benchmarks, same, reason = entry.get("benchmarks"), entry.get("same"), entry.get("reason")
        if not (isinstance(benchmarks, list) and benchmarks and all(isinstance(b, str) for b in benchmarks)):
            raise UsageError(f"{where}: `benchmarks` must be a non-empty list of benchmark names")
        if not isinstance(same, bool) or not isinstance(reason, str) or not reason.strip():
            raise UsageError(f"{where}: needs `same` (true or false) and a non-empty `reason`")
        stored, today = entry.get("stored"), entry.get("today")
        stored = [stored] if isinstance(stored, str) else stored
        if not (isinstance(stored, list) and stored and all(_is_sha256(h) for h in stored)):
            raise UsageError(f"{where}: `stored` must be the sha256 (64 hex) of the stored code, or a list of them")
        if (same or today is not None) and not _is_sha256(today):
            raise UsageError(f"{where}: `today` must be the sha256 (64 hex) of today's code"
                             f"{' (required when same = true)' if same else ''}")
        out.append(Judgment(tuple(benchmarks), tuple(stored), today, same, reason.strip()))
    return out


def _is_sha256(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _today_suite(results_dir: str, repo: str, benchmark_dir: str) -> dict[str, _Today]:
    """benchmarks.json, checked against the benchmark sources in the working tree: a version is only
    migrated to when it is the version of the code as it is now."""
    path = os.path.join(results_dir, BENCHMARKS_FILE)
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InfrastructureError(f"{path}: not readable ({exc})") from None
    suite, sources, stale = {}, {}, []
    for name, entry in doc.items():
        if name == "version":
            continue
        module = name.split(".")[0]
        if module not in sources:
            try:
                with open(os.path.join(repo, benchmark_dir, f"{module}.py")) as fh:
                    sources[module] = fh.read()
            except OSError:
                sources[module] = None
        try:
            now = benchmark_code(sources[module], name) if sources[module] is not None else None
        except NotFound:
            now = None
        if now is None or now.code != entry["code"] or now.version != str(entry["version"]):
            stale.append(name)
        suite[name] = _Today(str(entry["version"]), entry["code"], tuple(entry.get("param_names") or ()))
    if stale:
        raise InfrastructureError(
            f"{path} does not describe {benchmark_dir}/ as it is now ({', '.join(stale[:4])}"
            f"{' ...' if len(stale) > 4 else ''}); regenerate it first: "
            "asv run --python=same --bench just-discover")
    return suite


class _OldCode:
    """Benchmark code at stored commits, one `git show` per (commit, module)."""

    def __init__(self, repo: str, benchmark_dir: str):
        self.repo, self.benchmark_dir, self._sources = repo, benchmark_dir, {}

    def get(self, sha: str, name: str):
        module = name.split(".")[0]
        key = (sha, module)
        if key not in self._sources:
            try:
                self._sources[key] = git(self.repo, "show", f"{sha}:{self.benchmark_dir}/{module}.py")
            except InfrastructureError:
                self._sources[key] = None
        source = self._sources[key]
        if source is None:
            raise NotFound(f"{self.benchmark_dir}/{module}.py at {sha[:8]} is not in this repository")
        return benchmark_code(source, name)


def _decide(name: str, stored: str, sha: str, n_params: int, today: dict[str, _Today], old_code: _OldCode,
            judgments: list[Judgment]) -> tuple[str, str]:
    now = today.get(name)
    if now is None:
        return "gone", "not in today's benchmarks.json"
    if stored == now.version:
        return "current", ""
    try:
        old = old_code.get(sha, name)
    except NotFound as exc:
        return "unverified", str(exc)
    if old.version != stored:
        return "unverified", f"the code at {sha[:8]} has version {old.version[:12]}, not the stored {stored[:12]}"
    if old.param_names is None:
        return "unverified", f"param_names at {sha[:8]} is not a literal"
    if old.param_names != now.param_names or n_params != len(now.param_names):
        return "params-differ", (f"parameters {list(old.param_names)} ({n_params} stored dimensions) -> "
                                 f"{list(now.param_names)}")
    if old.code == now.code:
        return "same-code", f"code {old.code_hash[:12]} unchanged"
    if old.token_hash == code_fingerprint(now.code):
        return "cosmetic", "only comments or whitespace differ"
    for j in judgments:
        if name in j.benchmarks and old.code_hash in j.stored:
            if not j.same:
                return "judged-changed", j.reason
            if j.today == now.code_hash:
                return "judged-same", j.reason
            return "unreviewed", f"judged the same as code {j.today[:12]}, but today's is {now.code_hash[:12]}"
    return "unreviewed", f"code {old.code_hash[:12]} -> {now.code_hash[:12]}: no judgment"


def machines_under(results_dir: str) -> list[str]:
    return sorted(d for d in os.listdir(results_dir) if os.path.isfile(os.path.join(results_dir, d, MACHINE_FILE)))


def plan(results_dir: str, repo: str, machines: list[str], judgments: list[Judgment],
         benchmark_dir: str = "benchmarks") -> list[Decision]:
    """Every stored (result, benchmark) of `machines` that carries a version, decided; nothing written."""
    today = _today_suite(results_dir, repo, benchmark_dir)
    old_code = _OldCode(repo, benchmark_dir)
    decisions = []
    for machine in machines:
        folder = os.path.join(results_dir, machine)
        for filename in sorted(os.listdir(folder)):
            if not filename.endswith(".json") or filename == MACHINE_FILE:
                continue
            path = os.path.join(folder, filename)
            doc = _read(path)
            try:
                columns = doc["result_columns"]
                sha = str(doc["commit_hash"])
                rows = doc["results"].items()
                vi, pi = columns.index("version"), columns.index("params")
            except (KeyError, ValueError, AttributeError) as exc:
                raise InfrastructureError(f"{path}: not an asv result file ({exc!r})") from None
            for name, row in sorted(rows):
                stored = row[vi] if len(row) > vi else None
                if stored is None:
                    continue
                n_params = len(row[pi] or []) if len(row) > pi else 0
                outcome, detail = _decide(name, str(stored), sha, n_params, today, old_code, judgments)
                now = today.get(name)
                decisions.append(Decision(path, name, str(stored), now.version if now else None, outcome, detail))
    return decisions


def _read(path: str) -> dict:
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise InfrastructureError(f"{path}: not a readable asv file ({exc})") from None


def apply(decisions: list[Decision]) -> list[str]:
    """Rewrite the stored version of every decision that rewrites, each file in its own JSON layout.
    Every file is prepared before any is written, so a bad one leaves the folder as it was."""
    by_file: dict[str, dict[str, str]] = {}
    for d in decisions:
        if d.rewrites:
            by_file.setdefault(d.path, {})[d.benchmark] = d.target
    prepared = []
    for path, targets in sorted(by_file.items()):
        try:
            with open(path) as fh:
                text = fh.read()
            doc = json.loads(text)
            vi = doc["result_columns"].index("version")
            for name, target in targets.items():
                doc["results"][name][vi] = target
            prepared.append((path, dumps_like(text, doc)))
        except InfrastructureError as exc:
            raise InfrastructureError(f"{path}: {exc}") from None
        except (OSError, ValueError, KeyError, IndexError) as exc:
            raise InfrastructureError(f"{path}: not a readable asv file ({exc!r})") from None
    for path, text in prepared:
        write_text(path, text)
    return [path for path, _ in prepared]


def retire(decisions: list[Decision], results_dir: str, archive_dir: str) -> list[str]:
    """Move every judged-changed entry (stored code judged to measure something else: asv publish would
    drop it as stale) out of its result file into the same-named file under `archive_dir`, which keeps
    the file's columns and commit facts; returns the paths written. Nothing is lost, and the published
    history holds only what its graphs draw. Every file is prepared before any is written."""
    by_file: dict[str, set[str]] = {}
    for d in decisions:
        if d.outcome == "judged-changed":
            by_file.setdefault(d.path, set()).add(d.benchmark)
    prepared = []
    for path, names in sorted(by_file.items()):
        text = open(path).read()
        doc = json.loads(text)
        target = os.path.join(archive_dir, os.path.relpath(path, results_dir))
        archived = json.loads(open(target).read()) if os.path.isfile(target) else {**doc, "results": {}}
        for name in sorted(names):
            archived["results"][name] = doc["results"].pop(name)
        prepared += [(target, json.dumps(archived, indent=1, sort_keys=True)), (path, dumps_like(text, doc))]
    for path, text in prepared:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_text(path, text)
    return [path for path, _ in prepared]


def code_diff(decision: Decision, repo: str, results_dir: str, benchmark_dir: str = "benchmarks") -> str:
    """The unified diff from the stored commit's code to today's, for reviewing an unreviewed decision."""
    sha = str(_read(decision.path)["commit_hash"])
    old = _OldCode(repo, benchmark_dir).get(sha, decision.benchmark)
    now = _today_suite(results_dir, repo, benchmark_dir)[decision.benchmark]
    return "".join(difflib.unified_diff((old.code + "\n").splitlines(True), (now.code + "\n").splitlines(True),
                                        f"{decision.benchmark} @ {sha[:8]} (sha256 {old.code_hash})",
                                        f"{decision.benchmark} today (sha256 {now.code_hash})"))


def log_line(decision: Decision, results_dir: str) -> str:
    action = f"{decision.stored[:12]} -> {decision.target}" if decision.rewrites else f"left {decision.stored[:12]}"
    return "\t".join((os.path.relpath(decision.path, results_dir), decision.benchmark, decision.outcome, action,
                      decision.detail))


__all__ = ["Decision", "Judgment", "LEFT", "REWRITES", "apply", "code_diff", "load_judgments", "log_line",
           "machines_under", "plan", "retire"]
