"""Flag parsing shared by the commands: bad values become UsageErrors (exit 2) naming the flag."""

from __future__ import annotations

from pathlib import Path

from rlperf.errors import UsageError


def parse_positive_list(text: str, what: str) -> list[int]:
    """'1,2,4' -> [1, 2, 4], deduplicated in order; rejects empty, non-integer and non-positive values."""
    values = []
    for part in (p.strip() for p in str(text).split(",")):
        try:
            value = int(part)
        except ValueError:
            value = None
        if value is None or value <= 0:
            raise UsageError(f"{what}: {part!r} is not a positive integer; give a comma-separated list "
                             f"of positive integers, e.g. {what} 1,2,4")
        if value not in values:
            values.append(value)
    return values


def at_least(flag: str, value: int, minimum: int) -> int:
    """`value` if it is >= `minimum`, else a UsageError naming the flag."""
    if value < minimum:
        raise UsageError(f"{flag}: {value} must be >= {minimum}")
    return value


def check_writable(*paths: Path) -> None:
    """Refuse unwritable outputs before anything is measured: a probe file in the nearest existing folder
    (os.access says yes to root even where nothing can be created, e.g. under /proc)."""
    import tempfile

    for path in paths:
        if path.is_dir() and path.suffix:
            raise UsageError(f"{path}: is a directory, expected a file path")
        parent = path.parent if path.suffix else path
        while not parent.exists():
            parent = parent.parent
        try:
            with tempfile.TemporaryFile(dir=parent):
                pass
        except OSError as exc:
            raise UsageError(f"{path}: cannot write there ({parent}: {exc.strerror})") from None


def writable_file(path: Path, flag: str) -> Path:
    """One output file named by `flag`, checked before measuring: not a folder, and creatable (check_writable)."""
    if path.is_dir():
        raise UsageError(f"{flag}: {path} is a directory; give a file path such as {path}/results.json")
    try:
        check_writable(path)
    except UsageError as exc:
        raise UsageError(f"{flag}: cannot create {exc}") from None
    return path


def threads_in_reach(requested: list[int], cap: int) -> None:
    """A sweep whose every thread count is above the machine would measure nothing: say so, exit 2."""
    if requested and not any(t <= cap for t in requested):
        raise UsageError(f"--threads {','.join(map(str, requested))}: every count is above this machine's "
                         f"{cap}, so nothing would be measured; valid: 1..{cap}")


def task_help() -> str:
    """The --task help of the workload commands, naming the tasks and sims the configs define."""
    from rlperf.workload import available_tasks

    return "task; valid (with their sims): " + "; ".join(
        f"{task} ({', '.join(sims)})" for task, sims in sorted(available_tasks().items()))


PLOT_ONLY_HELP = "with --plot-only: the folder the re-rendered files go to (default out/{command}/plot-only)"
OVERWRITE_TRACKED_HELP = ("with --plot-only: allow writing into a folder holding files tracked by git "
                          "(a committed report is otherwise never rewritten)")


def add_plot_only_flags(p, command: str, plot_dir: bool = True) -> None:
    """--plot-dir (when the command lacks one) and --overwrite-tracked, for commands with --plot-only."""
    if plot_dir:
        p.add_argument("--plot-dir", default=None, help=PLOT_ONLY_HELP.format(command=command))
    p.add_argument("--overwrite-tracked", action="store_true", help=OVERWRITE_TRACKED_HELP)


def add_report_flags(p, command: str, report: str, default_out: str) -> None:
    """The output flags of a command whose report (`report`, e.g. analysis.md) and charts sit next to its
    JSON (replay, e2e): --out-json, --plot-dir, --no-plots, --plot-only PATH and its companions."""
    p.add_argument("--out-json", default=default_out, help=f"results JSON; {report} and charts go next to it")
    p.add_argument("--plot-dir", default=None, help=f"charts and {report}; default: the folder of --out-json "
                                                    f"(with --plot-only: out/{command}/plot-only)")
    p.add_argument("--no-plots", action="store_true", help=f"write the JSON and {report} only, no charts")
    p.add_argument("--plot-only", metavar="PATH", default=None,
                   help=f"rebuild charts and {report} from a saved results JSON, measuring nothing")
    add_plot_only_flags(p, command, plot_dir=False)


def only_with_plot_only(args, plot_dir: bool = True) -> None:
    """A measuring run refuses the --plot-only companions instead of ignoring them."""
    given = (("--plot-dir", plot_dir and args.plot_dir), ("--overwrite-tracked", args.overwrite_tracked))
    flags = [flag for flag, on in given if on]
    if flags:
        raise UsageError(f"{' and '.join(flags)} only appl{'y' if len(flags) > 1 else 'ies'} with --plot-only PATH")


def tracked_files(folder: Path) -> list[str]:
    """Files under `folder` that git tracks ([] outside a repository, without git, or for a new folder)."""
    import subprocess

    folder = Path(folder).resolve()
    if not folder.is_dir():
        return []
    try:
        out = subprocess.run(["git", "-C", str(folder), "ls-files", "-z", "--", "."],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return [name for name in out.stdout.split("\0") if name] if out.returncode == 0 else []


def plot_only_dir(args, command: str) -> Path:
    """Where --plot-only writes: --plot-dir when given, else out/<command>/plot-only (never next to its
    input unless asked); a folder holding git-tracked files only with --overwrite-tracked."""
    folder = Path(args.plot_dir) if args.plot_dir else Path("out") / command / "plot-only"
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--plot-dir: {folder} is a file; give a folder")
    tracked = tracked_files(folder)
    if tracked and not args.overwrite_tracked:
        raise UsageError(f"--plot-dir: {folder} holds {len(tracked)} file(s) tracked by git (e.g. {tracked[0]}); "
                         f"a committed report is not rewritten by default: give another --plot-dir, or "
                         f"--overwrite-tracked to rewrite it")
    check_writable(folder)
    return folder


class malformed_rows:
    """Around rendering a saved document: a KeyError/TypeError/... from its rows is bad input (exit 2)
    naming the file, never a traceback. Staged writers make sure nothing was written by then."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, _tb) -> bool:
        if kind is not None and issubclass(kind, (KeyError, TypeError, ValueError, IndexError, AttributeError)):
            raise UsageError(f"{self.path}: malformed rows, cannot render them ({kind.__name__}: {exc}); "
                             f"re-run the measurement to regenerate the file") from None
        return False
