"""Retrieval latency on real repositories (a benchmark that prints numbers, not a test).

    python -m bench.latency [--corpus django jdk] [--cursors 50] [--seed 0]

For each corpus: the source line count, then in-process ``Retriever.retrieve`` latency
(p50 / p95 / max over seeded cursor positions, warm-up excluded) and the median of each
pipeline stage. Then the wall time of a cold ``greprag retrieve`` process on click
(~10k lines), median of 5. Targets (issue 2): p50 ≤ 50 ms on django, ≤ 150 ms on the JDK,
cold CLI ≤ 0.5 s. Corpora are fetched once into ``~/.cache/greprag-bench`` by
``bench.corpora``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
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
from greprag import Retriever

# java.base's public packages (java.*, javax.*): ~720k lines, the scale the issue names.
JDK_BASE = Corpus("jdk17-base", "java", "debian", "openjdk-17-source", "17.0.19+10-1~deb12u2")
_JDK_KEEP = ("java.base/java/", "java.base/javax/")
_EXT = {"python": ".py", "java": ".java"}
_CLI_RUNS = 5


@dataclass(frozen=True)
class Cursor:
    file: str
    line: int
    column: int


def _corpus(name: str) -> Corpus:
    return next(c for c in CORPORA if c.name == name)


def fetch_jdk_base(cache: Path | None = None) -> Path:
    """java.base's java/ and javax/ trees from Debian's openjdk-17-source, as a git repo."""
    cache = cache or cache_dir()
    root = cache / "repos" / JDK_BASE.key
    if (root / ".git" / "greprag-bench-ok").exists():
        return root
    downloads = cache / "downloads" / JDK_BASE.key
    downloads.mkdir(parents=True, exist_ok=True)
    deb = _apt_download(JDK_BASE, downloads)
    staging = root.with_name(root.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(BytesIO(_tar_member_bytes(_deb_data(deb), "/lib/src.zip"))) as zf:
        for info in zf.infolist():
            if info.filename.endswith(".java") and info.filename.startswith(_JDK_KEEP):
                target = staging / info.filename.split("/", 1)[1]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(info))
    _git_commit(staging)
    (staging / ".git" / "greprag-bench-ok").write_text(JDK_BASE.version)
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    return root


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


def measure(repo: Path, cursors: list[Cursor], budget: int) -> dict[str, object]:
    """In-process latency of ``retrieve`` (ms) after three warm-up calls."""
    retriever = Retriever(repo, budget=budget, router="offline")
    for at in cursors[:3]:
        retriever.retrieve(file=at.file, line=at.line, column=at.column)
    wall: list[float] = []
    stages: dict[str, list[float]] = {}
    for at in cursors:
        start = time.perf_counter()
        res = retriever.retrieve(file=at.file, line=at.line, column=at.column)
        wall.append((time.perf_counter() - start) * 1000)
        for stage, ms in res.timings.items():
            stages.setdefault(stage, []).append(ms)
    return {
        "p50": statistics.median(wall),
        "p95": _percentile(wall, 0.95),
        "max": max(wall),
        "stages": {k: statistics.median(v) for k, v in stages.items()},
    }


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


def _report(name: str, repo: Path, lang: str, args: argparse.Namespace) -> None:
    files = source_files(repo, lang)
    cursors = pick_cursors(repo, lang, args.cursors, args.seed)
    result = measure(repo, cursors, args.budget)
    stages = " ".join(f"{k}={v:.1f}" for k, v in result["stages"].items())
    print(
        f"{name:<12} {len(files):>6} files {count_lines(files):>8} lines  n={len(cursors):<3}"
        f" p50={result['p50']:6.1f} ms  p95={result['p95']:6.1f} ms  max={result['max']:6.1f} ms"
    )
    print(f"{'':<12} stage medians (ms): {stages}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", nargs="*", default=["django", "jdk"], choices=["django", "jdk", "click"]
    )
    parser.add_argument("--cursors", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=4096)
    parser.add_argument("--no-cli", action="store_true", help="skip the cold CLI timing")
    args = parser.parse_args(argv)

    for name in args.corpus:
        if name == "jdk":
            _report("jdk17-base", fetch_jdk_base(), "java", args)
        else:
            corpus = _corpus(name)
            _report(corpus.key, fetch(corpus), corpus.lang, args)
    if not args.no_cli:
        click = fetch(_corpus("click"))
        files = source_files(click, "python")
        at = pick_cursors(click, "python", 1, args.seed)[0]
        times = cold_cli(click, at, args.budget)
        print(
            f"cold CLI     {count_lines(files):>8} lines (click)  median of {_CLI_RUNS}="
            f"{statistics.median(times):.3f} s  min={min(times):.3f} s  max={max(times):.3f} s"
        )


if __name__ == "__main__":
    main()
