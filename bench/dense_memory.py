"""Peak memory of building the dense index of a large repo, and warm queries on it (prints).

    python -m bench.dense_memory [--corpus DIR] [--real-every 20] [--queries 40] [--cache DIR]
    python -m bench.dense_memory --real-every 1 --stop-after 4000 [--trace-every 500]

Embedding all of sympy (~754k lines, ~36k chunks) with MiniLM takes minutes to an hour
on a shared 2-core box, so the build embeds every ``--real-every``-th batch with the real
model (int8) and gives the other batches seeded random unit vectors. Everything else is
the real build: the loaded model, chunking, the growing vector buffer, the faiss index
(exact, then IVF past 20k rows), checkpoints and the final save. The peak RSS is that of
the whole process; ``--real-every 1`` embeds everything for real. The index is then
searched through the real ``DenseRoute`` (query embedding, freshness check, faiss):
its timings, not its ranking, are what this measures. ``--cache`` keeps the index there,
so a second run times the queries again without rebuilding.

``--stop-after N`` stops the build once the model has embedded N texts (with
``--real-every 1``: every batch real, as in a real build, for a part of the time) and
skips the queries. The build prints VmRSS and VmHWM every ``--trace-every`` embedded
texts and the model's throughput, so whether the peak flattens or keeps climbing across
batches shows without embedding all of sympy (~1 hour here).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

QUERIES = [
    "simplify a rational expression with polynomial gcd",
    "def _eval_derivative(self, s):\n    return self.func(",
    "solve a system of linear equations over the rationals",
    "class Matrix(MatrixBase):\n    def inv(self, method=None):\n        return self.",
    "print an expression as LaTeX",
    "integrate a rational function with partial fractions",
    "def doit(self, **hints):\n    if hints.get('deep', True):\n        terms = [",
    "series expansion around a point",
]


def _status_mib(field: str) -> int:
    with open("/proc/self/status") as status:
        return int(status.read().split(f"{field}:")[1].split()[0]) // 1024


def _rss_mib() -> int:
    return _status_mib("VmRSS")


class _Enough(Exception):
    """Raised from the embedder once ``--stop-after`` texts were embedded."""


def _sample_peak(stop: threading.Event, peak: list[int]) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], _rss_mib())
        time.sleep(0.01)


def _sympy() -> Path:
    from bench.corpora import fetch
    from bench.latency import SYMPY

    return fetch(SYMPY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="repo to index (default: sympy 1.14.0)")
    parser.add_argument("--real-every", type=int, default=20)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--cache", type=Path, help="index cache to keep and reuse")
    parser.add_argument(
        "--stop-after", type=int, help="stop the build after N texts embedded by the model"
    )
    parser.add_argument("--trace-every", type=int, default=500, help="texts between RSS lines")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from greprag.dense.embed import Embedder
    from greprag.dense.index import DenseIndex
    from greprag.routes import RouteRequest
    from greprag.routes.dense import DenseRoute

    repo = args.corpus or _sympy()

    class Sampled(Embedder):
        """The real model for one batch in ``real_every``; seeded random unit vectors else."""

        batches = real = 0
        real_s = 0.0
        every = args.real_every
        traced = 0

        def encode(self, texts: list[str]) -> np.ndarray:
            self.batches += 1
            if (self.batches - 1) % self.every == 0:
                started = time.perf_counter()
                vectors = super().encode(texts)
                self.real_s += time.perf_counter() - started
                self.real += len(texts)
                self._trace()
                if args.stop_after and self.real >= args.stop_after:
                    raise _Enough
                return vectors
            rng = np.random.default_rng(self.batches)
            vectors = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
            return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

        def _trace(self) -> None:
            if self.real - self.traced >= args.trace_every:
                self.traced = self.real
                print(
                    f"  {self.real:6d} texts embedded: VmRSS {_rss_mib()} MiB, VmHWM "
                    f"{_status_mib('VmHWM')} MiB, {self.real / self.real_s:.1f} texts/s",
                    flush=True,
                )

    cache = args.cache or Path(tempfile.mkdtemp(prefix="greprag-dense-memory-"))
    embedder = Sampled()
    stop, peak = threading.Event(), [0]
    threading.Thread(target=_sample_peak, args=(stop, peak), daemon=True).start()
    embedder._load()
    loaded = _rss_mib()
    started = time.perf_counter()
    index = DenseIndex(repo, embedder=embedder, cache_dir=cache)
    try:
        report = index.update()
    except _Enough:
        stop.set()
        print(
            f"build of {repo.name} stopped after {embedder.real} texts embedded by the model "
            f"in {embedder.real_s:.0f} s ({embedder.real / embedder.real_s:.1f} texts/s, "
            f"{time.perf_counter() - started:.0f} s in all, load {os.getloadavg()[0]:.1f}); "
            f"RSS after model load {loaded} MiB, VmHWM {_status_mib('VmHWM')} MiB"
        )
        return
    build_s = time.perf_counter() - started
    stop.set()
    print(
        f"build of {repo.name}: {report.changed} files, {len(index.snapshot.rows)} rows "
        f"({embedder.real} embedded by the model), approximate={index.approximate}, "
        f"{build_s:.0f} s, file {index.path.stat().st_size / 1e6:.0f} MB; RSS after model "
        f"load {loaded} MiB, peak {peak[0]} MiB (sampled), ru_maxrss "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB"
    )
    del index
    embedder.every = 1  # queries are embedded by the model
    route = DenseRoute(repo, cache_dir=cache)
    route.embedder = route.index.embedder = embedder
    route.search(RouteRequest.of_text(route.repo, "warm up"))
    totals, cpu = [], []
    parts: dict[str, list[float]] = {"dense_embed": [], "dense_refresh": [], "dense_search": []}
    for n in range(args.queries):
        started, cpu_started = time.perf_counter(), time.process_time()
        hits = route.search(RouteRequest.of_text(route.repo, QUERIES[n % len(QUERIES)], k=20))
        totals.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        for key in parts:
            parts[key].append(hits.timings.get(key, 0.0))
    totals.sort()
    split = ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in parts.items())
    print(
        f"warm dense query ({len(totals)}, load {os.getloadavg()[0]:.1f}): p50 "
        f"{statistics.median(totals):.1f} ms, p95 {totals[int(0.95 * (len(totals) - 1))]:.1f} "
        f"ms, CPU p50 {statistics.median(cpu):.1f} ms; p50 parts: {split}"
    )


if __name__ == "__main__":
    main()
