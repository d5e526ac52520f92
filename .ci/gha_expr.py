"""A small evaluator for the GitHub Actions expressions this project's workflows use.

`||`, `&&`, `!`, `==`, `!=`, parentheses, 'string' literals, dotted context paths and `always()`, with
GitHub's semantics: a missing property is null, `==` on strings ignores case, `||` / `&&` return an
operand. Anything else is rejected, so a workflow that outgrows it fails loudly instead of being misread.
Used by tests/project/test_workflows.py (the trust guard) and .ci/workflow_steps.py (running the steps here).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\s*(?:(\|\||&&|==|!=|!|\(|\))|'((?:[^']|'')*)'|([A-Za-z_][\w.-]*(?:\(\))?))")


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"unsupported expression syntax at {text[pos:pos + 20]!r}")
        op, string, name = m.groups()
        out.append(("op", op) if op else ("str", string.replace("''", "'")) if string is not None else ("name", name))
        pos = m.end()
    return out


def evaluate(text: str, context: dict):
    """The value of a GitHub `if:` expression (without `${{ }}`) against `context`."""
    toks, i = _tokens(text), 0

    def peek():
        return toks[i] if i < len(toks) else ("end", "")

    def take():
        nonlocal i
        i += 1
        return toks[i - 1]

    def lookup(path: str):
        if path == "always()":
            return True
        if path.endswith("()"):
            raise ValueError(f"unsupported function {path}")
        value = context
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def primary():
        kind, value = take()
        if (kind, value) == ("op", "("):
            inner = disjunction()
            assert take() == ("op", ")"), text
            return inner
        if (kind, value) == ("op", "!"):
            return not primary()
        if kind == "str":
            return value
        if kind == "name":
            literals = {"true": True, "false": False, "null": None}
            return literals[value] if value in literals else lookup(value)
        raise ValueError(f"unexpected {value!r} in {text!r}")

    def equality():
        left = primary()
        while peek() in (("op", "=="), ("op", "!=")):
            op = take()[1]
            right = primary()
            same = (left.lower() == right.lower()) if isinstance(left, str) and isinstance(right, str) \
                else left == right
            left = same if op == "==" else not same
        return left

    def conjunction():
        left = equality()
        while peek() == ("op", "&&"):
            take()
            right = equality()
            left = right if left else left
        return left

    def disjunction():
        left = conjunction()
        while peek() == ("op", "||"):
            take()
            right = conjunction()
            left = left if left else right
        return left

    value = disjunction()
    if peek()[0] != "end":
        raise ValueError(f"trailing tokens in {text!r}")
    return value


def substitute(text: str, context: dict) -> str:
    """`text` with every `${{ expr }}` replaced by its value (null as the empty string)."""
    def value(m):
        v = evaluate(m[1], context)
        return "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
    return re.sub(r"\$\{\{(.*?)\}\}", value, text)
