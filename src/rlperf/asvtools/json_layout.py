"""Rewrite an asv JSON file in the layout it already has, so a one-key edit is a one-key diff.

asv writes results on one line (`util.write_json(compact=True)`), merged files are compacted, and
machine.json is indented; a file in none of these layouts is refused rather than reformatted.
"""

from __future__ import annotations

import json

from rlperf.errors import InfrastructureError

# the layouts asv's and rlperf's writers use: asv results (one line), compacted merges, machine.json
LAYOUTS = ({}, {"separators": (",", ":")}, {"indent": 4}, {"indent": 4, "sort_keys": True})


def layout_of(text: str, doc) -> dict:
    """json.dumps keywords that reproduce `text` from `doc` byte for byte (a trailing newline aside)."""
    for layout in LAYOUTS:
        dumped = json.dumps(doc, **layout)
        if text in (dumped, dumped + "\n"):
            return layout
    raise InfrastructureError("its JSON layout is none this tool can reproduce; refusing to rewrite it")


def dumps_like(text: str, doc) -> str:
    """`doc` in the layout of `text` (which it was read from), keeping its trailing newline or its absence."""
    layout = layout_of(text, json.loads(text))
    return json.dumps(doc, **layout) + ("\n" if text.endswith("\n") else "")


__all__ = ["LAYOUTS", "dumps_like", "layout_of"]
