"""The type of a field the enclosing class inherits.

``header.`` inside ``class CpBands extends BandSet`` with ``header`` declared nowhere in
the file: ``BandSet`` declares ``protected SegmentHeader header;``, and SegmentHeader's
members are wanted. The bases are found as ``routes.bases`` finds them (imports, the
package beside); their files are read for the declaration, and the declared class is
located the same way from the base's file, so the grep route takes its header line as
found, without a search. A probe for ``header``'s definitions elsewhere would instead
find every class's own ``header``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from greprag.context import LocalContext, untyped_receiver
from greprag.routes.bases import ClassSite, LinesOf, RepoFiles, enclosing_bases, locate_class
from greprag.routes.returns import NOT_JAVA_CLASSES

__all__ = ["inherited_field_types"]


def inherited_field_types(
    ctx: LocalContext, lines_of: LinesOf, files: RepoFiles
) -> list[ClassSite]:
    """On ``name.`` with ``name`` declared nowhere in view, the in-repo class that the
    nearest base of the enclosing class declares it as (Java ``Type name;``, Python
    ``self.name = Type(...)`` or ``self.name: Type``); [] when none does."""
    if ctx.lang not in ("java", "python") or not ctx.class_bases:
        return []
    receiver = untyped_receiver(ctx)
    if receiver is None or (ctx.lang == "python" and not _on_self(ctx.prefix, receiver)):
        return []
    pattern = _declaration(receiver, ctx.lang)
    for base in enclosing_bases(ctx, lines_of, files):
        lines = lines_of(base.path)
        for text in lines:
            if receiver not in text or not (match := pattern.search(text)):
                continue
            type_name = next(g for g in match.groups() if g)
            if type_name in NOT_JAVA_CLASSES:
                return []
            site = locate_class(type_name, base.path, lines, ctx.lang, lines_of, files)
            return [site] if site else []  # the nearest base's declaration decides
    return []


def _on_self(prefix: str, receiver: str) -> bool:
    """Python: the access is ``self.receiver.`` (a bare name is a local, not a field)."""
    return re.search(rf"\bself\.{re.escape(receiver)}\.\s*\w*$", prefix) is not None


@lru_cache(maxsize=256)
def _declaration(name: str, lang: str) -> re.Pattern[str]:
    """A line declaring field ``name``; its first non-empty group is the class, dotted as
    written. ``return header;`` in a getter above the declaration declares nothing."""
    field = re.escape(name)
    if lang == "python":
        return re.compile(rf"\bself\.{field}\s*(?::\s*([A-Z][\w.]*)|=\s*([A-Z][\w.]*)\s*\()")
    return re.compile(
        r"^\s*(?:@[\w.]+\s+)*(?:(?:public|protected|private|static|final|transient|volatile)\s+)*"
        rf"(?!(?:return|new)\b)([A-Za-z_$][\w$.]*)\s*(?:<[^;=()]*>)?\s*(?:\[\s*\])*\s+{field}\s*[;=]"
    )
