#!/usr/bin/env python3
"""Point the repository's spec citations at its own docs, and check that every cited section exists.

Code and docs cite the workload and limits pages by section code: `workloads.md C4`, `workloads.md
A3/A4`, `limits-and-practices.md 1.2-1.4`, `limits §3.8`, `limits-and-practices 4.2 rule 7`, or a bare
`§3.2` (always a limits section). The rewrite turns each into its short form on the project's pages,
`docs/workloads.md C4` or `docs/limits.md 3.8`; it is idempotent.

    python scripts/rewrite_citations.py --check        # exit 1 listing citations whose section is missing
    python scripts/rewrite_citations.py --diff         # show what a rewrite would change, write nothing
    python scripts/rewrite_citations.py [PATH ...]     # rewrite in place (default: every tracked text file)

Sections are the headings of docs/workloads.md (`### C4. ...`) and docs/limits.md (`### 3.8 ...`); a
`rule N` must be item N of a numbered list in its section. A bare code in running text, such as "(C3)"
right after a full citation, is left alone and not checked. Exit codes: 0 ok, 1 missing sections, 2 usage.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DOCS = {"workloads": "docs/workloads.md", "limits": "docs/limits.md"}
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".sh", ".cfg", ".ini", ".json", ""}
SKIP_DIRS = {".git", ".venv", "results", "html", ".asv", "node_modules", "__pycache__", "build", "dist"}
# The rewrite's own source and test spell citation forms as examples and fixtures: never rewrite them.
SELF = {"scripts/rewrite_citations.py", "tests/project/test_citations.py"}

_W_CODE = r"[A-E](?:\d{1,2})?(?![\w.])"
_L_CODE = r"§?\d+(?:\.\d+)?(?!\.?\d)"
_JOIN = r"\s*(?:,|/|-|–|and)\s*"
_WORKLOADS = re.compile(
    rf"(?<![\w/.-])(?:docs/)?workloads\.md(?P<sep>\s+(?:section\s+|§\s?)?)(?P<codes>{_W_CODE}(?:{_JOIN}{_W_CODE})*)")
_LIMITS = re.compile(
    rf"(?<![\w/.-])(?:docs/limits\.md|limits-and-practices(?:\.md)?|limits\.md|limits(?=\s*§))"
    rf"(?P<sep>\s+(?:section\s+)?|\s*)(?P<codes>{_L_CODE}(?:{_JOIN}{_L_CODE})*)(?P<rule>\s+rule\s+\d+)?")
_BARE = re.compile(r"(?<![\w.])§\s?(?P<codes>\d+(?:\.\d+)?)(?!\.?\d)")
_HEADING = re.compile(r"^#{2,4}\s+(?P<code>[A-E](?:\d{1,2})?|\d+(?:\.\d+)?)\.?\s", re.M)


@dataclass(frozen=True)
class Citation:
    path: str
    line: int
    start: int
    end: int
    text: str
    doc: str  # "workloads" | "limits"
    codes: tuple[str, ...]
    codes_at: int  # where the codes start within `text`
    rule: int | None = None

    @property
    def short(self) -> str:
        """The rewritten form: the project's page, then the codes as written (without § or 'section').
        A line break between page and codes is kept (with its indentation), so lines never move."""
        codes = self.text[self.codes_at:].replace("§", "").strip()
        gap = self.text[:self.codes_at]
        if "\n" not in gap:
            return f"{DOCS[self.doc]} {codes}"
        after = gap[gap.rindex("\n") + 1:]
        return f"{DOCS[self.doc]}\n{after[:len(after) - len(after.lstrip())]}{codes}"


def _expand(codes: str) -> tuple[str, ...]:
    """'1.2-1.4' -> 1.2, 1.3, 1.4; 'A3/A4' -> A3, A4; '§3.1, §3.2' -> 3.1, 3.2."""
    codes = codes.replace("§", "").replace("–", "-")
    out: list[str] = []
    for part in re.split(r"\s*(?:,|/|and)\s*", codes.strip()):
        if "-" in part:
            lo, hi = (p.strip() for p in part.split("-", 1))
            m_lo, m_hi = re.fullmatch(r"(.*?)(\d+)", lo), re.fullmatch(r"(.*?)(\d+)", hi)
            if m_lo and m_hi and m_lo.group(1) == m_hi.group(1):
                out += [f"{m_lo.group(1)}{i}" for i in range(int(m_lo.group(2)), int(m_hi.group(2)) + 1)]
                continue
            out += [lo, hi]
        elif part:
            out.append(part.strip())
    return tuple(out)


def find_citations(path: str, text: str) -> list[Citation]:
    """Every citation in `text`, in order; bare § codes are limits sections."""
    found: list[Citation] = []
    taken: list[tuple[int, int]] = []

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    for doc, pattern in (("workloads", _WORKLOADS), ("limits", _LIMITS)):
        for m in pattern.finditer(text):
            rule = m.groupdict().get("rule")
            end = m.end("rule") if rule else m.end("codes")
            found.append(Citation(path, line_of(m.start()), m.start(), end, text[m.start():end], doc,
                                  _expand(m.group("codes")), m.start("codes") - m.start(),
                                  int(rule.split()[-1]) if rule else None))
            taken.append((m.start(), end))
    for m in _BARE.finditer(text):
        if any(lo <= m.start() < hi for lo, hi in taken):
            continue
        found.append(Citation(path, line_of(m.start()), m.start(), m.end(), m.group(0), "limits",
                              _expand(m.group("codes")), m.start("codes") - m.start()))
    return sorted(found, key=lambda c: c.start)


def sections(doc_text: str) -> dict[str, str]:
    """Section code -> its text (up to the next heading of any level that carries a code)."""
    heads = list(_HEADING.finditer(doc_text))
    return {h.group("code"): doc_text[h.end():(heads[i + 1].start() if i + 1 < len(heads) else len(doc_text))]
            for i, h in enumerate(heads)}


def missing(cit: Citation, anchors: dict[str, dict[str, str]]) -> list[str]:
    """What the citation names that its page lacks ([] when everything resolves)."""
    have = anchors.get(cit.doc, {})
    out = [f"{DOCS[cit.doc]} {c}" for c in cit.codes if c not in have]
    if cit.rule is not None and not out:
        body = have[cit.codes[-1]]
        if not re.search(rf"^\s*{cit.rule}\.\s", body, re.M):
            out.append(f"{DOCS[cit.doc]} {cit.codes[-1]} rule {cit.rule}")
    return out


def rewrite(text: str, path: str = "") -> str:
    """`text` with every citation in its short form on the project's pages."""
    out, pos = [], 0
    for cit in find_citations(path, text):
        out += [text[pos:cit.start], cit.short]
        pos = cit.end
    return "".join(out) + text[pos:]


def repo_files(root: Path, *, with_targets: bool = False) -> list[str]:
    """Tracked text files (git), else every text file under `root` outside build and result folders;
    the two pages themselves only for checking (their own links are never rewritten)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
        files = [f for f in listed.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            files += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames]
    targets = set() if with_targets else set(DOCS.values()) | SELF
    return sorted(f for f in files if Path(f).suffix in TEXT_SUFFIXES and f not in targets
                  and Path(f).parts[0] not in SKIP_DIRS and (root / f).is_file())


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="list citations whose section is missing; exit 1 if any")
    mode.add_argument("--diff", action="store_true", help="print the lines a rewrite would change; write nothing")
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent), help="repository root")
    parser.add_argument("paths", nargs="*", help="files to process, relative to --root (default: all)")
    args = parser.parse_args(argv)
    root = Path(args.root)
    docs = {doc: root / rel for doc, rel in DOCS.items()}
    absent = [str(p) for p in docs.values() if not p.is_file()]
    if absent:
        print(f"rewrite_citations: error: missing {', '.join(absent)}; the pages the citations point at", file=sys.stderr)
        return 2
    anchors = {doc: sections(p.read_text(encoding="utf-8")) for doc, p in docs.items()}
    files = args.paths or repo_files(root, with_targets=args.check)
    unknown = [f for f in files if not (root / f).is_file()]
    if unknown:
        print(f"rewrite_citations: error: no such file under {root}: {', '.join(unknown)}", file=sys.stderr)
        return 2
    problems, count, changed = [], 0, []
    for rel in files:
        text = _read(root / rel)
        if text is None:
            continue
        cits = find_citations(rel, text)
        count += len(cits)
        if args.check:
            problems += [f"{rel}:{c.line}: {c.text!r} -> missing {', '.join(m)}" for c in cits
                         if (m := missing(c, anchors))]
            continue
        new = rewrite(text, rel)
        if new == text:
            continue
        changed.append(rel)
        if args.diff:
            for n, (a, b) in enumerate(zip(text.splitlines(), new.splitlines()), 1):
                if a != b:
                    print(f"{rel}:{n}:\n  - {a.strip()}\n  + {b.strip()}")
        else:
            tmp = root / f"{rel}.citations-tmp"
            tmp.write_text(new, encoding="utf-8")
            os.replace(tmp, root / rel)
    if args.check:
        for p in problems:
            print(p)
        print(f"{count} citations in {len(files)} files: "
              + (f"{len(problems)} name a missing section" if problems else "every cited section exists"))
        return 1 if problems else 0
    verb = "would change" if args.diff else "rewrote"
    print(f"{count} citations; {verb} {len(changed)} files" + (f": {', '.join(changed)}" if changed else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
