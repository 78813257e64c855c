"""Load benchmark of ``greprag serve`` (loopback only; bounded in time and requests).

    python -m bench.serve_load [--seconds 60] [--requests 10000] [--clients 8] [--index]

Against sqlalchemy 2.0.58 (the PyPI wheel, ~242k lines of Python, fetched once into the
bench cache): a work copy is cloned afresh, a branch touching 300 files (80 renamed, 40
deleted, 100 edited, 80 added) is committed beside it, and ``greprag serve --port 0`` is started on
127.0.0.1. Then:

1. load: ``--clients`` threads post ``/retrieve`` for seeded cursors (``bench.latency``)
   until ``--seconds`` have passed and ``--requests`` were made (never past
   ``--max-seconds``); errors, latency (all, answer-cache hits, misses; the first pass
   over the cursors is the cold one), and the server's RSS every 1,000 requests;
2. an edit inside a block of an answer: how soon an answer quotes it, and whether any
   answer still quoted the old text;
3. the branch switch and back: time to settle (``/status``), then, for each cursor, the
   warm answer must equal a fresh in-process ``Retriever``'s on the same tree;
4. ``greprag retrieve`` wall time with the server running (median of 5) and without.

``--index`` builds the dense index first (``greprag index``), so step 4 measures an
indexed repo (without a server, ``--routes auto`` then loads the embedding model).
The server stops at the end, whatever happened.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.corpora import Corpus, cache_dir, fetch
from bench.latency import Cursor, _percentile, pick_cursors
from greprag import Retriever

SQLALCHEMY = Corpus("sqlalchemy", "python", "pypi", "sqlalchemy", "2.0.58")
SWITCH = {"renamed": 80, "deleted": 40, "edited": 100, "added": 80}  # 300 files
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]


def _git(repo: Path, *argv: str) -> None:
    subprocess.run([*_GIT, *argv], cwd=repo, check=True, capture_output=True)


def prepare(seed: int) -> tuple[Path, Path, list[str]]:
    """A fresh clone of the corpus with a ``switch`` branch; (clone, cache, the files the
    switch renames or deletes)."""
    source = fetch(SQLALCHEMY)
    work = cache_dir() / "serve-load"
    repo = work / "sqlalchemy"
    shutil.rmtree(repo, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True)
    files = sorted(
        p.relative_to(repo).as_posix() for p in repo.rglob("*.py") if ".git" not in p.parts
    )
    rng = random.Random(seed)
    chosen = rng.sample(files, SWITCH["renamed"] + SWITCH["deleted"] + SWITCH["edited"])
    renamed = chosen[: SWITCH["renamed"]]
    deleted = chosen[SWITCH["renamed"] : SWITCH["renamed"] + SWITCH["deleted"]]
    edited = chosen[SWITCH["renamed"] + SWITCH["deleted"] :]
    _git(repo, "checkout", "-q", "-b", "switch")
    for path in renamed:
        (repo / "moved" / path).parent.mkdir(parents=True, exist_ok=True)
        _git(repo, "mv", path, f"moved/{path}")
    for path in deleted:
        _git(repo, "rm", "-q", path)
    for path in edited:
        full = repo / path
        full.write_text(full.read_text(encoding="utf-8") + "\n# edited on the switch branch\n")
    for i, path in enumerate(rng.sample(edited, SWITCH["added"])):
        copy = repo / "added" / f"copy_{i}_{Path(path).name}"
        copy.parent.mkdir(exist_ok=True)
        copy.write_bytes((repo / path).read_bytes())
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-am", "switch: 300 files renamed, deleted or edited")
    _git(repo, "checkout", "-q", "main")  # bench.corpora commits on main
    return repo, work / "cache", renamed + deleted


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GREPRAG_")}
    env["GREPRAG_CACHE_DIR"] = str(cache)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


def _greprag() -> list[str]:
    script = Path(sys.executable).with_name("greprag")
    return [str(script)] if script.exists() else [sys.executable, "-m", "greprag"]


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    port: int

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            data = json.dumps(body).encode() if body is not None else None
            connection.request(method, path, body=data, headers={"Host": "127.0.0.1"})
            return json.loads(connection.getresponse().read())
        finally:
            connection.close()

    def root_status(self) -> dict[str, Any]:
        status = self.call("GET", "/status")
        if "roots" not in status:
            raise RuntimeError(f"/status failed: {status}")
        return status["roots"][0]

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


@contextmanager
def serving(repo: Path, cache: Path) -> Iterator[Served]:
    """``greprag serve`` on 127.0.0.1, a free port; stopped (SIGTERM) on the way out."""
    proc = subprocess.Popen(
        [*_greprag(), "serve", "--repo", str(repo), "--port", "0"],
        env=_env(cache),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        port = 0
        while not port:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"greprag serve did not start: {proc.stderr.read()!r}")
            for record in (cache / "servers").glob("*.json"):
                data = json.loads(record.read_text())
                port = data["port"] if data["pid"] == proc.pid else 0
            time.sleep(0.1)
        yield Served(proc, port)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@dataclass
class Sample:
    ms: float
    status: int
    hit: bool
    first_pass: bool


@dataclass
class Load:
    samples: list[Sample] = field(default_factory=list)
    rss: list[tuple[int, int]] = field(default_factory=list)  # (requests so far, KiB)
    seconds: float = 0.0


def load(served: Served, cursors: list[Cursor], args: argparse.Namespace) -> Load:
    """``args.clients`` keep-alive clients posting /retrieve round-robin over ``cursors``."""
    result = Load()
    counter = itertools.count()
    lock = threading.Lock()
    started = time.monotonic()

    def done(count: int) -> bool:
        elapsed = time.monotonic() - started
        return elapsed > args.max_seconds or (elapsed >= args.seconds and count >= args.requests)

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
        headers = {"Host": "127.0.0.1", "Content-Type": "application/json"}
        while True:
            n = next(counter)
            if done(n):
                break
            at = cursors[n % len(cursors)]
            body = json.dumps({"file": at.file, "line": at.line, "column": at.column})
            begin = time.perf_counter()
            try:
                connection.request("POST", "/retrieve", body=body, headers=headers)
                response = connection.getresponse()
                response.read()
                status, hit = response.status, response.getheader("X-GrepRAG-Cache") == "hit"
            except OSError:
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
                status, hit = 0, False
            ms = (time.perf_counter() - begin) * 1000
            with lock:
                result.samples.append(Sample(ms, status, hit, n < len(cursors)))
                if len(result.samples) % 1000 == 0:
                    result.rss.append((len(result.samples), served.rss_kib()))
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.monotonic() - started
    return result


def _stats(label: str, values: list[float]) -> str:
    if not values:
        return f"{label:<22} n=0"
    return (
        f"{label:<22} n={len(values):<6} p50={statistics.median(values):7.1f} ms  "
        f"p95={_percentile(values, 0.95):7.1f} ms  max={max(values):7.1f} ms"
    )


def report_load(result: Load, rss_start: int) -> None:
    samples = result.samples
    errors = sum(1 for s in samples if s.status != 200)
    print(
        f"load: {len(samples)} requests in {result.seconds:.1f} s "
        f"({len(samples) / result.seconds:.0f}/s), {errors} errors"
    )
    print(_stats("all", [s.ms for s in samples]))
    print(_stats("cold (first pass)", [s.ms for s in samples if s.first_pass]))
    print(_stats("warm (after it)", [s.ms for s in samples if not s.first_pass]))
    print(_stats("  cache hits", [s.ms for s in samples if s.hit]))
    print(_stats("  misses", [s.ms for s in samples if not s.hit]))
    marks = ", ".join(f"{n}: {kib / 1024:.0f}" for n, kib in result.rss)
    print(f"server RSS (MiB) at start {rss_start / 1024:.0f}; by requests served: {marks}")
    if len(result.rss) >= 2:
        first, last = result.rss[0][1], result.rss[-1][1]
        print(
            f"RSS from request {result.rss[0][0]} to {result.rss[-1][0]}: "
            f"{(last - first) / 1024:+.1f} MiB ({(last - first) / first:+.1%})"
        )


def _quoted(answer: dict[str, Any], path: str) -> str:
    return "".join(b["text"] for b in answer["blocks"] if b["path"] == path and not b["outline"])


def _stale(repo: Path, answer: dict[str, Any]) -> list[str]:
    """Blocks whose text is not what the file holds now."""
    bad = []
    for b in answer["blocks"]:
        if b["outline"]:
            continue
        try:
            lines = (repo / b["path"]).read_text(encoding="utf-8").splitlines()
        except OSError:
            bad.append(f"{b['path']} (gone)")
            continue
        if "\n".join(lines[b["start_line"] - 1 : b["end_line"]]).rstrip() != b["text"].rstrip():
            bad.append(f"{b['path']}:{b['start_line']}-{b['end_line']}")
    return bad


def edit_reflection(served: Served, repo: Path, cursors: list[Cursor]) -> None:
    """Edit a line inside a quoted block; time until an answer quotes the edit."""
    for at in cursors:
        body = {"file": at.file, "line": at.line, "column": at.column}
        answer = served.call("POST", "/retrieve", body)
        block = next((b for b in answer["blocks"] if not b["outline"]), None)
        if block is not None:
            break
    else:
        print("edit: no cursor quoted a whole block; skipped")
        return
    target = repo / block["path"]
    original = target.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    index = min(block["start_line"], len(lines) - 1)  # the block's second line (0-based)
    marker = "# greprag-bench: EDITED\n"
    lines.insert(index, " " * (len(lines[index]) - len(lines[index].lstrip())) + marker)
    started = time.perf_counter()
    target.write_text("".join(lines), encoding="utf-8")
    stale_answers = polls = 0
    try:
        while True:
            polls += 1
            answer = served.call("POST", "/retrieve", body)
            stale_answers += bool(_stale(repo, answer))
            if "greprag-bench: EDITED" in _quoted(answer, block["path"]):
                break
            if time.perf_counter() - started > 30:
                print("edit: not reflected within 30 s")
                return
        seconds = time.perf_counter() - started
        print(
            f"edit in {block['path']}: quoted by an answer {seconds * 1000:.0f} ms after the "
            f"write ({polls} request(s)); answers quoting old text: {stale_answers}"
        )
    finally:
        target.write_text(original, encoding="utf-8")


def settle(served: Served, batches: int, limit_s: float = 300) -> tuple[float, float, dict]:
    """Seconds until the watcher's batch was applied, until settled (dense refreshed)."""
    started = time.perf_counter()
    applied = None
    while time.perf_counter() - started < limit_s:
        root = served.root_status()
        if root["watcher"]["batches"] > batches and applied is None:
            applied = time.perf_counter() - started
        if applied is not None and root["settled"]:
            return applied, time.perf_counter() - started, root
        time.sleep(0.05)
    raise RuntimeError("the server did not settle")


def branch_switch(
    served: Served, repo: Path, cache: Path, cursors: list[Cursor], branch: str
) -> None:
    """Switch branches; once settled every warm answer must equal a cold Retriever's."""
    batches = served.root_status()["watcher"]["batches"]
    switched = time.perf_counter()
    _git(repo, "checkout", "-q", branch)
    checkout_s = time.perf_counter() - switched
    applied, seconds, root = settle(served, batches)
    fresh = Retriever(repo, dense_cache_dir=str(cache / "dense"))  # the server's index
    wrong, stale = 0, 0
    for at in cursors:
        body = {"file": at.file, "line": at.line, "column": at.column}
        warm = served.call("POST", "/retrieve", body)
        cold = fresh.retrieve(file=at.file, line=at.line, column=at.column).to_dict()
        wrong += warm["blocks"] != cold["blocks"]
        stale += bool(_stale(repo, warm))
    print(
        f"switch to {branch}: checkout {checkout_s:.2f} s; batch applied {applied:.2f} s and "
        f"settled (dense index refreshed) {seconds:.2f} s after it "
        f"({root['watcher']['batches'] - batches} batch(es), {root['watcher']['changed_files']} "
        f"changed paths so far); {len(cursors)} cursors: {wrong} answers differ from a fresh "
        f"Retriever, {stale} quote text not in the file"
    )


def cli_timing(repo: Path, cache: Path, at: Cursor, runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds (user + system) of ``greprag retrieve`` processes."""
    argv = [*_greprag(), "retrieve", "--repo", str(repo), "--file", at.file]
    argv += ["--line", str(at.line), "--column", str(at.column)]
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, env=_env(cache), capture_output=True, check=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


def dense_cursor(served: Served, cursors: list[Cursor]) -> Cursor:
    """A cursor whose answer used the dense route (the slow case without a server)."""
    for at in cursors:
        body = {"file": at.file, "line": at.line, "column": at.column}
        answer = served.call("POST", "/retrieve", body)
        if not answer.get("routes", {}).get("dense", "not run").startswith("not run"):
            return at
    return cursors[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--cursors", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index", action="store_true", help="build the dense index first")
    args = parser.parse_args(argv)

    repo, cache, gone = prepare(args.seed)
    touched = set(gone)
    cursors = [
        c
        for c in pick_cursors(repo, "python", args.cursors + 60, args.seed)
        if c.file not in touched
    ][: args.cursors]
    lines = sum(p.read_bytes().count(b"\n") for p in repo.rglob("*.py") if ".git" not in p.parts)
    print(
        f"sqlalchemy {SQLALCHEMY.version}: {lines} lines; {len(cursors)} cursors; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} before the run"
    )
    if args.index:
        started = time.perf_counter()
        subprocess.run(
            [*_greprag(), "index", "--repo", str(repo)],
            env=_env(cache),
            check=True,
            capture_output=True,
        )
        print(f"dense index built in {time.perf_counter() - started:.0f} s")
    with serving(repo, cache) as served:
        time.sleep(1.0)  # let the background refresh start
        rss_start = served.rss_kib()
        result = load(served, cursors, args)
        report_load(result, rss_start)
        print(f"load average after the load: {os.getloadavg()[0]:.2f}")
        edit_reflection(served, repo, cursors)
        branch_switch(served, repo, cache, cursors[:30], "switch")
        branch_switch(served, repo, cache, cursors[:30], "main")
        at = dense_cursor(served, cursors)
        with_server = cli_timing(repo, cache, at, 5)
    without = cli_timing(repo, cache, at, 3)
    for label, (walls, cpus) in (("with the server", with_server), ("without", without)):
        print(
            f"greprag retrieve CLI ({at.file}:{at.line}) {label}: median wall "
            f"{statistics.median(walls):.3f} s (min {min(walls):.3f}), median CPU "
            f"{statistics.median(cpus):.3f} s"
        )


if __name__ == "__main__":
    main()
