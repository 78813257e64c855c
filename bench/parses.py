"""Tree-sitter analyses per warm retrieval, by what asked for them (prints numbers).

    python -m bench.parses [--corpus sqlalchemy sympy django javac jdk17 jdk-base]
                           [--cursors 30] [--seed 0]

Widening and outlines answer from the local scans where they can and parse where they
cannot; each parse of a long file costs milliseconds. For each corpus (``bench.latency``'s
corpora and cursors, three warm-up retrievals first), this counts the tree-sitter
analyses the retrievals make: of whole files, of a region's own lines, and of Java class
skeletons, with the CPU time spent in them per retrieval.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.latency import CORPUS_FETCHERS, pick_cursors

__all__ = ["counted_parses", "main"]

_KINDS = {  # the function that asked, by its qualified name
    "analyze": "whole file",
    "region_analysis.<locals>.compute": "region",
    "skeleton_analysis.<locals>.compute": "skeleton",
}


@contextmanager
def counted_parses() -> Iterator[Counter[str]]:
    """While open, count the tree-sitter analyses made, by kind (``whole file``,
    ``region``, ``skeleton``), and their thread CPU seconds under ``"cpu"``."""
    from greprag.syntax import analysis

    counts: Counter[str] = Counter()
    original = analysis.tree_analysis

    def counting(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1).f_code.co_qualname  # which analysis asked: its kind
        started = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            counts["cpu"] += time.thread_time() - started
            counts[_KINDS.get(caller, caller)] += 1

    analysis.tree_analysis = counting
    try:
        yield counts
    finally:
        analysis.tree_analysis = original


def measure(name: str, cursors: int, seed: int) -> str:
    """One corpus's table row."""
    from greprag import Retriever

    lang, fetch = CORPUS_FETCHERS[name]
    repo = fetch()
    chosen = pick_cursors(repo, lang, cursors + 3, seed)
    retriever = Retriever(repo, budget=4096, router="offline", routes="grep")
    for at in chosen[:3]:
        retriever.retrieve(file=at.file, line=at.line, column=at.column)
    with counted_parses() as counts:
        for at in chosen[3:]:
            retriever.retrieve(file=at.file, line=at.line, column=at.column)
    done = max(1, len(chosen) - 3)
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "cpu") or "none"
    total = sum(v for k, v in counts.items() if k != "cpu")
    cpu = 1000 * counts["cpu"] / done
    return f"| {name} | {done} | {total} ({kinds}) | {total / done:.2f} | {cpu:.1f} ms |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.parses", description=__doc__)
    parser.add_argument("--corpus", nargs="*", choices=list(CORPUS_FETCHERS))
    parser.add_argument("--cursors", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print("| corpus | retrievals | tree-sitter analyses | per retrieval | CPU per retrieval |")
    print("| --- | --- | --- | --- | --- |")
    for name in args.corpus or list(CORPUS_FETCHERS):
        print(measure(name, args.cursors, args.seed), flush=True)


if __name__ == "__main__":
    main()
