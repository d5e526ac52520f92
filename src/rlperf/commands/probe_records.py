"""The record-keeping flags the probe scripts share: one new JSON record a process, tables from records.

A probe script measures one process into `--out` (a new file, checked before anything is measured: a record is
never replaced) or, with `--summarize`, turns records into Markdown (`--out-md` or stdout) without measuring.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Callable

from rlperf.atomic import write_text


def add_record_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--out", help="the JSON record of this process (a new file)")
    ap.add_argument("--summarize", nargs="+", metavar="JSON", help="records to tabulate (no measuring)")
    ap.add_argument("--out-md", help="with --summarize: write the Markdown here instead of stdout")


def summarized(args, summarize: Callable[[list[dict]], str]) -> bool:
    """With `--summarize`: write the records' tables and say so (the script then measures nothing)."""
    if not args.summarize:
        return False
    text = summarize([json.load(open(p)) for p in args.summarize])
    if args.out_md:
        write_text(args.out_md, text + "\n")
    else:
        print(text)
    return True


def check_new_out(ap: argparse.ArgumentParser, args) -> None:
    """Exit 2 (argparse) unless `--out` names a file that does not exist yet."""
    if not args.out:
        ap.error("measuring needs --out FILE (or --summarize JSON...)")
    if os.path.exists(args.out):
        ap.error(f"--out {args.out} exists; records are never replaced: name a new file")


__all__ = ["add_record_args", "check_new_out", "summarized"]
