"""Rust cursors at the use of a name the file imports from its own crate (prints numbers).

A cursor sits just before a capitalised name that a ``use crate::…``, ``self::…`` or
``super::…`` line imports (``Circle`` in ``let shape = Circle::new(…)``), past the use
lines, one cursor per file; it counts as found when a packed block holds a line where
that name is declared (``struct``, ``enum``, ``trait``, ``type``, ``union``) in another
file. The crates come from Debian's ``librust-*-dev`` packages.

    python -m bench.rust_imports --cursors 40
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from bench.corpora import Corpus, fetch
from bench.tasks import tracked_files

CRATES: tuple[Corpus, ...] = (
    Corpus("clap", "rust", "debian", "librust-clap-dev", "4.0.32-1"),
    Corpus("nom", "rust", "debian", "librust-nom-dev", "7.1.1-1"),
    Corpus("regex-syntax", "rust", "debian", "librust-regex-syntax-dev", "0.6.27-1"),
    Corpus("serde_json", "rust", "debian", "librust-serde-json-dev", "1.0.87-1"),
    Corpus("syn", "rust", "debian", "librust-syn-dev", "1.0.107-1"),
    Corpus("toml", "rust", "debian", "librust-toml-dev", "0.5.11-1"),
)
_OWN_CRATE = ("crate", "self", "super")
_USE_LINE = re.compile(r"\s*(pub(\([^)]*\))?\s+)?use\b|\s*//")


@dataclass(frozen=True)
class Cursor:
    path: str
    line: int
    column: int
    name: str
    definitions: tuple[tuple[str, int], ...]  # (path, line) where the name is declared


def _declarations(sources: dict[str, list[str]]) -> dict[str, list[tuple[str, int]]]:
    found: dict[str, list[tuple[str, int]]] = {}
    pattern = re.compile(r"\b(?:struct|enum|trait|type|union)\s+([A-Z]\w*)")
    for path, lines in sources.items():
        for number, text in enumerate(lines, 1):
            for match in pattern.finditer(text):
                found.setdefault(match.group(1), []).append((path, number))
    return found


def sample(root: Path, count: int, seed: int) -> list[Cursor]:
    """Up to ``count`` cursors, one per file, the files in a ``seed``ed order."""
    from greprag.context import parse_imports

    sources = {
        path: (root / path).read_text(encoding="utf-8", errors="replace").split("\n")
        for path in tracked_files(root)
        if path.endswith(".rs") and path.startswith("src/")
    }
    declared = _declarations(sources)
    rng = random.Random(seed)
    paths = sorted(sources)
    rng.shuffle(paths)
    chosen: list[Cursor] = []
    for path in paths:
        lines = sources[path]
        spots = []
        for ref in parse_imports(lines, "rust"):
            name = ref.name or ""
            elsewhere = tuple(d for d in declared.get(name, []) if d[0] != path)
            if ref.module.split("::")[0] not in _OWN_CRATE or not name[:1].isupper():
                continue
            if not elsewhere or ref.alias:
                continue
            use = re.compile(rf"(?<![\w:]){re.escape(name)}\b\s*(::|\{{|\(|;|,|>|\))")
            for number in range(ref.line + 1, len(lines) + 1):
                text = lines[number - 1]
                if _USE_LINE.match(text) or "use " in text:
                    continue
                if (match := use.search(text)) and text[: match.start()].strip():
                    spots.append(Cursor(path, number, match.start(), name, elsewhere))
        if spots:
            chosen.append(rng.choice(spots))
            if len(chosen) == count:
                break
    return chosen


def measure(root: Path, count: int, seed: int) -> dict[str, object]:
    """Found count and median latency of one crate's cursors."""
    from greprag import Retriever

    retriever = Retriever(root)
    found, wall = 0, []
    cursors = sample(root, count, seed)
    for cursor in cursors:
        started = time.perf_counter()
        result = retriever.retrieve(file=cursor.path, line=cursor.line, column=cursor.column)
        wall.append((time.perf_counter() - started) * 1000)
        found += any(
            b.path == path and b.start_line <= line <= b.end_line
            for b in result.blocks
            for path, line in cursor.definitions
        )
    return {"cursors": len(cursors), "found": found, "p50_ms": statistics.median(wall or [0])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crate", nargs="*", default=[c.name for c in CRATES])
    parser.add_argument("--cursors", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    by_name = {c.name: c for c in CRATES}
    unknown = [n for n in args.crate if n not in by_name]
    if unknown:
        parser.error(f"unknown crates {unknown}; choose from {sorted(by_name)}")
    print("| crate | cursors | definition in the context | p50 |")
    print("| --- | --- | --- | --- |")
    total = found = 0
    for name in args.crate:
        row = measure(fetch(by_name[name]), args.cursors, args.seed)
        total, found = total + row["cursors"], found + row["found"]
        print(f"| {name} | {row['cursors']} | {row['found']} | {row['p50_ms']:.0f} ms |")
    print(f"| all | {total} | {found} ({100 * found / max(total, 1):.1f} %) | |")


if __name__ == "__main__":
    main()
