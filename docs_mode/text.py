"""Plain-text helpers shared by the readers: lines numbered the way rg and the parsers
number them."""

from __future__ import annotations

__all__ = ["source_lines"]


def source_lines(text: str) -> list[str]:
    """The lines of ``text`` split at ``\\n`` only (as rg, markdown-it and lxml count them;
    ``str.splitlines`` also splits at form feeds and Unicode separators), ``\\r`` removed."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
