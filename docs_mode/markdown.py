"""Markdown sections, read with a CommonMark parser (markdown-it-py, the ``docs`` extra).

Every top-level block the parser reports (paragraph, list, table, HTML block, fenced or
indented code) is one piece with the source lines the parser maps it to, so a code fence
is always whole and a ``# comment`` inside one is never a heading. ATX and setext headings
start sections; YAML front matter (MkDocs, Jekyll) is a piece of the preamble.
"""

from __future__ import annotations

import re
from functools import lru_cache

from docs_mode.sections import Section, SectionBuilder
from docs_mode.text import source_lines

__all__ = ["markdown_sections"]

_FRONT_MATTER_END = re.compile(r"^(---|\.\.\.)\s*$")


@lru_cache(maxsize=1)
def _parser():  # -> markdown_it.MarkdownIt
    from docs_mode.extra import need

    markdown_it = need("markdown_it", "markdown-it-py")
    return markdown_it.MarkdownIt("commonmark").enable("table")


def _front_matter_lines(lines: list[str]) -> int:
    """How many lines of YAML front matter open the file (0 when there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for number, line in enumerate(lines[1:], start=2):
        if _FRONT_MATTER_END.match(line):
            return number
    return 0


def _inline_text(token) -> str:
    """A heading's text without its markup (``` `Request` class``` → ``Request class``)."""
    children = token.children or []
    text = "".join(c.content for c in children if c.type in ("text", "code_inline"))
    return " ".join(text.split()) or token.content.strip()


def markdown_sections(path: str, text: str) -> list[Section]:
    """The sections of a Markdown file, one per heading, with 1-based line ranges."""
    lines = source_lines(text)
    skipped = _front_matter_lines(lines)
    body = [""] * skipped + lines[skipped:]  # same line numbers, front matter blanked
    builder = SectionBuilder(path, lines)
    if skipped:
        builder.piece(1)
    tokens = _parser().parse("\n".join(body))
    for index, token in enumerate(tokens):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        line = token.map[0] + 1
        if token.type == "heading_open":
            builder.heading(line, int(token.tag[1:]), _inline_text(tokens[index + 1]))
        builder.piece(line)
    return builder.finish(len(lines))
