"""Cursors the bench's task kinds never hold: a definition further down the cursor's own
file (prints numbers).

The prompt holds the file above the cursor; what lies below, a retrieval must bring. The
bench's ``implicit`` kind draws methods of classes the file never names, and its ``line``
tasks start at a line's first character, so neither places a cursor right after
``self.`` or two letters into a name. Three kinds here, each a call whose definition is
the only one of its name in the file and at least ``MIN_BELOW`` lines below the call:

- ``self``: ``self.name(`` (Python) or ``this.name(`` (Java), the cursor after the dot;
- ``cls``: ``cls.name(`` in a Python classmethod, the cursor after the dot;
- ``call``: ``name(`` of a Python module-level function, the cursor after two letters.

A cursor counts as found when a packed block holds the definition's line.

    python -m bench.own_file --corpus django sqlalchemy --cursors 30
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.latency import CORPUS_FETCHERS
from bench.tasks import tracked_files

MIN_BELOW = 30  # lines between the call and its definition
KINDS = ("self", "cls", "call")
_PY_DEF = re.compile(r"\s*(?:async\s+)?def\s+(\w+)\s*\(")
_PY_TOP_DEF = re.compile(r"(?:async\s+)?def\s+(\w+)\s*\(")
_JAVA_DEF = re.compile(
    r"\s*(?:(?:public|private|protected|static|final|abstract|synchronized)\s+)*"
    r"[\w<>\[\],.? ]+\s+(\w+)\s*\([^;]*$"
)
_RECEIVERS = {"self": r"\b(?:self|this)\.(\w+)\(", "cls": r"\bcls\.(\w+)\("}
_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(")
_NOT_METHODS = frozenset({"if", "for", "while", "switch", "catch", "return", "new", "synchronized"})


@dataclass(frozen=True)
class Cursor:
    """A cursor on a call whose definition is ``definition`` lines into the same file."""

    path: str
    line: int
    column: int
    name: str
    definition: int


def definitions(lines: list[str], lang: str, top_level: bool = False) -> dict[str, list[int]]:
    """The 1-based lines defining each name: Python ``def`` (at the margin only with
    ``top_level``), Java method declarations."""
    pattern = _PY_TOP_DEF if top_level else _PY_DEF if lang == "python" else _JAVA_DEF
    found: dict[str, list[int]] = {}
    for number, line in enumerate(lines, 1):
        match = pattern.match(line)
        if match and match.group(1) not in _NOT_METHODS:
            found.setdefault(match.group(1), []).append(number)
    return found


def cursors_in(path: str, lines: list[str], lang: str, kind: str) -> Iterator[Cursor]:
    """The ``kind`` cursors of one file (see the module docstring)."""
    if kind != "self" and lang != "python":
        return
    defined = definitions(lines, lang, top_level=kind == "call")
    calls = _CALL if kind == "call" else re.compile(_RECEIVERS[kind])
    typed = 2 if kind == "call" else 0
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip()
        if stripped.startswith(("#", "//", "*", "/*", "def ", "async def ", "class ")):
            continue
        for match in calls.finditer(line):
            name = match.group(1)
            where = defined.get(name, [])
            if len(where) == 1 and where[0] >= number + MIN_BELOW and len(name) > typed + 2:
                yield Cursor(path, number, match.start(1) + typed, name, where[0])


def sample(root: Path, lang: str, kind: str, count: int, seed: int) -> list[Cursor]:
    """Up to ``count`` ``kind`` cursors of the repository, drawn with ``seed``."""
    suffix = ".py" if lang == "python" else ".java"
    found: list[Cursor] = []
    for path in tracked_files(root):
        if path.endswith(suffix):
            text = (root / path).read_text(encoding="utf-8", errors="replace")
            found += cursors_in(path, text.split("\n"), lang, kind)
    return random.Random(f"{seed}:{kind}").sample(found, min(count, len(found)))


def rank_of(cursor: Cursor, retriever) -> int | None:  # retriever: greprag.Retriever
    """The 1-based rank of the first packed block holding the definition's line."""
    result = retriever.retrieve(file=cursor.path, line=cursor.line, column=cursor.column)
    for rank, block in enumerate(result.blocks, 1):
        if block.path == cursor.path and block.start_line <= cursor.definition <= block.end_line:
            return rank
    return None


def measure(root: Path, lang: str, kind: str, count: int, seed: int) -> dict[str, object]:
    """Found count and median rank of the ``kind`` cursors of one repository."""
    from greprag import Retriever

    retriever = Retriever(root)
    ranks = [rank_of(c, retriever) for c in sample(root, lang, kind, count, seed)]
    found = [r for r in ranks if r is not None]
    return {
        "cursors": len(ranks),
        "found": len(found),
        "median_rank": statistics.median(found) if found else None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="*", default=["django", "sqlalchemy", "sympy", "jdk17"])
    parser.add_argument("--kind", nargs="*", default=list(KINDS), choices=KINDS)
    parser.add_argument("--cursors", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print("| corpus | kind | cursors | definition in the context | median rank |")
    print("| --- | --- | --- | --- | --- |")
    for name in args.corpus:
        lang, fetch = CORPUS_FETCHERS[name]
        root = fetch()
        for kind in args.kind:
            row = measure(root, lang, kind, args.cursors, args.seed)
            if row["cursors"]:
                print(
                    f"| {name} | {kind} | {row['cursors']} | {row['found']} | "
                    f"{row['median_rank'] if row['median_rank'] is not None else '–'} |"
                )


if __name__ == "__main__":
    main()
