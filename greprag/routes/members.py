"""The class of a receiver whose type nothing names, from the members it is seen with.

``bcc.`` with ``bcc = environment.bytecode_cache``: no type in view, but a few lines up
the code calls ``bcc.get_bucket(...)``. The plan probes ``def get_bucket``; when its
definitions sit in one or two classes, the receiver is most likely one of them, and the
member wanted is among their others (``set_bucket``). The grep route takes each such
class's header line as found, as for a second hop, without a search (``routes.bases``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from greprag.context import LocalContext, member_receiver
from greprag.models import Candidate, QueryPlan
from greprag.routes.bases import ClassSite, LinesOf

__all__ = ["classes_of_members"]

MAX_CLASSES = 2  # classes taken for the receiver; a member defined in more says nothing
MAX_SCAN = 4000  # lines read up from a method for the class that holds it
_DEF = re.compile(r"^(\s+)(?:async\s+)?def\s+(\w+)\s*\(")
_CLASS = re.compile(r"^\s*class\s+(\w+)\b")


def classes_of_members(
    ctx: LocalContext, plan: QueryPlan, candidates: Sequence[Candidate], lines_of: LinesOf
) -> list[ClassSite]:
    """In Python, on ``x.`` with no annotation for x: the classes defining the methods
    called on x before the cursor (hits of the plan's definition probes of them), those
    defining the most of them first; a method defined in more than ``MAX_CLASSES``
    classes counts for none."""
    receiver = member_receiver(ctx) if ctx.lang == "python" else None
    if receiver is None or receiver in ctx.annotations:
        return []
    used = set(re.findall(rf"(?<![\w.]){re.escape(receiver)}\.(\w+)\s*\(", ctx.before))
    probes = {
        i
        for i, q in enumerate(plan.queries)
        if q.purpose == "definition" and q.kind == "method" and q.identifier in used
    }
    if not probes:
        return []
    holders: dict[str, dict[ClassSite, None]] = {}
    for cand in candidates:
        if probes.isdisjoint(cand.queries):
            continue
        lines = lines_of(cand.path)
        for number in cand.match_lines:
            method = _DEF.match(lines[number - 1]) if number <= len(lines) else None
            if method is None or method.group(2) not in used:
                continue
            site = _enclosing_class(cand.path, lines, number, len(method.group(1)))
            if site is not None:
                holders.setdefault(method.group(2), {})[site] = None
    telling = [sites for sites in holders.values() if len(sites) <= MAX_CLASSES]
    counts: dict[ClassSite, int] = {}
    for sites in telling:
        for site in sites:
            counts[site] = counts.get(site, 0) + 1
    ranked = sorted(counts, key=lambda s: -counts[s])  # stable: first found first on ties
    return ranked[:MAX_CLASSES]


def _enclosing_class(path: str, lines: Sequence[str], number: int, indent: int) -> ClassSite | None:
    """The class whose body holds the def at line ``number`` (indented ``indent``): the
    first line above it indented less, when that line is a class header."""
    for above in range(number - 2, max(-1, number - 2 - MAX_SCAN), -1):
        text = lines[above]
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(text) - len(stripped) < indent:
            header = _CLASS.match(text)
            return ClassSite(header.group(1), path, above + 1) if header else None
    return None
