"""The incremental dense index with the real model and real faiss (tiny corpora)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from greprag.routes.dense import dense_available

pytestmark = [
    pytest.mark.dense,
    pytest.mark.skipif(not dense_available(), reason="dense extra not installed"),
]

FILES = {
    "pkg/net.py": "import socket\n\n\ndef open_connection(host, port):\n"
    '    """Open a TCP connection to a remote server."""\n'
    "    return socket.create_connection((host, port))\n",
    "pkg/shapes.py": "class Circle:\n    def __init__(self, r):\n        self.r = r\n\n"
    "    def area(self):\n        return 3.14159 * self.r * self.r\n",
    "pkg/text.py": "def slugify(title):\n    return '-'.join(title.lower().split())\n",
    "README.md": "# Demo\n## Networking\nHow to connect to a remote server over TCP.\n",
}

WORKER = """
import json, sys
from pathlib import Path
from greprag.dense.index import DenseIndex
index = DenseIndex(Path(sys.argv[1]), cache_dir=Path(sys.argv[2]))
report = index.update()
print(json.dumps({"embedded": report.embedded, "changed": report.changed}))
"""


@pytest.fixture(scope="module")
def embedder():
    from greprag.dense.embed import Embedder

    return Embedder()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def open_index(repo: Path, embedder, cache: Path):
    from greprag.dense.index import DenseIndex

    return DenseIndex(repo, embedder=embedder, cache_dir=cache)


def spans(index) -> set[tuple[str, int, int, str]]:
    return {(r.path, r.start_line, r.end_line, r.symbol) for r in index.snapshot.rows}


def expected_spans(repo: Path) -> set[tuple[str, int, int, str]]:
    from greprag.dense.chunks import chunk_file
    from greprag.dense.freshness import list_files

    return {
        (c.path, c.start_line, c.end_line, c.symbol)
        for p in list_files(repo)
        for c in chunk_file(p, (repo / p).read_text())
    }


def search_paths(index, embedder, text: str) -> list[str]:
    return [row.path for row, _ in index.search(embedder.encode([text])[0], 10)]


def test_incremental_edit_add_delete_rename(repo: Path, tmp_path: Path, embedder):
    index = open_index(repo, embedder, tmp_path / "cache")
    first = index.update()
    assert first.changed == 4 and first.embedded == len(index.snapshot.rows)
    assert spans(index) == expected_spans(repo)

    # edit: only the edited function is embedded again
    before = embedder.count
    (repo / "pkg/text.py").write_text("def slugify(title):\n    return '_'.join(title.split())\n")
    edit = index.update()
    assert (edit.changed, edit.embedded, embedder.count - before) == (1, 1, 1)

    # add
    (repo / "pkg/queue.py").write_text("def push_job(queue, job):\n    queue.append(job)\n")
    add = index.update()
    assert add.changed == 1 and add.embedded == 1
    assert "pkg/queue.py" in search_paths(index, embedder, "append a job to the work queue")

    # delete
    (repo / "pkg/shapes.py").unlink()
    delete = index.update()
    assert delete.deleted == 1 and delete.embedded == 0
    assert all(row.path != "pkg/shapes.py" for row in index.snapshot.rows)

    # rename: new path, same content → no embedding at all
    before = embedder.count
    (repo / "pkg/net.py").rename(repo / "pkg/network.py")
    rename = index.update()
    assert (rename.changed, rename.deleted, rename.embedded) == (1, 1, 0)
    assert embedder.count == before
    assert spans(index) == expected_spans(repo)

    # a second process sees the same, already saved index
    again = open_index(repo, embedder, tmp_path / "cache")
    pending = again.changes()  # racy (just written) files may be re-hashed: same content
    assert not pending.changed and not pending.deleted and spans(again) == spans(index)


def _ask(repo: Path, text: str, **kwargs):  # -> RouteRequest
    from greprag.routes import RouteRequest

    return RouteRequest.of_text(repo.resolve(), text, **kwargs)


def test_stale_files_never_reach_the_result(repo: Path, tmp_path: Path, embedder):
    from greprag.routes.dense import DenseRoute

    open_index(repo, embedder, tmp_path / "cache").update()
    route = DenseRoute(repo, cache_dir=tmp_path / "cache", stale_bound_s=0.0)
    route.embedder = route.index.embedder = embedder
    query = "open a TCP connection to a remote server"
    assert "pkg/net.py" in [c.path for c in route.search(_ask(repo, query)).candidates[:2]]

    (repo / "pkg/net.py").write_text(FILES["pkg/net.py"].replace("TCP", "UDP datagram"))
    (repo / "pkg/udp.py").write_text("def send_datagram(sock, data):\n    sock.sendto(data)\n")
    hits = route.search(_ask(repo, query))
    assert [s.path for s in hits.skipped] == ["pkg/net.py", "pkg/udp.py"]
    assert all(c.path not in {s.path for s in hits.skipped} for c in hits.candidates)
    assert any("left out" in note for note in hits.notes)

    route.stale_bound_s = 30.0
    fresh = route.search(_ask(repo, query, exclude_path="README.md"))
    assert fresh.skipped == []
    net = next(c for c in fresh.candidates if c.path == "pkg/net.py")
    assert "UDP datagram" in net.text
    assert "pkg/udp.py" in {c.path for c in fresh.candidates}
    assert all(c.path != "README.md" and c.route == "dense" for c in fresh.candidates)


def _worker(repo: Path, cache: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(repo), str(cache)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def test_killed_indexer_leaves_a_usable_index(repo: Path, tmp_path: Path, embedder):
    from greprag.dense.store import load

    cache = tmp_path / "cache"
    index = open_index(repo, embedder, cache)
    index.update()
    good = spans(index)
    (repo / "pkg/extra.py").write_text("def extra_work(n):\n    return n * 2\n")
    worker = _worker(repo, cache, GREPRAG_DENSE_TEST_PAUSE_S="60")
    deadline = time.monotonic() + 45
    while not list(index.folder.glob("*.tmp-*")):
        assert worker.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    worker.send_signal(signal.SIGKILL)  # killed between writing the temp file and the rename
    worker.wait()

    survivor = load(index.path, embedder.name)
    assert survivor is not None and len(survivor.rows) == len(good)
    reader = open_index(repo, embedder, cache)
    assert "pkg/net.py" in search_paths(reader, embedder, "TCP connection")
    report = reader.update()  # the next indexer finishes the job and clears the debris
    assert report.changed == 1 and "pkg/extra.py" in {r.path for r in reader.snapshot.rows}
    assert not list(index.folder.glob("*.tmp-*"))


def test_two_concurrent_indexers_do_not_corrupt(repo: Path, tmp_path: Path, embedder):
    from greprag.dense.store import load

    cache = tmp_path / "cache"
    workers = [_worker(repo, cache) for _ in range(2)]
    results = [json.loads(w.communicate(timeout=120)[0]) for w in workers]
    assert all(w.returncode == 0 for w in workers)
    index = open_index(repo, embedder, cache)
    assert index.reload() or index.snapshot is not None
    rows = index.snapshot.rows
    assert len(rows) == len({(r.path, r.start_line) for r in rows})  # no duplicated rows
    assert spans(index) == expected_spans(repo)
    # the lock serializes them: the second finds the work done and embeds nothing
    assert sorted(r["embedded"] for r in results) == [0, len(rows)]
    assert load(index.path, embedder.name) is not None and not index.changes().changed


def test_backends_choice_and_separate_index_names(monkeypatch):
    from greprag.config import load_settings
    from greprag.dense.embed import DEFAULT_MODEL, Embedder

    assert Embedder().name == f"{DEFAULT_MODEL}@int8"
    assert Embedder(backend="fp32").name == DEFAULT_MODEL
    assert Embedder(device="cuda").backend == "fp32"  # dynamic quantization is CPU-only
    monkeypatch.setenv("GREPRAG_DENSE_BACKEND", "fp32")
    assert Embedder(backend=load_settings(None).dense_backend).backend == "fp32"
    with pytest.raises(ValueError, match="unknown dense backend"):
        Embedder(backend="onnx")


def test_batched_encode_gives_the_vectors_of_one_model_call(embedder):
    """Many texts are embedded BATCH_SIZE at a time, longest first, the heap trimmed between
    batches: the same vectors, bit for bit, as one sentence-transformers call over them all."""
    import numpy as np

    from greprag.dense.embed import BATCH_SIZE

    sums = [" + x" * (i * 7 % 23) for i in range(2 * BATCH_SIZE + 5)]  # lengths in no order
    texts = [f"def f{i}(x):\n    return x{tail}" for i, tail in enumerate(sums)]
    vectors = embedder.encode(texts)
    whole = embedder._load().encode(
        texts,
        batch_size=BATCH_SIZE,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    assert vectors.shape == (len(texts), embedder.dim)
    assert np.array_equal(vectors, whole)
