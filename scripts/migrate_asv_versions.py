"""Carry stored asv results over to today's benchmark versions where they measure the same thing
(rlperf.asvtools.version_migration).

    python scripts/migrate_asv_versions.py [--results-dir results/asv] [--judgments FILE] [--log FILE]
                                           [--dry-run] [--show-diff] [--retire-judged-changed ARCHIVE]
                                           [MACHINE ...]

Prints one line per stored (result, benchmark) whose version is not today's: the file, the benchmark, the
outcome, what was rewritten or left, and why; then the count per outcome. Without --dry-run the rewritten
files are saved (each in its own JSON layout) and the same lines are appended to the log with the command,
the date and the repository's HEAD. --retire-judged-changed moves the entries judged to measure something
else (which asv publish would drop as stale) into the same-named files under ARCHIVE: kept, not drawn. Exit 2 on bad arguments or judgments, 5 when benchmarks.json does not
describe today's benchmarks/ or a file cannot be read or rewritten (nothing is half-written).
"""

import argparse
import collections
import datetime
import os
import shlex
import sys

from rlperf.asvtools import version_migration as vm
from rlperf.asvtools.git import git
from rlperf.errors import InfrastructureError, UsageError

DEFAULT_JUDGMENTS = "results/asv/version-judgments.toml"
DEFAULT_LOG = "results/asv/version-migration.log"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("machines", nargs="*", metavar="MACHINE", help="default: every machine folder")
    parser.add_argument("--results-dir", default="results/asv")
    parser.add_argument("--repo", default=".", help="the git repository holding the stored commits")
    parser.add_argument("--benchmark-dir", default="benchmarks", help="relative to --repo")
    parser.add_argument("--judgments", default=DEFAULT_JUDGMENTS, help="reviewed judgments (TOML)")
    parser.add_argument("--log", default=DEFAULT_LOG, help="appended to unless --dry-run")
    parser.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    parser.add_argument("--retire-judged-changed", metavar="ARCHIVE",
                        help="move entries judged to measure something else (stale to asv publish) into the "
                             "same-named files under ARCHIVE, e.g. results/asv-retired")
    parser.add_argument("--show-diff", action="store_true", help="print the code diff of each unreviewed change")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isdir(args.results_dir):
        print(f"migrate_asv_versions: no results folder {args.results_dir}", file=sys.stderr)
        return 2
    known = vm.machines_under(args.results_dir)
    missing = [m for m in args.machines if m not in known]
    if missing:
        print(f"migrate_asv_versions: no results for {', '.join(missing)} under {args.results_dir}; "
              f"machines there: {', '.join(known) or 'none'}", file=sys.stderr)
        return 2
    try:
        judgments = vm.load_judgments(args.judgments) if os.path.exists(args.judgments) or \
            args.judgments != DEFAULT_JUDGMENTS else []
        decisions = [d for d in vm.plan(args.results_dir, args.repo, args.machines or known, judgments,
                                        args.benchmark_dir) if d.outcome != "current"]
        lines = [vm.log_line(d, args.results_dir) for d in decisions]
        if args.retire_judged_changed:
            lines = [line.replace("\tleft ", f"\tretired to {args.retire_judged_changed}: ", 1)
                     if d.outcome == "judged-changed" else line for d, line in zip(decisions, lines)]
        for d, line in zip(decisions, lines):
            print(line)
            if args.show_diff and d.outcome == "unreviewed":
                print(vm.code_diff(d, args.repo, args.results_dir, args.benchmark_dir))
        counts = collections.Counter(d.outcome for d in decisions)
        print("summary: " + (", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "nothing to migrate"))
        if args.dry_run or not decisions:
            return 0
        written = vm.apply(decisions)
        if args.retire_judged_changed:
            written += vm.retire(decisions, args.results_dir, args.retire_judged_changed)
        head = git(args.repo, "rev-parse", "HEAD")
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        with open(args.log, "a") as fh:
            fh.write(f"# {stamp} python scripts/migrate_asv_versions.py {shlex.join(sys.argv[1:] if argv is None else argv)}"
                     f"\n# repository HEAD {head}; {len(written)} file(s) rewritten; {dict(sorted(counts.items()))}\n")
            fh.write("\n".join(lines) + "\n")
    except UsageError as exc:
        print(f"migrate_asv_versions: {exc}", file=sys.stderr)
        return 2
    except InfrastructureError as exc:
        print(f"migrate_asv_versions: {exc}", file=sys.stderr)
        return 5
    return 0


if __name__ == "__main__":
    sys.exit(main())
