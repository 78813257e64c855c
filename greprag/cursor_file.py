"""Which lines of the file under the cursor a retrieval may show.

The lines above the cursor are the prompt's own left context, and the definition the
cursor is in is the code being written: below the cursor, it is what the completion has
to produce. The file's code below that definition is neither: siblings of the function
being written and the helpers it calls, which the model has not seen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from greprag.context import LocalContext
from greprag.syntax.scan import written_until


@dataclass(frozen=True)
class CursorFile:
    """The file under the cursor (``path``; None: no file) and the runs of its lines that
    may be shown, 1-based and inclusive, in order. Every other file is shown whole."""

    path: str | None = None
    runs: tuple[tuple[int, int], ...] = ()

    def admits(self, path: str, line: int) -> bool:
        """Whether line ``line`` of ``path`` may be shown."""
        return path != self.path or self.run_of(line) is not None

    def run_of(self, line: int) -> tuple[int, int] | None:
        """The admitted run holding ``line`` of the cursor's file, or None."""
        for low, high in self.runs:
            if low <= line <= high:
                return low, high
        return None

    def clip(self, path: str, start: int, end: int, anchor: int | None = None) -> tuple[int, int]:
        """Lines [start, end] of ``path`` cut to the admitted run holding ``anchor`` (else
        the first run they overlap); an empty range (end < start) when none."""
        if path != self.path:
            return start, end
        run = self.run_of(anchor) if anchor is not None else None
        if run is None:
            run = next(((lo, hi) for lo, hi in self.runs if lo <= end and start <= hi), None)
        if run is None:
            return start, start - 1
        return max(start, run[0]), min(end, run[1])


def cursor_file(
    ctx: LocalContext, lines_of: Callable[[str], Sequence[str]], mode: str
) -> CursorFile:
    """What of the cursor's file (``ctx.path``, read by ``lines_of``) ``mode`` admits:
    ``no`` nothing, ``above`` the lines above the cursor, ``below`` the lines after the
    code being written: the outermost function holding the cursor (a closure's enclosing
    function is being written too), else the definition or statement holding it at class
    or module level; nothing where the scan cannot tell where that ends, or where the
    text before the cursor is not the file's (an editor's unsaved buffer: what lies
    below it on disk may be anywhere, the code being written among it)."""
    path, line = ctx.path, ctx.line
    if path is None or mode == "no":
        return CursorFile(path)
    if mode == "above":
        return CursorFile(path, ((1, line - 1),) if line > 1 else ())
    lines = lines_of(path)
    if not _on_disk(ctx, lines):
        return CursorFile(path)
    end = written_until(lines, ctx.lang, line)
    return CursorFile(path, ((end + 1, len(lines)),) if end and end < len(lines) else ())


def _on_disk(ctx: LocalContext, lines: Sequence[str]) -> bool:
    """The last lines before the cursor (``ctx.window``) are the file's own, up to it."""
    window = ctx.window.split("\n")
    first = ctx.line - len(window)
    if first < 0 or ctx.line > len(lines):
        return False
    above = list(lines[first : ctx.line - 1])  # the store's lines are a tuple
    return above == window[:-1] and lines[ctx.line - 1].startswith(window[-1])
