"""Dense-route performance on a ~100k-line real repo (Django minus contrib). Prints numbers.

    .venv/bin/python bench/dense_perf.py [--corpus DIR] [--skip-cold]

Measures: chunking, embedding throughput at 64/128/256 word pieces, cold index build,
update after one changed file, warm query p50/p95 (model loaded) and the first query's
model load in a fresh process. Run it once: the CPU is shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

WHEEL = "Django-5.1.4-py3-none-any.whl"
SHARED_DL = Path.home() / ".cache" / "greprag-bench" / "dl"
OWN_DL = Path.home() / ".cache" / "greprag-dense-perf"
QUERIES = [
    "def get_queryset(self):\n    qs = super().get_queryset()\n    return qs.filter(",
    "class CachedLoader(BaseLoader):\n    def get_template(self, name):\n        self.",
    "render the form field as an HTML input widget",
    "def migrate(self, targets, plan=None, state=None, fake=False):\n    executor.",
    "how are database transactions committed and rolled back",
    "response = HttpResponse(content_type='text/csv')\nresponse.",
    "def clean(self, value):\n    value = self.to_python(value)\n    self.validate(",
    "compile an SQL WHERE clause from lookups",
]


def corpus(explicit: Path | None) -> Path:
    """Django 5.1.4 without django/contrib (~113k lines of Python), unpacked once."""
    if explicit:
        return explicit
    target = OWN_DL / "django-core"
    if target.is_dir():
        return target
    wheel = SHARED_DL / WHEEL if (SHARED_DL / WHEEL).exists() else OWN_DL / WHEEL
    if not wheel.exists():
        OWN_DL.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                str(OWN_DL),
                "django==5.1.4",
            ],
            check=True,
        )
    tmp = Path(tempfile.mkdtemp(dir=OWN_DL))
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.startswith("django/")]
        archive.extractall(tmp, [n for n in names if not n.startswith("django/contrib/")])
    shutil.move(tmp / "django", target)
    shutil.rmtree(tmp)
    return target


def line_count(repo: Path, paths: list[str]) -> int:
    return sum((repo / p).read_text(errors="replace").count("\n") for p in paths)


def throughput(texts: list[str]) -> None:
    from greprag.dense.embed import Embedder

    embedder = Embedder()
    model = embedder._load()
    for length in (64, 128, 256):
        model.max_seq_length = length
        model.encode(texts[:16])
        started = time.perf_counter()
        model.encode(texts, batch_size=32, normalize_embeddings=True)
        print(
            f"  max_seq_length {length:3d}: {len(texts) / (time.perf_counter() - started):6.1f} "
            "chunks/s"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--sample", type=int, default=256)
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from greprag.dense.chunks import chunk_file
    from greprag.dense.freshness import list_files

    repo = corpus(args.corpus)
    paths = list_files(repo)
    started = time.perf_counter()
    chunks = [c for p in paths for c in chunk_file(p, (repo / p).read_text(errors="replace"))]
    chunk_s = time.perf_counter() - started
    print(f"corpus {repo}: {len(paths)} files, {line_count(repo, paths)} lines")
    print(
        f"chunking: {len(chunks)} chunks ({len({c.key for c in chunks})} unique) in "
        f"{chunk_s:.2f} s; mean embedded text {statistics.mean(len(c.text) for c in chunks):.0f}"
        " chars"
    )
    print("embedding throughput (torch, 2 threads, batch 32):")
    throughput([c.text for c in chunks[:: max(1, len(chunks) // args.sample)]][: args.sample])

    from greprag.routes import RouteRequest
    from greprag.routes.dense import DenseRoute

    cache = Path(tempfile.mkdtemp(prefix="greprag-dense-perf-"))
    route = DenseRoute(repo, cache_dir=cache)
    route.embedder._load()
    print(f"model load (in-process, after imports): {route.embedder.load_s:.2f} s")
    started = time.perf_counter()
    report = route.index.update()
    cold = time.perf_counter() - started
    print(
        f"cold index build: {cold:.1f} s ({report.embedded} embedded, "
        f"{len(route.index.snapshot.rows)} rows, {route.index.path.stat().st_size / 1e6:.1f} MB,"
        f" approximate={route.index.approximate})"
    )

    victim = repo / paths[len(paths) // 2]
    original = victim.read_text()
    try:
        victim.write_text(original + "\n\ndef dense_perf_probe(x):\n    return x * 2\n")
        started = time.perf_counter()
        report = route.index.update(bound_s=1.0)
        print(
            f"update after one changed file: {(time.perf_counter() - started) * 1000:.0f} ms "
            f"({report.changed} file, {report.embedded} embedded, {report.reused} reused, "
            f"stale={report.stale})"
        )
    finally:
        victim.write_text(original)
    route.search(RouteRequest.of_text(route.repo, "warm up"))
    time.sleep(2.5)  # past the racy-timestamp window of the file just restored
    route.search(RouteRequest.of_text(route.repo, "warm up"))
    totals, parts = [], {"dense_embed": [], "dense_refresh": [], "dense_search": []}
    for _ in range(5):
        for query in QUERIES:
            started = time.perf_counter()
            hits = route.search(RouteRequest.of_text(route.repo, query, k=20))
            totals.append((time.perf_counter() - started) * 1000)
            for key in parts:
                parts[key].append(hits.timings[key])
    totals.sort()
    print(
        f"warm query ({len(totals)}): p50 {statistics.median(totals):.1f} ms, "
        f"p95 {totals[int(0.95 * len(totals))]:.1f} ms; p50 parts: "
        + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in parts.items())
    )

    probe = (
        f"import time; t=time.perf_counter(); from pathlib import Path;"
        f"from greprag.routes import RouteRequest;"
        f"from greprag.routes.dense import DenseRoute;"
        f"r=DenseRoute(Path({str(repo)!r}), cache_dir=Path({str(cache)!r}));"
        f"h=r.search(RouteRequest.of_text(r.repo, 'open a database connection'));"
        f"print(round(time.perf_counter()-t,2), h.notes,"
        f"{{k: round(v) for k, v in h.timings.items()}})"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    print(
        "first query in a fresh process (imports + model load + index load, s):", out.stdout.strip()
    )
    shutil.rmtree(cache)


if __name__ == "__main__":
    main()
