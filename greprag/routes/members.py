"""The class of a receiver whose type nothing names, from the members it is seen with.

``bcc.`` with ``bcc = environment.bytecode_cache``: no type in view, but a few lines up
the code calls ``bcc.get_bucket(...)``. The plan probes ``def get_bucket``; when its
definitions sit in one or two classes, the receiver is most likely one of them, and the
member wanted is among their others (``set_bucket``). The grep route takes each such
class's header line as found, as for a second hop, without a search (``routes.bases``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from greprag.context import LocalContext, member_receiver
from greprag.models import Candidate, QueryPlan
from greprag.routes.bases import PY_CLASS_LINE, ClassSite, LinesOf
from greprag.syntax.scan import enclosing_class

__all__ = ["classes_of_members"]

MAX_CLASSES = 2  # classes taken for the receiver; a member defined in more says nothing
_DEF = re.compile(r"^\s+(?:async\s+)?def\s+(\w+)\s*\(")


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
            if method is None or method.group(1) not in used:
                continue
            head = enclosing_class(lines, number)
            header = PY_CLASS_LINE.match(lines[head - 1]) if head else None
            if header:
                site = ClassSite(header.group(1), cand.path, head)
                holders.setdefault(method.group(1), {})[site] = None
    counts = Counter(
        site for sites in holders.values() if len(sites) <= MAX_CLASSES for site in sites
    )
    return [site for site, _ in counts.most_common(MAX_CLASSES)]  # ties: first found first
