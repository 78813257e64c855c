"""Cursors on a member inherited from beyond the direct bases (prints numbers).

``self.name(`` in a Python class, the cursor after the dot, where ``name`` is defined
once in the repository, in another file, and not in the files of the class's direct
bases (the plan probes those members itself): an ancestor further up, or a mixin. A
cursor counts as found when a packed block holds the definition's line.

    python -m bench.inherited --corpus django sqlalchemy --cursors 30
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from bench.latency import CORPUS_FETCHERS
from bench.tasks import tracked_files

_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(")
_SELF_CALL = re.compile(r"\bself\.(\w+)\(")


@dataclass(frozen=True)
class Cursor:
    """A cursor after ``self.`` whose member is defined at ``definition`` (path, line)."""

    path: str
    line: int
    column: int
    name: str
    definition: tuple[str, int]


def candidates(root: Path) -> list[Cursor]:
    """Every ``self.name(`` whose ``name`` is defined once in the repository, elsewhere."""
    sources = {
        path: (root / path).read_text(encoding="utf-8", errors="replace").split("\n")
        for path in tracked_files(root)
        if path.endswith(".py")
    }
    defined: dict[str, list[tuple[str, int]]] = {}
    for path, lines in sources.items():
        for number, text in enumerate(lines, 1):
            if match := _DEF.match(text):
                defined.setdefault(match.group(1), []).append((path, number))
    found = []
    for path, lines in sources.items():
        for number, text in enumerate(lines, 1):
            for call in _SELF_CALL.finditer(text):
                name = call.group(1)
                where = defined.get(name, [])
                if name.startswith("__") or len(where) != 1 or where[0][0] == path:
                    continue
                found.append(Cursor(path, number, call.start() + len("self."), name, where[0]))
    return found


def beyond_direct_bases(root: Path, cursor: Cursor) -> bool:
    """The cursor sits in a class with bases, none of whose files defines the member."""
    from greprag.context import context_at
    from greprag.imports import resolve_imports

    ctx = context_at(root, cursor.path, cursor.line, cursor.column)
    if not (ctx.enclosing_class and ctx.class_bases):
        return False
    imported = resolve_imports(ctx, root)
    direct = {imported.get(part) for base in ctx.class_bases for part in base.split(".")}
    return cursor.definition[0] not in direct


def sample(root: Path, count: int, seed: int) -> list[Cursor]:
    """Up to ``count`` cursors, drawn with ``seed``, at most one per file."""
    pool = candidates(root)
    random.Random(seed).shuffle(pool)
    chosen: list[Cursor] = []
    files: set[str] = set()
    for cursor in pool:
        if cursor.path not in files and beyond_direct_bases(root, cursor):
            chosen.append(cursor)
            files.add(cursor.path)
            if len(chosen) == count:
                break
    return chosen


def measure(root: Path, count: int, seed: int) -> dict[str, object]:
    """Found count and median rank of one repository's cursors."""
    from greprag import Retriever

    retriever = Retriever(root)
    ranks = []
    for cursor in sample(root, count, seed):
        result = retriever.retrieve(file=cursor.path, line=cursor.line, column=cursor.column)
        path, line = cursor.definition
        hits = [
            rank
            for rank, b in enumerate(result.blocks, 1)
            if b.path == path and b.start_line <= line <= b.end_line
        ]
        ranks.append(hits[0] if hits else None)
    found = [r for r in ranks if r is not None]
    return {
        "cursors": len(ranks),
        "found": len(found),
        "median_rank": statistics.median(found) if found else None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="*", default=["django", "sqlalchemy", "sympy"])
    parser.add_argument("--cursors", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print("| corpus | cursors | definition in the context | median rank |")
    print("| --- | --- | --- | --- |")
    for name in args.corpus:
        lang, fetch = CORPUS_FETCHERS[name]
        if lang != "python":
            parser.error(f"{name}: Python corpora only")
        row = measure(fetch(), args.cursors, args.seed)
        rank = row["median_rank"] if row["median_rank"] is not None else "–"
        print(f"| {name} | {row['cursors']} | {row['found']} | {rank} |")


if __name__ == "__main__":
    main()
