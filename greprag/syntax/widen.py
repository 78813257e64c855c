"""The widening policy: how a hit's line range grows to whole blocks during dedup.

The fast local scan answers first; tree-sitter decides where the scan is unsure. Most of
a small file is taken whole (its imports and constants explain the rest), and the file
under the cursor is cut to the run of admitted lines (``CursorFile``) that the hit is in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from greprag.files import file_text
from greprag.languages import language_for_path
from greprag.syntax.analysis import expand_in_region, expand_range, file_spans
from greprag.syntax.scan import LocalExpander

if TYPE_CHECKING:  # cursor_file imports this package's scan: at run time, a cycle
    from greprag.cursor_file import CursorFile

__all__ = ["SMALL_FILE_LINES", "BlockWidener"]

SMALL_FILE_LINES = 80  # a file this short is taken whole once a hit covers half of it


class BlockWidener:
    """Widens (path, start, end) to whole blocks; an ``Expander`` for
    :class:`greprag.fusion.dedup.BlockExpansion`.

    ``lines_of(path)`` gives a file's lines (read once, by the caller's cache);
    ``current`` says which lines of the file under the cursor may be shown, so its
    blocks stay within them (None: no file is under the cursor). One widener serves one
    retrieval; the scans and spans behind it are kept per file content (the lines
    object), across retrievals.
    """

    def __init__(
        self,
        lines_of: Callable[[str], Sequence[str]],
        current: CursorFile | None = None,
    ) -> None:
        self._lines_of = lines_of
        self._current = current
        self._local = LocalExpander()

    def __call__(self, path: str, start: int, end: int) -> tuple[int, int]:
        """The whole blocks around lines [start, end] (1-based, inclusive) of ``path``."""
        lines = self._lines_of(path)
        hit = start
        lang = language_for_path(path)
        name = lang.name if lang else None
        widened = self._local.expand(path, lines, name, start, end)
        if widened is None:
            region = self._local.region(lines, name, start, end)
            if region is not None:  # tree-sitter on the units around the hit only
                widened = expand_in_region(lines, name, *region, start, end)
        if widened is None:
            text = file_text(lines)
            spans = file_spans(path, text, name)
            widened = expand_range(text, name, start, end, spans)
        start, end = widened
        if start < end:  # several units: one level only, no block left half open
            start, end = self._local.balance(path, lines, name, start, end) or (start, end)
        if len(lines) <= SMALL_FILE_LINES and (end - start + 1) * 2 >= len(lines):
            start, end = 1, len(lines)  # most of a small file: take its imports/constants too
        return self._current.clip(path, start, end, hit) if self._current else (start, end)
