"""Latency of ``greprag search`` (grep route) on Django's code and manual. Prints numbers.

    python -m bench.docs_latency [--questions 60] [--seed 0] [--no-cli]

The corpus is ``bench.docs_corpora``'s django: django/ without contrib (~115k lines of
Python) and its reST manual (~164k lines). In one process, files are parsed once (as a
long-lived server does, ``DocsSearch.warm``), three questions warm up, then each question
is timed: the benchmark's questions (a documented API's first sentence, ~10 words), and
the same questions cut to their first four words that are not stop words (what people
type). Then the wall time of one-shot ``greprag search`` processes (the first with an
empty cache folder, then 4 reading the unit layouts it recorded), and of 20
``greprag search`` processes forwarded to a warm ``greprag serve`` (the CLI's path when a
server runs). Target (issue 9): p50 <= 150 ms for the grep route.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.docs_corpora import docs_corpora_for, fetch_docs
from bench.docs_tasks import questions_for
from bench.metrics import percentile

__all__ = ["main", "measure", "short"]

_CLI_RUNS = 5
_SERVED_RUNS = 20


def short(question: str, words: int = 4) -> str:
    """The first ``words`` words of ``question`` that are not stop words."""
    from docs_mode.keywords import STOP_WORDS

    kept = [w for w in question.replace(".", " ").split() if w.lower() not in STOP_WORDS]
    return " ".join(kept[:words])


def lines_of(root: Path, suffixes: tuple[str, ...]) -> int:
    return sum(
        p.read_bytes().count(b"\n")
        for p in root.rglob("*")
        if p.suffix in suffixes and p.is_file() and ".git" not in p.parts
    )


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (rg), user + system."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(search, questions: list[str]) -> dict[str, object]:
    """Wall and CPU milliseconds per search (CPU: Python and rg's threads together; on a
    shared machine it does not grow with the load as wall time does)."""
    for question in questions[:3]:
        search.search(question)
    wall: list[float] = []
    cpu: list[float] = []
    stages: dict[str, list[float]] = {}
    for question in questions:
        started, used = time.perf_counter(), _cpu_s()
        result = search.search(question)
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((_cpu_s() - used) * 1000)
        for stage, ms in result.timings.items():
            stages.setdefault(stage, []).append(ms)
    return {
        "n": len(wall),
        "p50": statistics.median(wall),
        "p95": percentile(wall, 95),
        "cpu_p50": statistics.median(cpu),
        "stages": {k: statistics.median(v) for k, v in stages.items() if k != "total"},
    }


def cold_cli(root: Path, question: str) -> list[float]:
    """Wall seconds of ``_CLI_RUNS`` one-shot ``greprag search`` processes sharing a fresh
    cache folder: the first finds no recorded unit layouts (``docs_mode.unit_store``) and
    parses the files rg hits, the others read the layouts the first recorded."""
    import tempfile

    script = Path(sys.executable).with_name("greprag")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "greprag"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times = []
    with tempfile.TemporaryDirectory() as cache:
        argv = [*command, "search", question, "--repo", str(root), "--routes", "grep"]
        argv += ["--cache-dir", cache]
        for _ in range(_CLI_RUNS):
            started = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True, env=env)
            times.append(time.perf_counter() - started)
    return times


def served_cli(root: Path, questions: list[str]) -> tuple[list[float], int]:
    """Wall seconds of ``greprag search`` processes forwarded to a warm ``greprag serve``
    (a fresh cache: no dense index, so the grep route), one question each so none comes
    from the server's answer cache; and how many the server answered."""
    import tempfile

    from bench.serve_load import _env, _greprag, serving

    with tempfile.TemporaryDirectory() as folder, serving(root, Path(folder)) as served:
        for _ in range(5):  # the first search parses every file; past the time limit: 504
            if "blocks" in served.call("POST", "/search", {"query": questions[0]}):
                break
        misses = served.root_status()["answers"]["misses"]
        times = []
        for question in questions[1:]:
            argv = [*_greprag(), "search", question, "--repo", str(root)]
            started = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True, env=_env(Path(folder)))
            times.append(time.perf_counter() - started)
        return times, served.root_status()["answers"]["misses"] - misses


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60, help="of each kind (rst, code)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI timings")
    args = parser.parse_args(argv)

    from docs_mode.search import DocsSearch
    from greprag.config import load_settings

    corpus = docs_corpora_for(["django"])[0]
    root = fetch_docs(corpus)
    asked = [q.text for q in questions_for(root, corpus.name, corpus.code, args.questions, 0)]
    code, manual = lines_of(root, (".py",)), lines_of(root, (".txt", ".rst"))
    search = DocsSearch(root, load_settings(root, routes="grep"))
    started = time.perf_counter()
    files = search.warm()
    warm_s = time.perf_counter() - started
    print(
        f"django {corpus.version}: {code:,} lines of Python, {manual:,} lines of manual; "
        f"{files} files' units read once in {warm_s:.1f} s (parsed, or their recorded layouts)"
    )
    load = os.getloadavg()[0]
    for label, questions in (
        ("API sentences", asked),
        ("4-word queries", [short(q) for q in asked]),
    ):
        got = measure(search, questions)
        stages = " ".join(f"{k}={v:.1f}" for k, v in got["stages"].items())
        print(
            f"{label:<15} n={got['n']:<4} p50={got['p50']:6.1f} ms  p95={got['p95']:6.1f} ms"
            f"  CPU p50={got['cpu_p50']:6.1f} ms  stage medians (ms): {stages}"
        )
    print(f"load average at the start: {load:.2f} (2 cores)")
    if not args.no_cli:
        times = cold_cli(root, short(asked[0]))
        later = times[1:]
        print(
            f"one-shot `greprag search` CLI, fresh cache folder: first {times[0]:.2f} s; "
            f"the next {len(later)}: median {statistics.median(later):.2f} s"
            f"  min={min(later):.2f} s  max={max(later):.2f} s"
        )
        forwarded, answered = served_cli(root, [short(q) for q in asked[: _SERVED_RUNS + 1]])
        ms = [t * 1000 for t in forwarded]
        print(
            f"`greprag search` forwarded to a warm `greprag serve`: n={len(ms)} "
            f"p50={statistics.median(ms):.0f} ms  p95={percentile(ms, 95):.0f} ms "
            f"({answered} answered by the server)"
        )


if __name__ == "__main__":
    main()
