"""Code understanding: where the syntactic units of a file begin and end.

Dedup widens hit ranges to whole units (``BlockWidener``: a fast local scan, tree-sitter
when the scan is unsure); the packer shrinks a class that does not fit into its
``outline``; dense chunking cuts files at ``file_spans``. Lines are 1-based and inclusive.

Modules, one analyzer or job each:

- ``spans``: ``Span`` and ``Analysis``, what every analyzer produces
- ``grammars``: the tree-sitter grammar table, loaded lazily
- ``treesitter``: definitions and statements from a parse (the reference)
- ``indentation``, ``braces``: line-based analyzers when there is no clean parse
- ``analysis``: picks the analyzer, caches spans, ``expand_range``
- ``scan``: the fast local scan around a hit (``LocalExpander``)
- ``widen``: the widening policy (``BlockWidener``)
- ``outline``: outlines of classes and other units

Importing this package loads no tree-sitter module; the first parse does.
"""

from greprag.syntax.analysis import definition_spans, expand_range, file_spans
from greprag.syntax.outline import (
    Outlined,
    class_outlined,
    header_of,
    members_named,
    members_whole,
    nested_class_end,
    opens_members,
    outlined,
    range_outlined,
)
from greprag.syntax.spans import Span
from greprag.syntax.widen import BlockWidener

__all__ = [
    "BlockWidener",
    "Outlined",
    "Span",
    "class_outlined",
    "definition_spans",
    "expand_range",
    "file_spans",
    "header_of",
    "members_named",
    "members_whole",
    "nested_class_end",
    "opens_members",
    "outlined",
    "range_outlined",
]
