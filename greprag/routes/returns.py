"""The class a receiver's factory returns.

``es = http.parse_etags(value)`` and then ``es.``: the router probes ``def parse_etags``,
whose signature says ``-> ds.ETags``; the members wanted are ETags'. In Java, a call is
the receiver (``CSVFormat.builder().setQuoteMode(ALL).``): the probe of the called
method finds ``public Builder setQuoteMode(...)``, and Builder's members are wanted. The
imports of the file that defines the method say which file defines the class, so the
grep route takes that class's header line as found, without a search (as for bases,
``routes.bases``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial

from greprag.context import LocalContext, member_receiver
from greprag.languages import words
from greprag.models import Candidate, QueryPlan
from greprag.router.names import receiver_call
from greprag.routes.bases import PY_CLASS_LINE, ClassSite, LinesOf, RepoFiles, locate_class

__all__ = ["NOT_JAVA_CLASSES", "java_returned_class", "returned_class", "returned_classes"]

SIGNATURE_LINES = 8  # a def's lines read for its return annotation
BODY_LINES = 40  # an unannotated def's lines read for its first return
FACTORY_HITS = 2  # definitions of the factory whose returned class is read
_RETURNS = re.compile(r"->\s*(.+?)\s*:\s*(?:#.*)?$")
_OPTIONAL = re.compile(r"^(?:typing\.|t\.)?Optional\[(.+)\]$")
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*")
_RETURN = re.compile(r"^\s*(return|yield)\b\s*(?:([A-Za-z_][\w.]*)\s*\()?")
_NOT_CLASSES = frozenset({"None", "Self", "Any", "object", "NoReturn", "Never"})
# what stands where a Java declaration's type does but names no class
NOT_JAVA_CLASSES = words("void boolean byte char short int long float double var new return")
# the type written before a method's name: ``Builder``, ``CSVFormat.Builder<T>``, ``Map<K,
# List<V>>`` (generics nested once), then ``[]`` for an array
_JAVA_RETURN = (
    r"([A-Za-z_$][\w$.]*)\s*(?:<[^<>()]*(?:<[^<>()]*>[^<>()]*)*>)?\s*((?:\[\s*\])*)\s+{name}\s*\("
)


def returned_classes(
    ctx: LocalContext,
    plan: QueryPlan,
    candidates: Sequence[Candidate],
    lines_of: LinesOf,
    files: RepoFiles,
) -> list[ClassSite]:
    """The in-repo classes a factory's definitions (hits of the plan's definition or
    import probe of it) return: in Python, on ``x.`` with ``x = factory(...)`` in view;
    in Java, on ``factory(...).``."""
    if ctx.lang == "python":
        callee = ctx.assignments.get(member_receiver(ctx) or "")
        returned: Callable[[Sequence[str], int], str | None] = returned_class
    elif ctx.lang == "java":
        callee = receiver_call(ctx)
        returned = partial(java_returned_class, name=callee or "")
    else:
        return []
    if not callee:
        return []
    factory = callee.rsplit(".", 1)[-1]
    named = re.compile(rf"\b{re.escape(factory)}\b")  # an import probe seeks other names too
    probes = {
        i
        for i, q in enumerate(plan.queries)
        if (q.identifier == factory and q.kind == "method" and q.purpose == "definition")
        or (q.purpose == "import" and factory.islower() and factory in q.identifier.split(","))
    }
    found: list[ClassSite] = []
    seen = 0
    for cand in candidates:
        if probes.isdisjoint(cand.queries):
            continue
        lines = lines_of(cand.path)
        for line in cand.match_lines:
            if not named.search(lines[line - 1]):
                continue
            name = returned(lines, line)
            if not name:  # a line the probe matched that declares no class (``return f()``)
                continue
            site = locate_class(name, cand.path, lines, ctx.lang, lines_of, files)
            if site is not None and site not in found:
                found.append(site)
            seen += 1
        if seen >= FACTORY_HITS:
            break
    return found


def returned_class(lines: Sequence[str], line: int) -> str | None:
    """The class a def starting at ``line`` (1-based) returns, dotted as written: its
    return annotation's (``-> ds.ETags``; ``Optional[X]`` and ``X | None`` give X), or
    without one, the class its first ``return`` or ``yield`` constructs (``return
    Environment(...)``: a pytest fixture). None for a container, a typing name, or a
    first return that constructs no class. A class declared at ``line`` is its own
    factory (``rrule.rrule(...)``: a lower-case class called like a function)."""
    if declared := PY_CLASS_LINE.match(lines[line - 1]):
        return declared.group(1)
    signature, end = "", line
    for number, text in enumerate(lines[line - 1 : line - 1 + SIGNATURE_LINES], line):
        signature, end = signature + " " + text.strip(), number
        if _RETURNS.search(signature) or text.rstrip().endswith(":"):
            break
    match = _RETURNS.search(signature)
    if match is not None:
        return _annotated_class(match.group(1))
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for text in lines[end : end + BODY_LINES]:
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            return None  # the body ended
        if returned := _RETURN.match(text):
            name = returned.group(2)
            return name if name and name.rsplit(".", 1)[-1][:1].isupper() else None
    return None


def java_returned_class(lines: Sequence[str], line: int, name: str) -> str | None:
    """The class Java method ``name``, declared at ``line`` (1-based), returns: the type
    written before its name (``Builder`` of ``public Builder setTrim(boolean trim)``,
    ``CSVFormat.Builder``, ``List`` of ``List<String>``). None for a primitive, an array
    or a type variable."""
    header = " ".join(text.strip() for text in lines[max(0, line - 2) : line])
    match = re.search(_JAVA_RETURN.format(name=re.escape(name)), header)
    if match is None or match.group(2) or match.group(1) in NOT_JAVA_CLASSES:
        return None
    type_name = match.group(1)
    return None if len(type_name) == 1 else type_name


def _annotated_class(annotation: str) -> str | None:
    annotation = annotation.strip("\"' ")
    if optional := _OPTIONAL.match(annotation):
        annotation = optional.group(1)
    kinds = [part.strip("\"' ") for part in annotation.split("|")]
    named = [k for k in kinds if k not in _NOT_CLASSES]
    if len(named) != 1 or not _DOTTED.fullmatch(named[0]):
        return None
    name = named[0]
    return None if name.rsplit(".", 1)[-1] in _NOT_CLASSES else name
