"""Adaptive routing: run the dense route only where grep evidence is weak.

``auto`` adds ``dense`` when grep found nothing or little, when every identifier it
searched is generic, when the cursor is on a member access whose receiver's type the
local context never names (``self.store.`` with ``store`` set elsewhere), when it is on a
member access of any object (``item.``: even with the type named, the member may be
inherited from a class the local context never names; not after ``self.``, an imported
module or a class name), or when the query is prose rather than code. Measured on the
benchmark's implicit subset, the wider member-access trigger is what lets dense help
(docs/benchmarks.md, "Dense route").
"""

from __future__ import annotations

import re

from greprag.context import LocalContext
from greprag.languages import is_generic
from greprag.models import Candidate, Query

FEW_HITS = 3
PROSE_WORD_SHARE = 0.7
_MEMBER_RE = re.compile(r"(?:\b(?:self|this)\.)?\b([A-Za-z_$][\w$]*)\.\s*[\w$]*$")
_WORD_RE = re.compile(r"[A-Za-z][a-z'’-]*[,.;:!?]?")
_SELF_NAMES = frozenset({"self", "this", "cls", "super"})
_ACCESS_RE = re.compile(r"([A-Za-z_$][\w$]*)(?:\([^()]*\)|\[[^\[\]]*\])?\.\s*[\w$]*$")


def is_prose(ctx: LocalContext) -> bool:
    """A natural-language question: no language and mostly plain words."""
    if ctx.lang is not None:
        return False
    tokens = (ctx.window or ctx.before).split()
    words = [t for t in tokens if _WORD_RE.fullmatch(t)]
    return len(tokens) >= 3 and len(words) >= PROSE_WORD_SHARE * len(tokens)


def untyped_receiver(ctx: LocalContext) -> str | None:
    """The receiver of a member access at the cursor when its type is nowhere named."""
    match = _MEMBER_RE.search(ctx.prefix)
    if match is None:
        return None
    receiver = match.group(1)
    known = set(ctx.annotations) | set(ctx.assignments)
    imported = {imp.local_name for imp in ctx.imports}
    if (
        receiver in _SELF_NAMES
        or receiver in known
        or f"self.{receiver}" in known
        or receiver in imported
        or receiver[:1].isupper()
    ):
        return None
    return receiver


def member_receiver(ctx: LocalContext) -> str | None:
    """The object of a member access at the cursor (``item.``, ``self.io_loop.``,
    ``get().``); None after ``self.``, an imported name or a class name."""
    match = _ACCESS_RE.search(ctx.prefix)
    if match is None:
        return None
    receiver = match.group(1)
    imported = {imp.local_name for imp in ctx.imports}
    if receiver in _SELF_NAMES or receiver in imported or receiver[:1].isupper():
        return None
    return receiver


def choose_routes(
    mode: str,
    *,
    grep_candidates: list[Candidate],
    queries: list[Query],
    ctx: LocalContext,
    dense_installed: bool,
) -> tuple[list[str], str]:
    """The routes to run (``grep`` and/or ``dense``) and a reason a person can read."""
    if mode == "grep":
        return ["grep"], "grep requested"
    if not dense_installed:
        return ["grep"], "dense extra not installed"
    if mode == "dense":
        return ["dense"], "dense requested"
    if mode != "auto":
        raise ValueError(f"unknown routes mode: {mode!r} (grep, dense or auto)")
    reasons = []
    if is_prose(ctx):
        reasons.append("prose query")
    if not grep_candidates:
        reasons.append("grep found nothing")
    elif len(grep_candidates) < FEW_HITS:
        reasons.append(f"grep found only {len(grep_candidates)} hit(s)")
    names = sorted({q.identifier for q in queries if q.identifier})
    if names and all(is_generic(n) for n in names):
        reasons.append(f"only generic identifiers ({', '.join(names)})")
    receiver = untyped_receiver(ctx)
    if receiver:
        reasons.append(f"member access on `{receiver}`, whose type the local context does not name")
    elif (receiver := member_receiver(ctx)) is not None:
        reasons.append(
            f"member access on `{receiver}`: the member may be inherited from a class "
            "the local context does not name"
        )
    if reasons:
        return ["grep", "dense"], "; ".join(reasons)
    return ["grep"], f"grep evidence strong ({len(grep_candidates)} hits)"
