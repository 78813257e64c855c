"""The spans every analyzer produces: definitions and statements with 1-based inclusive lines."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Analysis", "Span", "smallest_containing", "sorted_spans"]


@dataclass(frozen=True)
class Span:
    """One syntactic unit of a file; lines are 1-based and inclusive."""

    start_line: int
    end_line: int
    kind: str  # "class" | "function" | "statement"
    name: str | None
    header_end_line: int  # last line of the signature/header (the line with ':' or '{')


@dataclass(frozen=True)
class Analysis:
    """What an analyzer found in one file; widening and outlines read only this."""

    defs: tuple[Span, ...]  # class- and function-like definitions, sorted by start
    stmts: tuple[Span, ...]  # non-definition statements at top level and in class bodies
    indent_style: bool  # True: bodies are marked by indentation (Python-like)


def sorted_spans(spans: list[Span]) -> tuple[Span, ...]:
    """Distinct spans by start, the outer of two that start together first; every field
    is in the key, so the order never depends on the hash seed."""
    unique = set(spans)
    return tuple(
        sorted(
            unique,
            key=lambda s: (s.start_line, -s.end_line, s.kind, s.name or "", s.header_end_line),
        )
    )


def smallest_containing(defs: list[Span] | tuple[Span, ...], start: int, end: int) -> Span | None:
    """The shortest of ``defs`` (sorted by start) covering lines [start, end]; None if none."""
    best: Span | None = None
    for span in defs:
        if span.start_line > start:
            break
        if span.end_line >= end and (
            best is None or span.end_line - span.start_line <= best.end_line - best.start_line
        ):
            best = span
    return best
