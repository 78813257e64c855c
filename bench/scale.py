"""Workspace scale benchmark: 119 real repositories (pinned PyPI wheels, unpacked).

    python -m bench.scale [--rounds 2] [--call retrieve|search] [--sizes 15,30,60,all]
                          [--index-repos 6] [--out scale.json]

Each package is fetched with the corpora helpers (``pip download --no-deps``, cached,
made a git repository). In one run, side by side:

1. size: files and lines of every repo (the files rg lists), and rg's raw throughput on
   the whole workspace with 1 and 2 threads (lines/s per core);
2. opening the workspace warm: in process, and on a local Ray with ``--shards`` actors
   (each actor's RSS once warm; this process's RSS growth for the single-process one);
3. query latency: every ``QUERIES`` snippet, ``--rounds`` times, single-process and Ray
   alternating (the same noise for both); p50/p95; and how often Ray ranks as one
   process does, beside how often one process ranks as itself (regex matching has a
   wall-clock budget: on a loaded machine it trips, and two runs differ);
4. latency against size: the single-process workspace over the first 15, 30, 60 and all
   repos (the cost model of docs/scale.md);
5. bulk dense indexing of the ``--index-repos`` smallest repos as Ray tasks (one per
   shard, one model load each) into a scratch cache: seconds, chunks, chunks/s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.corpora import Corpus, fetch
from bench.latency import _percentile
from greprag.rg import find_rg
from greprag.workspace import LocalBackend, RayOptions, RepoSpec, Workspace, WorkspaceSpec

__all__ = ["PINS", "QUERIES", "QUESTIONS", "main", "workspace_corpora"]

# The packages of this project's own environment, at the versions it resolved: real,
# varied Python (and data) from small helpers to transformers and sympy.
PINS: tuple[tuple[str, str], ...] = (
    ("aiohappyeyeballs", "2.7.1"),
    ("aiohttp", "3.14.5"),
    ("aiosignal", "1.4.0"),
    ("annotated-doc", "0.0.7"),
    ("annotated-types", "0.8.0"),
    ("anyio", "4.16.0"),
    ("attrs", "26.1.0"),
    ("boto3", "1.44.8"),
    ("botocore", "1.44.8"),
    ("certifi", "2026.10.19.post1"),
    ("cffi", "2.1.1"),
    ("charset-normalizer", "3.5.3"),
    ("click", "8.5.1"),
    ("cloudpickle", "3.1.3"),
    ("contourpy", "1.3.3"),
    ("cryptography", "50.0.2"),
    ("cycler", "0.12.1"),
    ("faiss-cpu", "1.15.1"),
    ("fastuuid", "0.14.0"),
    ("filelock", "4.3.1"),
    ("fonttools", "4.68.0"),
    ("frozenlist", "1.8.0"),
    ("fsspec", "2026.9.0"),
    ("h11", "0.16.0"),
    ("h2", "4.4.1"),
    ("hf-xet", "1.8.0"),
    ("hpack", "4.2.0"),
    ("httpcore", "1.0.9"),
    ("httpcore2", "2.16.2"),
    ("httpx", "0.28.1"),
    ("httpx2", "2.16.2"),
    ("huggingface_hub", "2.4.0"),
    ("hyperframe", "6.1.0"),
    ("hypothesis", "6.170.17"),
    ("idna", "3.20"),
    ("importlib_metadata", "8.9.0"),
    ("iniconfig", "2.3.1"),
    ("Jinja2", "3.1.6"),
    ("jiter", "0.19.0"),
    ("jmespath", "1.1.0"),
    ("joblib", "1.6.0"),
    ("jsonschema", "4.26.0"),
    ("jsonschema-specifications", "2025.9.1"),
    ("kiwisolver", "1.5.1"),
    ("litellm", "1.110.2"),
    ("lxml", "6.1.3"),
    ("markdown-it-py", "4.3.0"),
    ("MarkupSafe", "3.0.4"),
    ("matplotlib", "3.11.2"),
    ("mcp", "2.3.0"),
    ("mcp-types", "2.3.0"),
    ("mdurl", "0.1.2"),
    ("mpmath", "1.3.0"),
    ("msgpack", "1.2.4"),
    ("multidict", "7.2.1"),
    ("narwhals", "2.29.0"),
    ("networkx", "3.6.1"),
    ("numpy", "2.4.6"),
    ("openai", "3.57.0"),
    ("opentelemetry-api", "1.45.2"),
    ("packaging", "26.4"),
    ("pillow", "13.0.0"),
    ("pluggy", "1.7.0"),
    ("propcache", "0.5.4"),
    ("protobuf", "7.36.2"),
    ("pycparser", "3.12"),
    ("pydantic", "2.14.4"),
    ("pydantic-settings", "2.16.3"),
    ("pydantic_core", "2.50.5"),
    ("Pygments", "2.21.0"),
    ("PyJWT", "2.15.1"),
    ("pyparsing", "3.3.3"),
    ("pytest", "9.2.0"),
    ("pytest-timeout", "2.4.0"),
    ("python-dateutil", "2.9.0.post0"),
    ("python-dotenv", "1.2.4"),
    ("python-multipart", "0.0.34"),
    ("PyYAML", "6.0.4"),
    ("rank-bm25", "0.2.2"),
    ("referencing", "0.37.0"),
    ("regex", "2026.11.19"),
    ("requests", "2.34.2"),
    ("rich", "15.0.0"),
    ("rpds-py", "2026.9.1"),
    ("ruff", "0.17.6"),
    ("s3transfer", "0.19.3"),
    ("safetensors", "0.8.0"),
    ("scikit-learn", "1.9.1"),
    ("scipy", "1.17.1"),
    ("sentence-transformers", "6.2.0"),
    ("shellingham", "1.5.4"),
    ("six", "1.17.0"),
    ("sniffio", "1.3.1"),
    ("sortedcontainers", "2.4.0"),
    ("sse-starlette", "3.7.0"),
    ("starlette", "1.10.0"),
    ("sympy", "1.14.0"),
    ("threadpoolctl", "3.8.0"),
    ("tiktoken", "0.14.0"),
    ("tokenizers", "0.23.3"),
    ("tqdm", "4.70.1"),
    ("transformers", "5.24.0"),
    ("tree-sitter", "0.26.1"),
    ("tree-sitter-c-sharp", "0.23.5"),
    ("tree-sitter-go", "0.25.0"),
    ("tree-sitter-java", "0.23.5"),
    ("tree-sitter-javascript", "0.25.0"),
    ("tree-sitter-python", "0.25.0"),
    ("tree-sitter-rust", "0.24.2"),
    ("tree-sitter-typescript", "0.23.2"),
    ("truststore", "0.10.5"),
    ("typer", "0.28.0"),
    ("typing-inspection", "0.4.5"),
    ("typing_extensions", "4.16.0"),
    ("urllib3", "2.8.0"),
    ("uvicorn", "0.54.0"),
    ("watchfiles", "1.3.0"),
    ("yarl", "1.25.1"),
    ("zipp", "4.1.2"),
)


# Code before a cursor, as an editor would send it: identifiers many packages share.
QUERIES: tuple[str, ...] = (
    "def verify_signature(payload, secret):\n"
    "    digest = hmac.new(secret, payload, hashlib.sha256)\n"
    "    return hmac.compare_digest(",
    "async def fetch(client, url):\n"
    "    response = await client.get(url, timeout=timeout)\n"
    "    response.raise_for_status()\n"
    "    return response.",
    "def load_config(path):\n    with open(path) as handle:\n"
    "        data = yaml.safe_load(handle)\n    return Config.",
    "class RetryPolicy:\n    def backoff(self, attempt):\n"
    "        delay = self.base_delay * 2 ** attempt\n        time.sleep(min(delay, self.",
    "def parse_version(text):\n    match = VERSION_PATTERN.match(text)\n    return Version(",
    "tokens = tokenizer.encode(text, add_special_tokens=True)\noutput = model.generate(",
    "def to_json(self):\n    return json.dumps(self.__dict__, default=str, sort_keys=",
    "session = boto3.Session(profile_name=profile)\nclient = session.client('s3')\n"
    "client.upload_file(",
)
# Plain-language questions, as greprag search takes them (--call search).
QUESTIONS: tuple[str, ...] = (
    "where do we validate webhook signatures",
    "how do I retry a request after a timeout",
    "how is the configuration file loaded",
    "exponential backoff between attempts",
    "parse a version string",
    "encode text into tokens for the model",
    "serialize an object to JSON",
    "upload a file to S3",
)
BUDGET = 4096
Ask = Callable[[Workspace, str], Any]  # one query of the workspace -> Result


def _retrieve(workspace: Workspace, text: str) -> Any:
    return workspace.retrieve(text, budget=BUDGET)


def _search(workspace: Workspace, text: str) -> Any:
    return workspace.search(text, budget=BUDGET)


def workspace_corpora() -> list[Corpus]:
    """One Corpus per pinned package."""
    return [Corpus(name.lower(), "python", "pypi", name, version) for name, version in PINS]


def _log(message: str) -> None:
    print(f"[scale] {message}", file=sys.stderr, flush=True)


def _size(rg: Path, root: Path) -> tuple[int, int]:
    """Files rg would search and their lines."""
    listed = (
        subprocess.run(
            [str(rg), "--files", "--no-config"], cwd=root, capture_output=True, check=True
        )
        .stdout.decode("utf-8", "replace")
        .splitlines()
    )
    lines = 0
    for name in listed:
        try:
            lines += (root / name).read_bytes().count(b"\n")
        except OSError:
            continue
    return len(listed), lines


def _rg_throughput(rg: Path, roots: list[Path], threads: int) -> float:
    """Seconds for one literal rg pass over every repo (warm page cache)."""
    argv = [
        str(rg),
        "--no-config",
        "-c",
        "-F",
        "-j",
        str(threads),
        "compare_digest",
        *map(str, roots),
    ]
    subprocess.run(argv, capture_output=True, check=False)  # warm the page cache
    started = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=False)
    return time.perf_counter() - started


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _stats(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(_percentile(samples, 0.5), 1),
        "p95_ms": round(_percentile(samples, 0.95), 1),
        "n": len(samples),
    }


def _ranking(result) -> list[tuple]:
    return [(b.repo, b.path, b.start_line, b.end_line, b.score) for b in result.blocks]


def _cut(result) -> bool:
    """A repo's regex matching hit its wall-clock budget (load-dependent: two runs of the
    same query may then rank differently, in one process as on Ray)."""
    return any("time budget" in note for note in result.fallbacks)


def _ranking_checks(
    local: Workspace, on_ray: Workspace, ask: Ask, texts: tuple[str, ...]
) -> dict[str, int]:
    """Per query: Ray against one process, and one process against itself."""
    counts = dict.fromkeys(("queries", "ray_equals_local", "local_equals_local", "uncut"), 0)
    counts["ray_equals_local_uncut"] = 0
    for text in texts:
        first, second = (ask(local, text) for _ in range(2))
        remote = ask(on_ray, text)
        uncut = not any(_cut(r) for r in (first, second, remote))
        same = _ranking(remote) == _ranking(first)
        counts["queries"] += 1
        counts["ray_equals_local"] += same
        counts["local_equals_local"] += _ranking(second) == _ranking(first)
        counts["uncut"] += uncut
        counts["ray_equals_local_uncut"] += same and uncut
    return counts


def _latency(workspace: Workspace, rounds: int, ask: Ask, texts: tuple[str, ...]) -> list[float]:
    samples = []
    for _ in range(rounds):
        for text in texts:
            started = time.perf_counter()
            ask(workspace, text)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def _bulk(
    spec: WorkspaceSpec, sizes: list[tuple[int, int]], options: RayOptions, count: int
) -> dict[str, Any]:
    """Bulk dense indexing of the ``count`` smallest repos of ≥ 2k lines, as Ray tasks,
    into a scratch cache."""
    from greprag.workspace.on_ray import bulk_index

    order = sorted(range(len(spec.repos)), key=lambda i: sizes[i][1])
    picked = [i for i in order if sizes[i][1] >= 2000][:count]
    chosen = [spec.repos[i] for i in picked]
    with tempfile.TemporaryDirectory(prefix="greprag-scale-") as cache:
        started = time.perf_counter()
        reports = bulk_index(WorkspaceSpec(tuple(chosen)), options, {"cache_dir": cache})
        seconds = time.perf_counter() - started
    chunks = sum(r.chunks for r in reports)
    return {
        "repos": [r.name for r in chosen],
        "lines": sum(sizes[i][1] for i in picked),
        "tasks": min(options.shards, len(chosen)),
        "seconds": round(seconds, 1),
        "chunks": chunks,
        "chunks_per_s": round(chunks / seconds, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="passes over the queries")
    parser.add_argument(
        "--call",
        choices=("retrieve", "search"),
        default="retrieve",
        help="retrieve: QUERIES as code before a cursor; search: QUESTIONS",
    )
    parser.add_argument(
        "--sizes", default="15,30,60,all", help="workspace sizes for step 4 ('' skips it)"
    )
    parser.add_argument("--shards", type=int, default=2, help="Ray actors")
    parser.add_argument("--index-repos", type=int, default=6, help="repos bulk-indexed (0: skip)")
    parser.add_argument("--out", type=Path, help="write the numbers as JSON here")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"cpus": os.cpu_count(), "load_avg": os.getloadavg()}
    ask, texts = (_search, QUESTIONS) if args.call == "search" else (_retrieve, QUERIES)
    report["call"] = args.call

    roots = [fetch(c) for c in workspace_corpora()]
    rg = find_rg()
    sizes = [_size(rg, root) for root in roots]
    lines = sum(n for _, n in sizes)
    report["repos"] = len(roots)
    report["files"] = sum(f for f, _ in sizes)
    report["lines"] = lines
    report["largest"] = sorted(
        ((root.name, n) for root, (_, n) in zip(roots, sizes, strict=True)), key=lambda x: -x[1]
    )[:5]
    _log(f"{len(roots)} repos, {report['files']} files, {lines} lines")
    report["rg_pass_s"] = {j: round(_rg_throughput(rg, roots, j), 3) for j in (1, 2)}
    report["rg_lines_per_s_per_core"] = round(lines / report["rg_pass_s"][1])

    spec = WorkspaceSpec(tuple(RepoSpec(r.resolve(), r.name) for r in roots))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    local = Workspace(spec, LocalBackend(spec, {}, load_dense=False))
    ask(local, texts[0])  # file lists listed once: warm
    report["open_local_s"] = round(time.perf_counter() - started, 2)
    report["local_rss_growth_mb"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    )

    import ray

    from greprag.workspace.on_ray import RayBackend

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    options = RayOptions(shards=args.shards, timeout_s=120.0, cpus_per_shard=0.5)
    started = time.perf_counter()
    on_ray = Workspace(spec, RayBackend(spec, options, {}, load_dense=False))
    ask(on_ray, texts[0])
    report["open_ray_s"] = round(time.perf_counter() - started, 2)
    report["actor_rss_mb"] = [round(_rss_mb(pid)) for pid in on_ray.backend.pids]

    report["ranking_checks"] = _ranking_checks(local, on_ray, ask, texts)
    local_ms: list[float] = []
    ray_ms: list[float] = []
    for _ in range(args.rounds):  # alternate: both see the same load on a shared machine
        local_ms += _latency(local, 1, ask, texts)
        ray_ms += _latency(on_ray, 1, ask, texts)
    report["query_local"] = _stats(local_ms)
    report["query_ray"] = _stats(ray_ms)
    report["actor_rss_mb_after"] = [round(_rss_mb(pid)) for pid in on_ray.backend.pids]
    _log(f"local {report['query_local']}, ray {report['query_ray']}")
    on_ray.close()

    by_size = []
    sizes_wanted = [len(roots) if n == "all" else int(n) for n in args.sizes.split(",") if n]
    for count in sizes_wanted:
        part = WorkspaceSpec(spec.repos[:count])
        workspace = Workspace(part, LocalBackend(part, {}, load_dense=False))
        ask(workspace, texts[0])
        part_lines = sum(n for _, n in sizes[:count])
        stats = _stats(_latency(workspace, 1, ask, texts))
        by_size.append({"repos": count, "lines": part_lines, **stats})
        _log(f"{count} repos, {part_lines} lines: {stats}")
    report["latency_by_size"] = by_size

    if args.index_repos > 0:
        report["bulk_index"] = _bulk(spec, sizes, options, args.index_repos)
        _log(f"bulk index: {report['bulk_index']}")
    ray.shutdown()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
