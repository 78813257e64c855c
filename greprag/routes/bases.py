"""The in-repo base classes of the classes a member access reached.

``blue.`` with ``blue = Blueprint(...)``: the plan probes ``class Blueprint``, but the
member wanted is often inherited (``register_error_handler`` is defined on Blueprint's
base's base, ``Scaffold``). The first pass's class hits name their bases; the imports of
the file each sits in say which file defines each base. Reading those headers and files
costs no search: the grep route takes each base's header line as found.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from greprag.context import ImportRef, LocalContext, member_receiver, parse_imports
from greprag.imports import resolve_imports
from greprag.languages import IDENTIFIER_RE
from greprag.models import Candidate, Query, QueryPlan
from greprag.router.names import self_member
from greprag.router.probes import definition

__all__ = [
    "PY_CLASS_LINE",
    "ClassSite",
    "LinesOf",
    "RepoFiles",
    "enclosing_bases",
    "header_bases",
    "inherited_bases",
    "locate_class",
    "site_probe",
]

BASE_CLASSES = 3  # base classes probed per retrieval
BASE_DEPTH = 2  # levels of bases followed: the bases, and theirs
BASE_HEADS = 4  # class hits of the first pass whose bases are read
MIN_WEIGHT = 0.5  # a class probe this strong stands for the receiver's type
HEADER_LINES = 4  # a class header's lines read for its bases
BASES_PER_HEADER = 4  # a header's bases looked up, first first
_CLASS_PURPOSES = frozenset({"definition", "wildcard", "second hop"})
PY_CLASS_LINE = re.compile(r"^\s*class\s+(\w+)\b")  # a Python class's line; its name
_PY_HEADER = re.compile(r"^\s*class\s+\w+\s*(?:\[[^\]]*\])?\s*\(")
_BRACE_HEADER = re.compile(r"\b(?:class|interface|enum|record)\s+\w+([^{]*)")
_BRACKETS = re.compile(r"\[[^\[\]]*\]|<[^<>]*>")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_JAVA_BASE = re.compile(r"\b[A-Z][\w$]*(?:\.[A-Z][\w$]*)*")


@dataclass(frozen=True)
class ClassSite:
    """A class as its file defines it (an import alias resolved), with its header's
    1-based line."""

    name: str
    path: str
    line: int


LinesOf = Callable[[str], Sequence[str]]


@dataclass(frozen=True)
class RepoFiles:
    """Where imports are resolved: the repository, and its files of the language when
    listed (None: ask the file system); made per retrieval, it keeps each file's
    imports once read."""

    repo: Path
    known: Set[str] | None
    _imports: dict[str, list[ImportRef]] = field(default_factory=dict, compare=False)

    def imports_in(self, path: str, lines: Sequence[str], lang: str) -> list[ImportRef]:
        """The imports of ``path``, whose lines are ``lines``."""
        if path not in self._imports:
            self._imports[path] = parse_imports(lines, lang)
        return self._imports[path]


def inherited_bases(
    ctx: LocalContext,
    plan: QueryPlan,
    candidates: Sequence[Candidate],
    lines_of: LinesOf,
    files: RepoFiles,
) -> list[ClassSite]:
    """The in-repo bases of the classes the plan's strong class probes hit, and theirs,
    unless the plan probes them already; none unless the cursor is on a member access
    (``item.``). On ``self.`` / ``this.``, the bases of the enclosing class's bases (the
    plan probes the members of the bases themselves)."""
    if ctx.lang not in ("python", "java"):
        return []
    if self_member(ctx) is not None:
        return _bases_of_bases(ctx, lines_of, files)
    if member_receiver(ctx) is None:
        return []
    strong = {
        i
        for i, q in enumerate(plan.queries)
        if q.kind == "class" and q.purpose in _CLASS_PURPOSES and q.weight >= MIN_WEIGHT
    }
    probed = {
        q.identifier
        for q in plan.queries
        if q.kind == "class" and q.purpose in ("definition", "second hop") and not q.paths
    }
    heads: list[tuple[str, int]] = []
    for cand in candidates:
        if strong.isdisjoint(cand.queries):
            continue
        heads += [(cand.path, line) for line in cand.match_lines]
        if len(heads) >= BASE_HEADS:
            break
    found = _walk(ctx.lang, heads[:BASE_HEADS], lines_of, files)
    return [b for b in found if b.name not in probed][:BASE_CLASSES]


def site_probe(site: ClassSite, lang: str | None, weight: float) -> Query:
    """The definition probe (purpose ``second hop``) that finds ``site``, limited to its
    file."""
    probe = definition(site.name, "class", lang, weight)
    return replace(probe, purpose="second hop", paths=(site.path,))


def enclosing_bases(
    ctx: LocalContext, lines_of: LinesOf, files: RepoFiles, levels: int = BASE_DEPTH
) -> list[ClassSite]:
    """The in-repo bases of the class enclosing the cursor, and theirs up to ``levels``
    levels, nearest first."""
    if not (ctx.path and ctx.lang and ctx.enclosing_class and ctx.class_bases):
        return []
    header = _class_line(lines_of(ctx.path), ctx.enclosing_class, ctx.lang)
    if not header:
        return []
    return _walk(ctx.lang, [(ctx.path, header)], lines_of, files, levels)


def _bases_of_bases(ctx: LocalContext, lines_of: LinesOf, files: RepoFiles) -> list[ClassSite]:
    """The bases of the bases of the class enclosing the cursor, nearest first."""
    bases = enclosing_bases(ctx, lines_of, files, levels=1)
    if not bases:
        return []
    further = _walk(ctx.lang or "", [(b.path, b.line) for b in bases], lines_of, files)
    return [b for b in further if b not in bases][:BASE_CLASSES]


def _walk(
    lang: str,
    heads: list[tuple[str, int]],
    lines_of: LinesOf,
    files: RepoFiles,
    levels: int = BASE_DEPTH,
) -> list[ClassSite]:
    """The bases of the classes whose headers start at ``heads``, then theirs, up to
    ``levels`` levels, nearest first, each once."""
    found: list[ClassSite] = []
    seen: set[ClassSite] = set()
    frontier = heads
    for _ in range(levels):
        following: list[tuple[str, int]] = []
        for path, line in frontier:
            lines = lines_of(path)
            for name in header_bases(lines, line, lang)[:BASES_PER_HEADER]:
                base = locate_class(name, path, lines, lang, lines_of, files, line)
                if base is not None and base not in seen:
                    seen.add(base)
                    found.append(base)
                    following.append((base.path, base.line))
        frontier = following
    return found


def header_bases(lines: Sequence[str], line: int, lang: str) -> list[str]:
    """The base class names (dotted as written) of the class header at ``line``; [] when
    the line starts no class header."""
    header = ""
    for text in lines[line - 1 : line - 1 + HEADER_LINES]:
        header += " " + text.strip()
        if text.rstrip().endswith((":", "{")):
            break
    if lang == "python":
        match = _PY_HEADER.match(header)
        if match is None:
            return []
        inside = _unbracketed(header[match.end() :]).split(")", 1)[0]
        return [
            part.strip()
            for part in inside.split(",")
            if _DOTTED.fullmatch(part.strip()) and part.strip() != "object"
        ]
    match = _BRACE_HEADER.search(header)
    if match is None:
        return []
    return list(dict.fromkeys(_JAVA_BASE.findall(_unbracketed(match.group(1)))))


def _unbracketed(text: str) -> str:
    """``text`` without its (nested) ``[...]`` and ``<...>`` parts: type arguments."""
    while (shorter := _BRACKETS.sub("", text)) != text:
        text = shorter
    return text


def locate_class(
    dotted: str,
    path: str,
    lines: Sequence[str],
    lang: str,
    lines_of: LinesOf,
    files: RepoFiles,
    subclass: int = 0,
) -> ClassSite | None:
    """Where the class written ``dotted`` in ``path`` is defined: in that file, in the
    file an import points to, or (Java) beside it in its package, or (Java) inside the
    class that qualifies it (``CSVFormat.Builder``) wherever that is. ``subclass``: the line
    of the header that names it, never its definition (``class Model(Model)``, the base
    imported under the same name)."""
    head, _, name = dotted.rpartition(".")
    if not IDENTIFIER_RE.fullmatch(name):
        return None
    if not head and (line := _class_line(lines, name, lang, skip=subclass)):
        return ClassSite(name, path, line)
    local = head.split(".", 1)[0] if head else name
    for ref in files.imports_in(path, lines, lang):
        if ref.local_name != local and not (lang == "java" and ref.name == name):
            continue
        target = _resolved(ref, path, lang, files)
        if target is None:
            return None
        real = ref.name if ref.name and not head and lang == "python" else name
        found = _class_line(lines_of(target), real, lang)
        if found:
            return ClassSite(real, target, found)
        return _reexported(real, target, lang, lines_of, files)
    if lang == "java" and not head:
        beside = posixpath.join(posixpath.dirname(path), f"{name}.java")
        if files.known is None or beside in files.known:
            found = _class_line(lines_of(beside), name, lang)
            return ClassSite(name, beside, found) if found else None
    elif lang == "java" and "." not in head:  # ``Outer.Inner``, Outer not imported
        outer = locate_class(head, path, lines, lang, lines_of, files)
        found = _class_line(lines_of(outer.path), name, lang) if outer else None
        return ClassSite(name, outer.path, found) if outer and found else None
    return None


def _reexported(
    name: str, path: str, lang: str, lines_of: LinesOf, files: RepoFiles
) -> ClassSite | None:
    """``name`` imported into ``path`` (a package's ``__init__.py`` re-exporting it):
    the file it comes from, when it is defined there."""
    for ref in files.imports_in(path, lines_of(path), lang):
        if ref.local_name == name and ref.name:
            target = _resolved(ref, path, lang, files)
            found = _class_line(lines_of(target), ref.name, lang) if target else 0
            return ClassSite(ref.name, target, found) if target and found else None
    return None


def _resolved(ref: ImportRef, path: str, lang: str, files: RepoFiles) -> str | None:
    """The repo file ``ref`` (an import in ``path``) points to."""
    ctx = LocalContext(before="", window="", prefix="", path=path, lang=lang, imports=[ref])
    return resolve_imports(ctx, files.repo, files.known).get(ref.local_name)


def _class_line(lines: Sequence[str], name: str, lang: str, skip: int = 0) -> int:
    """The 1-based line of ``class name`` in ``lines``, other than ``skip`` (0: none)."""
    pattern = _class_pattern(name, lang)
    for number, text in enumerate(lines, 1):
        if name in text and number != skip and pattern.search(text):
            return number
    return 0


@lru_cache(maxsize=512)
def _class_pattern(name: str, lang: str) -> re.Pattern[str]:
    if lang == "python":
        return re.compile(rf"^\s*class\s+{re.escape(name)}\b")
    return re.compile(rf"\b(?:class|interface|enum|record)\s+{re.escape(name)}\b")
