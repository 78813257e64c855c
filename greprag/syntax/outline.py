"""Outlines: a unit shrunk to what a reader needs to call it.

The packer uses an outline when a whole class does not fit the budget: header lines,
the first docstring or doc-comment line, and every member's signature with its body
elided (``...`` for indented bodies, ``{ ... }`` for braced ones); a Python class's
``__init__`` keeps the ``self.x = ...`` lines that make its instance attributes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from greprag.files import LinesMemo, file_text
from greprag.syntax.analysis import (
    analyze,
    expand_range,
    file_spans,
    kept_skeleton,
    region_analysis,
    skeleton_ahead,
    skeleton_analysis,
    spans_language,
)
from greprag.syntax.members import class_analysis, units_analysis
from greprag.syntax.scan import class_end
from greprag.syntax.spans import Analysis, Span, smallest_containing

__all__ = [
    "Outlined",
    "class_outlined",
    "header_of",
    "members_named",
    "members_whole",
    "opens_members",
    "outlined",
    "outlines_ahead",
    "range_outlined",
]

_CLASS_OUTLINES = LinesMemo(512)  # per file content, across retrievals
# outlined from a skeleton with code blocks emptied (tests/comparison pins them equal)
_SKELETON_LANGUAGES = frozenset({"java"})

_ENUM_RE = re.compile(r"\benum\b")
_MAX_MEMBER_HEADER = 6  # longer member signatures keep their first and last lines
_ANNOTATION_LINE = re.compile(r"\s*@")  # a decorator (Python) or an annotation (Java, ...)
_MAX_INIT_ATTRIBUTES = 12  # ``self.x = ...`` lines shown under a class's ``__init__``
MAX_WHOLE_MEMBERS = 2  # members ``members_whole`` shows whole
MIN_WHOLE_HITS = 2  # matched lines a member holds to be shown whole
_INIT_RE = re.compile(r"\s*def\s+__init__\s*\(")
_SELF_ATTRIBUTE_RE = re.compile(r"\s*self\.(\w+)\s*(:[^=]+)?=[^=]")
_DOCSTRING_RE = re.compile(r"([rRuUbBfF]{0,2})(\"\"\"|'''|\"|')")


@dataclass(frozen=True)
class Outlined:
    """An outline's ``text`` and where its class members went: per member, its first
    and last line in the file and the rows [first, end) of ``text`` it became."""

    text: str
    members: tuple[tuple[int, int, int, int], ...] = ()

    def shifted(self, offset: int) -> Outlined:
        """The same with member lines ``offset`` further down the file."""
        rows = tuple((s + offset, e + offset, lo, hi) for s, e, lo, hi in self.members)
        return Outlined(self.text, rows)


_NONE = Outlined("")  # no outline


def outlined(
    text: str,
    lang: str | None,
    start: int,
    end: int,
    spans: list[Span] | None = None,
    analysis: Analysis | None = None,
) -> Outlined:
    """Outline of the unit at [start, end]: header lines, first docstring line, and for
    class-like units every member's signature with bodies elided (``...`` / ``{ ... }``);
    with the rows each class member became. ``analysis``: the text's, when the caller
    has it (else the text is analyzed)."""
    analysis = analysis or analyze(text, lang)
    start, end = expand_range(text, lang, start, end, spans, analysis)
    defs = tuple(sorted(spans, key=lambda s: s.start_line)) if spans is not None else analysis.defs
    lines = text.split("\n")
    if "\r" in text:
        lines = [line.rstrip("\r") for line in lines]
    writer = _Outliner(lines, defs, analysis.stmts, analysis.indent_style)
    units = _top_units((*defs, *analysis.stmts), start, end)
    container = smallest_containing(defs, start, end)
    if not units and container is not None:
        writer.definition(container, top=True)
        return Outlined("\n".join(writer.out), tuple(writer.rows))
    covered = start
    for unit in units:
        writer.loose(covered, unit.start_line - 1)
        if unit.kind == "statement":
            writer.statement(unit)
        else:
            writer.definition(unit, top=True)
        covered = unit.end_line + 1
    writer.loose(covered, end)
    return Outlined("\n".join(writer.out), tuple(writer.rows))


def opens_members(path: str) -> bool:
    """Whether the packer shows the members that matched whole in the outlines of
    ``path``: in a braced language a file is mostly one class, and a hit merged into it
    came out as one signature of its outline. Not Python, where those bodies cost import
    cursors the budget of what came after (docs/benchmarks.md)."""
    return spans_language(path, None) not in (None, "python")


def nested_class_end(path: str, lines: Sequence[str], head: int) -> int | None:
    """The line where the class declared on line ``head`` of ``path`` closes, in a braced
    language (``scan.class_end``); None in Python or where the scan cannot tell."""
    lang = spans_language(path, None)
    return None if lang in (None, "python") else class_end(lines, lang, head)


def members_whole(shown: Outlined, lines: Sequence[str], matched: frozenset[int]) -> str:
    """``shown``'s text with the members holding most of the lines ``matched`` (at least
    ``MIN_WHOLE_HITS`` each, at most ``MAX_WHOLE_MEMBERS``; the first on a tie) shown
    whole (``lines``: the file's); its text as it is when none does."""
    held = [
        (sum(member[0] <= n <= member[1] for n in matched), member[0], member)
        for member in shown.members
    ]
    chosen = sorted((h for h in held if h[0] >= MIN_WHOLE_HITS), key=lambda h: (-h[0], h[1]))
    return _opened(shown, lines, [m for _, _, m in chosen[:MAX_WHOLE_MEMBERS]])


def members_named(shown: Outlined, lines: Sequence[str], name: str) -> str:
    """``shown``'s text with the members defining ``name`` (the first
    ``MAX_WHOLE_MEMBERS``: overloads) shown whole; its text as it is when none does. A
    member's first three lines are read for its header: decorators or annotations may
    come first."""
    named = header_of(name)
    chosen = [
        member
        for member in shown.members
        if any(named.search(line) for line in lines[member[0] - 1 : member[0] + 2])
    ]
    return _opened(shown, lines, chosen[:MAX_WHOLE_MEMBERS])


def header_of(name: str) -> re.Pattern[str]:
    """What a header line defining the function ``name`` holds: the name, then ``(``."""
    return re.compile(rf"\b{re.escape(name)}\s*\(")


def _opened(shown: Outlined, lines: Sequence[str], members: list[tuple[int, int, int, int]]) -> str:
    """``shown``'s text with ``members`` (its ``members`` entries) whole."""
    rows = shown.text.split("\n")
    for first, last, low, high in sorted(members, key=lambda m: -m[2]):
        rows[low:high] = lines[first - 1 : last]
    return "\n".join(rows)


def class_outlined(path: str, lines: Sequence[str], start: int, first: int, end: int) -> Outlined:
    """The outline of the class that lines [start, end] of ``path`` are: a class span
    starting in [start, first] (decorators or a doc comment above the header line
    ``first`` may be in the range) and ending in the range's last three lines; "" when
    no class is.

    A Python class is read off its indentation (``members.class_analysis``) unless that
    scan is unsure; a Java class off the parse of its skeleton (``skeleton_analysis``: its
    methods' bodies and its comments emptied) when that parses cleanly, and not at all
    when its brace scan closes it outside the range's last three lines. Otherwise a class
    (a Python one: at the left margin) is analyzed on its own lines when they parse
    cleanly by themselves: the rest of a long file then costs nothing. Any other is
    analyzed with its whole file. Cached per file content (the ``lines`` object).
    """
    lang = spans_language(path, None)

    def in_region(region: tuple[str, Analysis]) -> Outlined:
        text, analysis = region  # lines [start, end] alone
        offset = start - 1
        spans = list(analysis.defs)
        found = _class_in(text, lang, spans, 1, first - offset, end - offset, analysis)
        return found.shifted(offset)

    def compute() -> Outlined:
        if lang == "python":  # the indentation scan knows a class's members, mostly
            scanned = class_analysis(lines, start, end)
            if scanned is False:
                return _NONE  # no parse says otherwise: it would cost up to 40 ms
            found = in_region(scanned) if scanned is not None else _NONE
            if found.text:
                return found
        if lang in _SKELETON_LANGUAGES:  # its methods' bodies need no parse
            close = class_end(lines, lang, first)
            if close is not None and not end - 2 <= close <= end:
                return _NONE  # the class surely ends elsewhere: no parse would find it here
            whole = kept_skeleton(lines, lang)  # warmed: the whole file's, parsed ahead
            if whole is not None:
                found = _class_in(
                    file_text(lines), lang, list(whole.defs), start, first, end, whole
                )
                if found.text:
                    return found
            shell = skeleton_analysis(lines, lang, start, end)
            if shell is not None:
                return in_region(shell)
        # an indented Python class is no statement by itself; a braced class is, anywhere
        indented = lang == "python" and lines[first - 1][:1].isspace()
        alone = None if indented else region_analysis(lines, lang, start, end)
        if alone is not None:
            return in_region(alone)
        text = file_text(lines)
        return _class_in(text, lang, file_spans(path, text, lang), start, first, end)

    return _CLASS_OUTLINES.get(lines, ("class", lang, start, first, end), compute)


def outlines_ahead(path: str, lines: Sequence[str], stop: Callable[[], bool]) -> bool:
    """Parse what ``class_outlined`` would for a file's classes before a retrieval asks:
    the whole file's skeleton, in a language outlined from skeletons (nothing in
    others), given up when ``stop`` says so (asked as the parse goes: a long file's parse
    would hold the interpreter ~20 ms); False, parsing nothing, once the skeletons kept
    fill their memo."""
    lang = spans_language(path, None)
    return lang not in _SKELETON_LANGUAGES or skeleton_ahead(lines, lang, stop)


def range_outlined(path: str, lines: Sequence[str], start: int, end: int) -> Outlined:
    """The outline of lines [start, end] of ``path``, several top-level units (module
    statements around a class, say): statements by their first line, definitions by
    their headers, a class with its members' signatures; "" for a Python range its
    indentation scan (``members.units_analysis``) is unsure of, mostly one that cuts a
    unit (a parse cost up to 40 ms there, for no better outline). Cached per file
    content."""
    lang = spans_language(path, None)

    def compute() -> Outlined:
        if lang == "python":
            scanned = units_analysis(lines, start, end)
            if scanned is None:
                return _NONE
            text, analysis = scanned
            found = outlined(text, lang, 1, end - start + 1, list(analysis.defs), analysis)
            return found.shifted(start - 1)
        text = file_text(lines)
        return outlined(text, lang, start, end, file_spans(path, text, lang))

    return _CLASS_OUTLINES.get(lines, ("range", lang, start, end), compute)


def _class_in(
    text: str,
    lang: str | None,
    spans: list[Span],
    start: int,
    first: int,
    end: int,
    analysis: Analysis | None = None,
) -> Outlined:
    """``outlined`` of the class span of ``spans`` starting in [start, first] and ending
    in [end - 2, end]; no text when there is none."""
    for span in spans:
        if (
            span.kind == "class"
            and start <= span.start_line <= first
            and end - 2 <= span.end_line <= end
        ):
            return outlined(text, lang, span.start_line, span.end_line, spans, analysis)
    return _NONE


def _top_units(units: tuple[Span, ...], start: int, end: int) -> list[Span]:
    """The outermost units inside [start, end], in order (nested ones dropped)."""
    inside = sorted(
        (u for u in units if start <= u.start_line and u.end_line <= end),
        key=lambda s: (s.start_line, -s.end_line),
    )
    result: list[Span] = []
    for unit in inside:
        if not result or unit.start_line > result[-1].end_line:
            result.append(unit)
    return result


def _parameters_open(header: list[str]) -> int:
    """The index of the header line that opens a member's parameters: the first holding a
    ``(`` past its annotations or decorators and their arguments (0 if none does)."""
    depth = 0
    for index, line in enumerate(header):
        if depth > 0 or _ANNOTATION_LINE.match(line):
            depth = max(0, depth + line.count("(") - line.count(")"))
        elif "(" in line:
            return index
    return 0


class _Outliner:
    """Writes an outline line by line into ``out``; one per call of :func:`outline`.

    ``indent`` says bodies are marked by indentation (elided as ``...``) rather than by
    braces (elided as ``{ ... }``)."""

    def __init__(
        self, lines: Sequence[str], defs: tuple[Span, ...], stmts: tuple[Span, ...], indent: bool
    ) -> None:
        self.lines, self.defs, self.stmts, self.indent = lines, defs, stmts, indent
        self.out: list[str] = []
        self.rows: list[tuple[int, int, int, int]] = []  # see ``Outlined.members``

    def line(self, number: int) -> str:
        """The text of line ``number`` (1-based)."""
        return self.lines[number - 1]

    def loose(self, first: int, last: int) -> None:
        """Lines between units: kept unless blank."""
        self.out.extend(self.line(n) for n in range(first, last + 1) if self.line(n).strip())

    def statement(self, unit: Span) -> None:
        """A statement: its first line, with ``...`` when it goes on."""
        first = self.line(unit.start_line)
        if unit.end_line == unit.start_line:
            self.out.append(first)
        elif not self.indent and first.rstrip().endswith("{"):
            self.out.append(first.rstrip() + " ... }")
        else:
            self.out.append(first.rstrip() + " ...")

    def definition(self, span: Span, top: bool) -> None:
        """A definition's header with its body elided. ``top``: the unit being outlined
        (doc comments, docstring and members shown); else a member (signature only,
        long ones shortened; a nested enum keeps its constants)."""
        if span.start_line == span.end_line:
            self.out.append(self.line(span.start_line))
            return
        header_end = _header_end(span)
        mark = len(self.out)
        self._header(span.start_line, header_end, top)
        if len(self.out) == mark:
            self.out.append(self.line(header_end))
        if not top:
            self._shorten(mark)
        # members of the unit itself; of a nested class only an enum's constants and fields
        members = span.kind == "class" and (
            top or any(_ENUM_RE.search(line) for line in self.out[mark:][-2:])
        )
        if self.indent:
            docstring = self._docstring(header_end, span.end_line) if top else None
            if docstring is not None:
                self.out.append(docstring[1])
            if members:
                shown = self._members(span, docstring[0] if docstring else 0, methods=top)
                if shown or docstring:
                    return
            if top or docstring is not None:
                self.out.append(self._body_indent(span, header_end) + "...")
            else:
                self.out[-1] = self.out[-1].rstrip() + " ..."
            return
        if members:
            self._members(span, 0, methods=top)
            closing = self.line(span.end_line)
            if header_end < span.end_line and closing.strip().startswith("}"):
                self.out.append(closing)
            return
        if header_end >= span.end_line:  # no body: keep the whole declaration
            self.out.extend(self.lines[header_end : span.end_line])
            return
        last = self.out.pop()
        brace = last.rfind("{")
        signature = last[:brace].rstrip() if brace >= 0 else last.rstrip()
        if not signature.strip() and self.out:  # '{' on a line of its own
            signature = self.out.pop().rstrip()
        self.out.append(signature + " { ... }")

    def _header(self, first: int, last: int, top: bool) -> None:
        """Header lines; a doc comment becomes its first sentence, dropped for members."""
        number = first
        while number <= last:
            stripped = self.line(number).strip()
            indent = self.line(number)[: len(self.line(number)) - len(self.line(number).lstrip())]
            if stripped.startswith("/**"):
                close = number
                while close < last and "*/" not in self.line(close):
                    close += 1
                if top:
                    self.out.append(indent + "/** " + self._doc_summary(number, close) + " */")
                number = close + 1
            elif stripped.startswith("//") and number < last:
                run = number
                while run < last and self.line(run + 1).strip().startswith("//"):
                    run += 1
                if top:
                    self.out.append(self.line(number))
                number = run + 1
            else:
                self.out.append(self.line(number))
                number += 1

    def _doc_summary(self, first: int, last: int) -> str:
        """The first non-empty line of a ``/** ... */`` comment, without its markers."""
        for number in range(first, last + 1):
            content = self.line(number).strip()
            content = content.removeprefix("/**").removesuffix("*/").strip().lstrip("*").strip()
            if content:
                return content
        return ""

    def _docstring(self, header_end: int, end: int) -> tuple[int, str] | None:
        """(line, rendering) of a Python docstring's first line right after the header."""
        number = header_end + 1
        while number <= end and not self.line(number).strip():
            number += 1
        if number > end:
            return None
        raw = self.line(number)
        stripped = raw.strip()
        match = _DOCSTRING_RE.match(stripped)
        if match is None:
            return None
        quote, rest = match.group(2), stripped[match.end() :]
        if quote in rest:
            return number, raw
        content = rest.strip()
        if not content and number < end:
            content = self.line(number + 1).strip().removesuffix(quote).strip()
        indent = raw[: len(raw) - len(raw.lstrip())]
        return number, f"{indent}{match.group(1)}{quote}{content}{quote}"

    def _body_indent(self, span: Span, header_end: int) -> str:
        """The indent of the first body line (the header's plus four spaces if none)."""
        for number in range(header_end + 1, span.end_line + 1):
            line = self.line(number)
            if line.strip():
                return line[: len(line) - len(line.lstrip())]
        header = self.line(span.start_line)
        return header[: len(header) - len(header.lstrip())] + "    "

    def _shorten(self, mark: int) -> None:
        """Collapse a member's long multi-line signature to its lines up to the first ``(``
        and its last line; the line that opens its parameters too, when an annotation's
        or a decorator's ``(`` came first."""
        header = self.out[mark:]
        if len(header) <= _MAX_MEMBER_HEADER:
            return
        first = next((i for i, line in enumerate(header) if "(" in line), 0)
        kept = header[: first + 1]
        opens = _parameters_open(header)
        if first < opens < len(header) - 1:  # else the declaration is the last line, kept
            kept.append(header[opens])
            first = opens
        if first >= len(header) - 2:
            return
        below = header[first + 1]
        marker = below[: len(below) - len(below.lstrip())] + "..."
        self.out[mark:] = [*kept, marker, header[-1]]

    def _members(self, span: Span, skip: int, methods: bool) -> int:
        """Outline the direct members of a class-like span; returns how many."""
        inner = [
            unit
            for unit in (*self.defs, *self.stmts)
            if span.header_end_line < unit.start_line
            and unit.end_line <= span.end_line
            and unit != span
            and unit.start_line != skip
        ]
        members = _top_units(tuple(inner), span.header_end_line + 1, span.end_line)
        if not methods:
            members = [member for member in members if member.kind == "statement"]
        for member in members:
            if member.kind == "statement":
                self.statement(member)
            else:
                mark = len(self.out)
                self.definition(member, top=False)
                if self.indent and methods and _INIT_RE.match(self.line(member.start_line)):
                    self._instance_attributes(member)
                if methods:
                    self.rows.append((member.start_line, member.end_line, mark, len(self.out)))
        return len(members)

    def _instance_attributes(self, init: Span) -> None:
        """The first line of each ``self.name = ...`` in a Python ``__init__`` (first one
        per name), under its signature: the attributes a caller reads off an instance."""
        header_end = _header_end(init)
        indent = self._body_indent(init, header_end)
        seen: set[str] = set()
        rows = []
        for number in range(header_end + 1, init.end_line + 1):
            found = _SELF_ATTRIBUTE_RE.match(self.line(number))
            if found is None or found.group(1) in seen:
                continue
            seen.add(found.group(1))
            row = self.line(number).rstrip()
            rows.append(indent + row.lstrip() + ("" if _ends_statement(row) else " ..."))
        if rows:
            self.out[-1] = self.out[-1].rstrip().removesuffix(" ...")
            self.out.extend([*rows[:_MAX_INIT_ATTRIBUTES], indent + "..."])


def _header_end(span: Span) -> int:
    """The last line of ``span``'s header, kept within the span."""
    return min(max(span.header_end_line, span.start_line), span.end_line)


def _ends_statement(line: str) -> bool:
    """Whether a line of code closes every bracket it opens (a one-line statement)."""
    depth = 0
    for char in line:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
    return depth <= 0 and not line.endswith("\\")
