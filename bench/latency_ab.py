"""Two trees' retrieval latency, measured interleaved (prints a markdown table).

Runs ``bench.latency``'s per-corpus child on each tree in turn, corpus by corpus,
alternating which tree goes first, for a number of rounds, and prints medians. On a
shared machine separate runs minutes apart move by tens of percent; interleaving puts
both trees under the same conditions.

    python -m bench.latency_ab /path/to/before /path/to/after --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench.latency import CORPUS_FETCHERS

__all__ = ["main", "summary"]

Row = dict[str, object]


def run_child(tree: Path, corpus: str, cursors: int, seed: int) -> Row:
    """One ``bench.latency --child`` run with ``tree``'s code imported (its JSON row)."""
    argv = [sys.executable, "-m", "bench.latency", "--child", corpus]
    argv += ["--cursors", str(cursors), "--seed", str(seed)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"bench.latency failed in {tree} on {corpus}: {proc.stderr[-400:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def summary(rows: dict[tuple[str, str], list[Row]], corpora: list[str]) -> list[str]:
    """Markdown rows: per corpus the floor, each tree's p50 and p50/floor (medians over the
    rounds), both trees' p95/p50 (the tail), CPU per retrieval (with rg) and the calling
    thread's CPU per retrieval ("–" for a tree whose ``bench.latency`` does not report it):
    on a shared machine the last one moves least, so small changes show there first."""

    def med(found: list[Row], key: str) -> float:
        return statistics.median(float(r[key]) for r in found)

    def thread(found: list[Row]) -> str:
        if not all("thread_cpu" in r for r in found):
            return "–"
        return f"{med(found, 'thread_cpu'):.1f}"

    def ratio(found: list[Row], over: str) -> float:
        return statistics.median(float(r["p50"]) / float(r[over]) for r in found)

    def tail(found: list[Row]) -> float:
        return statistics.median(float(r["p95"]) / float(r["p50"]) for r in found)

    lines = [
        "| corpus | lines | rg floor p50 | before p50 | after p50 | before / floor "
        "| after / floor | p95 / p50 before → after | CPU before → after "
        "| thread CPU before → after |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for corpus in corpora:
        before, after = rows[(corpus, "before")], rows[(corpus, "after")]
        floor = med(before + after, "floor_p50")
        lines.append(
            f"| {corpus} | {int(after[0]['lines']):,} | {floor:.1f} ms "
            f"| {med(before, 'p50'):.1f} ms | {med(after, 'p50'):.1f} ms "
            f"| {ratio(before, 'floor_p50'):.2f}× | {ratio(after, 'floor_p50'):.2f}× "
            f"| {tail(before):.2f} → {tail(after):.2f} "
            f"| {med(before, 'cpu'):.0f} → {med(after, 'cpu'):.0f} ms "
            f"| {thread(before)} → {thread(after)} ms |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="tree measured as 'before'")
    parser.add_argument("after", type=Path, help="tree measured as 'after'")
    parser.add_argument("--corpus", nargs="*", choices=list(CORPUS_FETCHERS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cursors", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    corpora = args.corpus or list(CORPUS_FETCHERS)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    for corpus in corpora:
        CORPUS_FETCHERS[corpus][1]()  # fetched here, so the children time only retrieval
    rows: dict[tuple[str, str], list[Row]] = {}
    for turn in range(args.rounds):
        for corpus in corpora:
            order = ["before", "after"] if turn % 2 == 0 else ["after", "before"]
            for name in order:
                row = run_child(trees[name], corpus, args.cursors, args.seed)
                rows.setdefault((corpus, name), []).append(row)
                ratio = float(row["p50"]) / float(row["floor_p50"])
                print(
                    f"round {turn + 1} {corpus} {name}: p50 {row['p50']:.1f} ms = {ratio:.2f}×",
                    file=sys.stderr,
                    flush=True,
                )
    print("\n".join(summary(rows, corpora)))


if __name__ == "__main__":
    main()
