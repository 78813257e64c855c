"""Chunks for the dense index: code at syntactic units, documentation at its sections.

Documentation files (Markdown, reStructuredText, plain text, HTML: the docs profile's
file types) are chunked by ``docs_mode`` into the same sections docs mode searches and
packs, so a dense hit and a grep hit on one section have one identity. A section embeds
its heading path, then its text.

A chunk covers a whole unit (its line range is what the route returns) but embeds only
its head: a method's class header line, then the signature, the doc comment above it
(Javadoc, ``//``, decorators: moved below the signature, markers stripped), the docstring
and first lines of the body, capped at ``MAX_EMBED_CHARS`` (the model truncates at
``max_seq_length`` word pieces anyway; the cap keeps tokenization cheap). Signature first
because the model reads only the first word pieces: a long Javadoc would push the name
out. The embedded text never contains the path, so moved code keeps its content hash and
its vector.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from greprag.files import split_lines
from greprag.languages import language_for_path
from greprag.syntax import Span, file_spans

CHUNKER_VERSION = 3
MAX_EMBED_CHARS = 700
SMALL_CLASS_LINES = 40
MODULE_GROUP_LINES = 40

_TRIVIAL_PREFIXES = (
    "import ",
    "from ",
    "package ",
    "using ",
    "#include",
    "use ",
    "}",
    ")",
    "]",
    "#",
    "//",
    "/*",
    "*",
    "@",
    "pass",
)
_LEADING_PREFIXES = ("/*", "*", "//", "#", "@")  # doc comments and annotations
_COMMENT_MARKS_RE = re.compile(r"^(?:/\*\*?|\*/|\*|//+|#+)\s?|\s*\*/$")


@dataclass(frozen=True)
class Chunk:
    """One indexed unit of a file: 1-based inclusive lines, symbol path, embedded text."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    text: str

    @property
    def key(self) -> str:
        """Content hash of the embedded text: the embedding cache key."""
        return hashlib.sha1(self.text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    symbol: str
    context: str = ""  # e.g. the class header line of a method


def chunk_file(path: str, text: str) -> list[Chunk]:
    """Split one file into chunks; an empty list for binary or empty files."""
    if "\0" in text[:8192] or not text.strip():
        return []
    from docs_mode.profile import load_profile  # docs mode loads only for the index

    if PurePosixPath(path).suffix.lower() in load_profile().extensions():
        return _section_chunks(path, text)
    lines = split_lines(text)
    chunks = []
    for unit in _code_units(path, text, lines):
        body = _embed_text(unit, lines)
        if body:
            chunks.append(Chunk(path, unit.start, unit.end, unit.symbol, body))
    return chunks


def code_units(path: str, text: str) -> list[tuple[int, int, str]]:
    """The (start, end, symbol) of each unit a code file is chunked into: whole
    definitions, big classes split into members, code between definitions in windows."""
    return [(u.start, u.end, u.symbol) for u in _code_units(path, text, split_lines(text))]


def _section_chunks(path: str, text: str) -> list[Chunk]:
    """One chunk per docs-mode section; none when the format's parser is missing."""
    from docs_mode.units import file_sections
    from greprag.errors import DocsError

    try:
        sections = file_sections(path, text)
    except DocsError:
        return []
    chunks = []
    for section in sections:
        head = " > ".join(section.breadcrumb)
        body = " ".join(section.text.split())
        embedded = f"{head}\n{body}" if head else body
        if body:
            chunks.append(
                Chunk(path, section.start_line, section.end_line, head, embedded[:MAX_EMBED_CHARS])
            )
    return chunks


def _embed_text(unit: _Unit, lines: Sequence[str]) -> str:
    body = [line.strip() for line in lines[unit.start - 1 : unit.end] if line.strip()]
    lead = _leading_count(body)
    doc = [t for t in (_COMMENT_MARKS_RE.sub("", line).strip() for line in body[:lead]) if t]
    body = [*body[lead : lead + 1], *doc, *body[lead + 1 :]]
    parts = [unit.context.strip()] if unit.context else []
    size = len(parts[0]) if parts else 0
    for line in body:
        parts.append(line)
        size += len(line) + 1
        if size >= MAX_EMBED_CHARS:
            break
    return "\n".join(parts)[:MAX_EMBED_CHARS]


def _leading_count(stripped: list[str]) -> int:
    """How many of the first lines are doc comments or annotations (not the declaration)."""
    count = 0
    while count < len(stripped) and stripped[count].startswith(_LEADING_PREFIXES):
        count += 1
    return count if count < len(stripped) else 0


def _code_units(path: str, text: str, lines: Sequence[str]) -> list[_Unit]:
    lang = language_for_path(path)
    spans = file_spans(path, text, lang.name if lang else None)
    return _units_in(spans, lines, 1, len(lines), "", "")


def _units_in(
    spans: list[Span], lines: Sequence[str], lo: int, hi: int, prefix: str, context: str
) -> list[_Unit]:
    """Units of lines ``lo..hi``: outermost definitions, big classes split into members,
    and the code between definitions (imports-only stretches skipped)."""
    tops: list[Span] = []
    for span in spans:
        if (
            lo <= span.start_line
            and span.end_line <= hi
            and not (tops and span.start_line <= tops[-1].end_line)
        ):
            tops.append(span)
    units: list[_Unit] = []
    cursor = lo
    for span in tops:
        units.extend(_gap_units(lines, cursor, span.start_line - 1, prefix, context))
        symbol = prefix + (span.name or "")
        inner = [s for s in spans if span.start_line < s.start_line and s.end_line <= span.end_line]
        if span.kind == "class" and inner and span.end_line - span.start_line >= SMALL_CLASS_LINES:
            head = [line.strip() for line in lines[span.start_line - 1 : span.header_end_line]]
            header = " ".join(head[_leading_count(head) :])[:200]
            first = inner[0].start_line
            units.append(
                _Unit(span.start_line, max(first - 1, span.header_end_line), symbol, context)
            )
            units.extend(_units_in(inner, lines, first, span.end_line, symbol + ".", header))
        else:
            units.append(_Unit(span.start_line, span.end_line, symbol, context))
        cursor = span.end_line + 1
    units.extend(_gap_units(lines, cursor, hi, prefix, context))
    return units


def _substantive(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(_TRIVIAL_PREFIXES)


def _gap_units(lines: Sequence[str], lo: int, hi: int, prefix: str, context: str) -> list[_Unit]:
    """Code between definitions in windows of ``MODULE_GROUP_LINES``, if it says anything."""
    body = [n for n in range(lo, hi + 1) if _substantive(lines[n - 1])]
    if not body:
        return []
    symbol = prefix.rstrip(".") or "<module>"
    units = []
    for a in range(body[0], body[-1] + 1, MODULE_GROUP_LINES):
        b = min(a + MODULE_GROUP_LINES - 1, body[-1])
        if any(a <= n <= b for n in body):
            units.append(_Unit(a, b, symbol, context))
    return units
