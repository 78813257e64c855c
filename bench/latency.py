"""Retrieval latency against one ripgrep pass, per stage, at three repo sizes (prints numbers).

    python -m bench.latency [--corpus django sqlalchemy sympy javac jdk17 jdk-base]
                            [--cursors 50] [--seed 0] [--budget 4096] [--no-cli]

Each corpus runs in a fresh child process, so the first retrieval is cold and the peak
RSS is that corpus's own. In the child:

- **cold**: ``Retriever(...)`` plus its first ``retrieve`` (imports excluded), and the
  first query's rg pass walking the repo (what rg does before the file list is cached);
- **warm**: three warm-up calls, the similar route's worker and the retriever's per-file
  caches settled (``greprag.warm``, as a server's are after its first seconds), then for
  each seeded cursor (just after an imported name
  used inside a function body) one ``retrieve`` and, interleaved with it (alternating
  which goes first), **the floor**: one rg process with the same patterns, flags and file
  list the grep route's first pass uses, timed from spawn to its last byte of output;
- the median of each stage in ``Result.timings`` (context, router, grep, rerank,
  dedup_pack, total), p50/p95/max of the wall time, ratios to the floor, the median CPU
  time of a retrieval (this process, its rg, the similar route's worker process and its
  rg) and of the floor (less sensitive to other load than wall time), the calling
  thread's own CPU per retrieval (steadier still: no rg, no background thread; in the
  JSON row, for ``bench.latency_ab``), the peak RSS (this process + the worker's) and
  the load average while it ran.

Targets (issue 13): p50 ≤ 3× the floor (≤ 50 ms at ~250k lines, ≤ 100 ms at ~750k),
p95 ≤ 2× p50. Corpora are fetched once into ``~/.cache/greprag-bench`` (PyPI wheels and
Debian's openjdk-17-source), never committed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from bench.corpora import (
    CORPORA,
    Corpus,
    _apt_download,
    _deb_data,
    _git_commit,
    _tar_member_bytes,
    cache_dir,
    fetch,
)

SQLALCHEMY = Corpus("sqlalchemy", "python", "pypi", "sqlalchemy", "2.0.58")  # ~254k lines
SYMPY = Corpus("sympy", "python", "pypi", "sympy", "1.14.0")  # ~754k lines
_JDK_VERSION = "17.0.19+10-1~deb12u2"
# javac (the jdk.compiler module): one real ~174k-line Java application
JAVAC = Corpus("javac", "java", "debian", "openjdk-17-source", _JDK_VERSION)
# java.base's public packages plus the NIO implementation behind them: ~808k lines
JDK_BASE = Corpus("jdk17-base-nio", "java", "debian", "openjdk-17-source", _JDK_VERSION)
_JDK_TREES = {
    JAVAC.name: ("jdk.compiler/",),
    JDK_BASE.name: ("java.base/java/", "java.base/javax/", "java.base/sun/nio/"),
}
_EXT = {"python": ".py", "java": ".java"}
_CLI_RUNS = 5
_WARMUP = 3
STAGES = ("context", "router", "grep", "rerank", "dedup_pack", "total")


@dataclass(frozen=True)
class Cursor:
    file: str
    line: int
    column: int


def _corpus(name: str) -> Corpus:
    return next(c for c in CORPORA if c.name == name)


def fetch_jdk_trees(corpus: Corpus, cache: Path | None = None) -> Path:
    """Some module trees of Debian's openjdk-17-source ``src.zip``, as a git repo."""
    cache = cache or cache_dir()
    root = cache / "repos" / corpus.key
    if (root / ".git" / "greprag-bench-ok").exists():
        return root
    downloads = cache / "downloads" / f"jdk17-{corpus.version}"
    downloads.mkdir(parents=True, exist_ok=True)
    deb = _apt_download(corpus, downloads)
    staging = root.with_name(root.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    keep = _JDK_TREES[corpus.name]
    with zipfile.ZipFile(BytesIO(_tar_member_bytes(_deb_data(deb), "/lib/src.zip"))) as zf:
        for info in zf.infolist():
            if info.filename.endswith(".java") and info.filename.startswith(keep):
                target = staging / info.filename.split("/", 1)[1]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(info))
    _git_commit(staging)
    (staging / ".git" / "greprag-bench-ok").write_text(corpus.version)
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    return root


# name -> (language, fetcher): ~150k, ~250k and ~750k+ lines of each language
CORPUS_FETCHERS: dict[str, tuple[str, Callable[[], Path]]] = {
    "django": ("python", lambda: fetch(_corpus("django"))),
    "sqlalchemy": ("python", lambda: fetch(SQLALCHEMY)),
    "sympy": ("python", lambda: fetch(SYMPY)),
    "javac": ("java", lambda: fetch_jdk_trees(JAVAC)),
    "jdk17": ("java", lambda: fetch(_corpus("jdk17"))),
    "jdk-base": ("java", lambda: fetch_jdk_trees(JDK_BASE)),
}


def source_files(repo: Path, lang: str) -> list[Path]:
    return sorted(p for p in repo.rglob(f"*{_EXT[lang]}") if ".git" not in p.parts)


def count_lines(files: list[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in files)


def _imported_names(lines: list[str], lang: str) -> set[str]:
    names: set[str] = set()
    for text in lines:
        if lang == "java":
            found = re.match(r"\s*import\s+(?:static\s+)?[\w.]+\.(\w+)\s*;", text)
            if found and found.group(1) != "*":
                names.add(found.group(1))
        elif found := re.match(r"\s*from\s+\S+\s+import\s+([\w, ]+)", text):
            names.update(n.split(" as ")[-1].strip() for n in found.group(1).split(","))
        elif found := re.match(r"\s*import\s+([\w.]+)(?:\s+as\s+(\w+))?\s*$", text):
            names.add(found.group(2) or found.group(1).split(".")[0])
    return {n for n in names if n.isidentifier()}


def _body_lines(lines: list[str], lang: str) -> Iterator[int]:
    """0-based indices of lines inside function/method bodies (a cheap approximation)."""
    if lang == "python":
        def_indent: int | None = None
        for i, text in enumerate(lines):
            if not text.strip():
                continue
            indent = len(text) - len(text.lstrip())
            if re.match(r"\s*(async\s+)?def\s", text):
                def_indent = indent
            elif def_indent is not None and indent > def_indent:
                yield i
            elif def_indent is not None:
                def_indent = None
        return
    depth = 0
    for i, text in enumerate(lines):
        code = re.sub(r'"(\\.|[^"\\])*"|//.*', "", text)
        if depth >= 2 and not code.lstrip().startswith(("*", "/*", "@")):
            yield i
        depth += code.count("{") - code.count("}")


def pick_cursors(repo: Path, lang: str, count: int, seed: int) -> list[Cursor]:
    """Seeded cursors just after an imported name used inside a function body."""
    rng = random.Random(seed)
    files = source_files(repo, lang)
    rng.shuffle(files)
    cursors: list[Cursor] = []
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        names = _imported_names(lines, lang)
        if not names:
            continue
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b[.(]?")
        spots = [(i, m.end()) for i in _body_lines(lines, lang) if (m := pattern.search(lines[i]))]
        if spots:
            index, column = rng.choice(spots)
            cursors.append(Cursor(path.relative_to(repo).as_posix(), index + 1, column))
        if len(cursors) == count:
            break
    return cursors


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def floor_argv(retriever, at: Cursor, *, walk: bool) -> list[str]:  # retriever: Retriever
    """The rg argv of the grep route's first pass for ``at`` (its plan's patterns, flags
    and file list); ``walk`` lets rg walk the repo instead (the cold, unlisted case)."""
    from greprag.rg import SearchSpec, build_argv
    from greprag.routes.grep import rg_pattern

    plan = retriever.plan(file=at.file, line=at.line, column=at.column)
    lang = next((q.lang for q in plan.queries if q.lang), None)
    patterns = dict.fromkeys(rg_pattern(q) for q in plan.queries)
    grep, s = retriever.grep, retriever.settings
    spec = SearchSpec(
        patterns=tuple(patterns),
        langs=(lang,) if lang else (),
        max_count_per_file=s.max_count_per_file,
        max_filesize=s.max_filesize,
        paths=() if walk else tuple(grep.files(lang)),
    )
    return build_argv(grep.rg, spec)


def _cpu() -> tuple[float, float]:
    """CPU seconds so far: this process's, and its waited-for children's (rg, and the
    similar route's worker process with the rg runs it waited for)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime + _worker_cpu()


def _worker_pid() -> int | None:
    """The similar route's worker process (None before one was started)."""
    from greprag.routes.similar_worker import shared_worker

    worker = shared_worker()
    return worker.pid if worker is not None else None


def _worker_stat() -> list[str]:
    """The similar route's worker's ``/proc/<pid>/stat`` fields after its name (none
    where there is no worker or no ``/proc``)."""
    pid = _worker_pid()
    if pid is None:
        return []
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _worker_cpu() -> float:
    """CPU seconds so far of the worker (user, system, and its waited-for children)."""
    fields = _worker_stat()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK") if fields else 0.0


def _worker_rss_mib() -> float:
    """The worker's peak resident memory (0 without one)."""
    pid = _worker_pid()
    try:
        status = Path(f"/proc/{pid}/status").read_text() if pid else ""
    except OSError:
        return 0.0
    peak = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")), 0)
    return int(peak) / 1024


def time_rg(argv: list[str], repo: Path) -> tuple[float, float]:
    """Milliseconds of one rg process, spawn to exit, its whole output read: wall, CPU."""
    from greprag.rg import spawn

    cpu = _cpu()[1]
    start = time.perf_counter()
    proc = spawn(argv, repo)
    proc.communicate()
    return (time.perf_counter() - start) * 1000, (_cpu()[1] - cpu) * 1000


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(repo: Path, cursors: list[Cursor], budget: int, routes: str) -> dict[str, object]:
    """Cold first query, then warm retrievals interleaved with the rg floor (ms)."""
    from greprag import Retriever

    load_before = os.getloadavg()[0]
    first = cursors[0]
    start = time.perf_counter()
    retriever = Retriever(repo, budget=budget, router="offline", routes=routes)
    cold_result = retriever.retrieve(file=first.file, line=first.line, column=first.column)
    cold_ms = (time.perf_counter() - start) * 1000
    walk = floor_argv(retriever, first, walk=True)
    cold_rg = statistics.median(time_rg(walk, repo)[0] for _ in range(3))
    for at in cursors[:_WARMUP]:
        retriever.retrieve(file=at.file, line=at.line, column=at.column)
    index_s, index = _settle(retriever, cursors[:_WARMUP])
    warm_s = _warmed(retriever)
    wall: list[float] = []
    floor: list[float] = []
    cpu: list[float] = []  # this process's and rg's CPU per retrieval
    thread_cpu: list[float] = []  # the calling thread's alone: steadier on a shared machine
    floor_cpu: list[float] = []
    stages: dict[str, list[float]] = {}
    for n, at in enumerate(cursors):
        argv = floor_argv(retriever, at, walk=False)
        for turn in (0, 1) if n % 2 == 0 else (1, 0):
            if turn == 0:
                ms, cpu_ms = time_rg(argv, repo)
                floor.append(ms)
                floor_cpu.append(cpu_ms)
                continue
            before, mine = sum(_cpu()), time.thread_time()
            start = time.perf_counter()
            res = retriever.retrieve(file=at.file, line=at.line, column=at.column)
            wall.append((time.perf_counter() - start) * 1000)
            thread_cpu.append((time.thread_time() - mine) * 1000)
            cpu.append((sum(_cpu()) - before) * 1000)
            for stage, ms in res.timings.items():
                stages.setdefault(stage, []).append(ms)
    if index is not None:  # searches of the timed retrievals the index answered
        after = _index_stats(0.0)
        index = {**index, "answered": after["answered"] - index["answered"] if after else 0}
    return {
        "n": len(cursors),
        "floor_p50": statistics.median(floor),
        "floor_p95": _percentile(floor, 0.95),
        "floor_cpu": statistics.median(floor_cpu),
        "cpu": statistics.median(cpu),
        "thread_cpu": statistics.median(thread_cpu),
        "p50": statistics.median(wall),
        "p95": _percentile(wall, 0.95),
        "max": max(wall),
        "stages": {k: statistics.median(v) for k, v in stages.items()},
        "cold_ms": cold_ms,
        "cold_stages": cold_result.timings,
        "cold_rg": cold_rg,
        "index_s": index_s,
        "warm_s": warm_s,
        "index": index,
        "rss_mib": _rss_mib(),
        "worker_rss_mib": _worker_rss_mib(),
        "load": [load_before, os.getloadavg()[0]],
    }


def _settle(retriever, warmup: list[Cursor]) -> tuple[float, dict[str, int] | None]:
    """Seconds the similar route's worker took to read the repository into its word
    index (queued by the warm-up's searches once the worker is up), and the index's
    stats: warm retrievals are measured on a settled worker, as a server's are after
    its first seconds."""
    from greprag.routes.similar_worker import shared_worker

    worker = shared_worker()
    if worker is None or not worker.ready(30.0):
        return 0.0, None
    for at in warmup:
        retriever.retrieve(file=at.file, line=at.line, column=at.column)
    start = time.perf_counter()
    stats = _index_stats(300.0)
    return time.perf_counter() - start, stats


def _warmed(retriever) -> float | None:
    """Seconds the retriever's per-file caches took to be warm after the settling
    (``Retriever.warmed``; None for a tree without it, in ``bench.latency_ab``)."""
    if not hasattr(retriever, "warmed"):
        return None
    start = time.perf_counter()
    retriever.warmed(300.0)
    return time.perf_counter() - start


def _index_stats(timeout: float) -> dict[str, int] | None:
    """The worker's word index stats once it has read what it queued (``settle``)."""
    from greprag.routes.similar_worker import shared_worker

    worker = shared_worker()
    return worker.settle(timeout) if worker is not None else None


def _child(name: str, args: argparse.Namespace) -> None:
    lang, fetcher = CORPUS_FETCHERS[name]
    repo = fetcher()
    files = source_files(repo, lang)
    cursors = pick_cursors(repo, lang, args.cursors, args.seed)
    result = measure(repo, cursors, args.budget, args.routes)
    result.update(corpus=name, lang=lang, files=len(files), lines=count_lines(files))
    print(json.dumps(result))


def run_corpus(name: str, args: argparse.Namespace) -> dict[str, object]:
    """One corpus measured in a fresh child process (its JSON line)."""
    CORPUS_FETCHERS[name][1]()  # fetch here, so the child times only retrieval
    argv = [sys.executable, "-m", "bench.latency", "--child", name]
    argv += ["--cursors", str(args.cursors), "--seed", str(args.seed)]
    argv += ["--budget", str(args.budget), "--routes", args.routes]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"bench.latency child {name} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def print_tables(rows: list[dict[str, object]]) -> None:
    """The per-corpus table (ratios to the rg floor) and the per-stage medians."""
    print(
        "| corpus | lang | files | lines | rg floor p50 / p95 | p50 | p95 | max "
        "| p50 / floor | p95 / p50 | CPU: retrieval / floor | cold retrieve "
        "| cold rg (walk) | peak RSS (+ worker) | worker's word index | load |"
    )
    print("| --- " * 16 + "|")
    for r in rows:
        print(
            f"| {r['corpus']} | {r['lang']} | {r['files']:,} | {r['lines']:,} "
            f"| {r['floor_p50']:.1f} / {r['floor_p95']:.1f} ms | **{r['p50']:.1f} ms** "
            f"| {r['p95']:.1f} ms | {r['max']:.1f} ms | **{r['p50'] / r['floor_p50']:.2f}×** "
            f"| {r['p95'] / r['p50']:.2f} | {r['cpu']:.1f} / {r['floor_cpu']:.1f} ms "
            f"| {r['cold_ms']:.0f} ms | {r['cold_rg']:.1f} ms "
            f"| {r['rss_mib']:.0f} + {r.get('worker_rss_mib', 0.0):.0f} MiB "
            f"| {_index_cell(r)} | {r['load'][0]:.1f}–{r['load'][1]:.1f} |"
        )
    print()
    print("| corpus | n | " + " | ".join(STAGES) + " | cold: " + ", ".join(STAGES[:-1]) + " |")
    print("| --- " * (len(STAGES) + 3) + "|")
    for r in rows:
        warm = " | ".join(f"{r['stages'].get(k, 0.0):.1f}" for k in STAGES)
        cold = ", ".join(f"{r['cold_stages'].get(k, 0.0):.0f}" for k in STAGES[:-1])
        print(f"| {r['corpus']} | {r['n']} | {warm} | {cold} |")


def _index_cell(row: dict[str, object]) -> str:
    """The word index's files and postings, the seconds it took to read, and how many
    warm searches it answered (rg answered the rest)."""
    index = row.get("index")
    if not index:
        return "none"
    warm = row.get("warm_s")
    return (
        f"{index['files']:,} files, {index['postings'] / 1e6:.1f} M words, "
        f"{row['index_s']:.1f} s; answered {index['answered']}"
        + (f"; caches warm {warm:.1f} s later" if warm is not None else "")
    )


def cold_cli(repo: Path, at: Cursor, budget: int) -> list[float]:
    """Wall seconds of fresh ``greprag retrieve`` processes."""
    script = Path(sys.executable).with_name("greprag")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "greprag"]
    where = ["--file", at.file, "--line", str(at.line), "--column", str(at.column)]
    argv = [*command, "retrieve", "--repo", str(repo), *where, "--budget", str(budget)]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times = []
    for _ in range(_CLI_RUNS):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", nargs="*", default=list(CORPUS_FETCHERS), choices=list(CORPUS_FETCHERS)
    )
    parser.add_argument("--cursors", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=4096)
    parser.add_argument("--routes", default="grep", choices=["grep", "auto"])
    parser.add_argument("--no-cli", action="store_true", help="skip the cold CLI timing")
    parser.add_argument("--child", choices=list(CORPUS_FETCHERS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args)
        return
    rows = []
    for name in args.corpus:
        rows.append(run_corpus(name, args))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print_tables(rows)
    if not args.no_cli:
        click = fetch(_corpus("click"))
        files = source_files(click, "python")
        at = pick_cursors(click, "python", 1, args.seed)[0]
        times = cold_cli(click, at, args.budget)
        print(
            f"\ncold CLI {count_lines(files):,} lines (click): median of {_CLI_RUNS} "
            f"{statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})"
        )


if __name__ == "__main__":
    main()
