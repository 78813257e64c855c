"""The dense index: damaged files are refused and rebuilt, builds keep their work, failed
writes and missing pieces are one line, and a query never builds or searches garbage."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from greprag.routes.dense import dense_available
from tests.reliability.cases import case, cases
from tests.reliability.conftest import (
    cli,
    cli_env,
    make_repo,
    notes,
    one_line_error,
    with_file_size_limit,
    without_file_permissions,
)

pytestmark = [
    pytest.mark.dense,
    pytest.mark.skipif(not dense_available(), reason="dense extra not installed"),
]

AREA = "dense index"
FILES = {
    "pkg/__init__.py": "",
    "pkg/net.py": "import socket\n\n\ndef open_connection(host, port):\n"
    '    """Open a TCP connection to a remote server."""\n'
    "    return socket.create_connection((host, port))\n",
    "pkg/shapes.py": "class Circle:\n    def __init__(self, r):\n        self.r = r\n\n"
    "    def area(self):\n        return 3.14159 * self.r * self.r\n",
    "pkg/loader.py": "class DataLoader:\n    def load_batch(self, n):\n        return n\n",
    "app.py": "from pkg.loader import DataLoader\n\nloader = DataLoader()\nloader.",
}
CURSOR = ["--file", "app.py", "--line", "4"]


@pytest.fixture(scope="module")
def embedder():
    """The real model, loaded once for the module (each CLI call loads its own)."""
    from greprag.dense.embed import Embedder

    return Embedder()


@pytest.fixture(scope="module")
def built(tmp_path_factory, embedder) -> tuple[Path, Path]:
    """A repo and a cache holding its dense index, built once."""
    from greprag.dense.index import DenseIndex

    base = tmp_path_factory.mktemp("dense")
    repo = make_repo(base / "repo", FILES)
    cache = base / "cache"
    DenseIndex(repo, embedder=embedder, cache_dir=cache / "dense").update()
    return repo, cache


@pytest.fixture
def indexed(built, tmp_path) -> tuple[Path, Path, Path]:
    """A fresh copy of the built repo and cache, and the index file in it."""
    from greprag.dense.naming import index_dir

    repo = tmp_path / "repo"
    cache = tmp_path / "cache"
    shutil.copytree(built[0], repo, symlinks=True)  # file and folder times kept
    (folder,) = (built[1] / "dense").iterdir()
    shutil.copytree(folder, index_dir(repo, cache / "dense"))  # the folder named for this repo
    (snapshot,) = cache.glob("dense/*/*.npz")
    return repo, cache, snapshot


def _args(repo: Path, cache: Path) -> list[str]:
    return ["--repo", str(repo), "--cache-dir", str(cache)]


def _rewrite(snapshot: Path, how: str) -> None:
    """Damage the index file the way ``how`` says."""
    from greprag.dense.store import _HEADER, MAGIC, SNAPSHOT_VERSION, load, save

    data = snapshot.read_bytes()
    head = len(MAGIC) + _HEADER.size
    if how == "truncated":
        snapshot.write_bytes(data[: len(data) // 2])
    elif how == "bit-flipped":
        flipped = bytearray(data)
        flipped[head + (len(data) - head) // 2] ^= 0x10
        snapshot.write_bytes(bytes(flipped))
    elif how == "empty":
        snapshot.write_bytes(b"")
    elif how == "old-format":
        buffer = io.BytesIO()
        np.savez(buffer, meta=np.frombuffer(b"{}", dtype=np.uint8))
        snapshot.write_bytes(buffer.getvalue())
    elif how == "malformed":  # a valid checksum over metadata of the wrong shape
        buffer = io.BytesIO()
        meta = json.dumps({"version": 2, "chunker": 2, "model": "x", "rows": "nope"}).encode()
        np.savez(buffer, meta=np.frombuffer(meta, dtype=np.uint8), vectors=np.zeros((1, 3)))
        payload = buffer.getvalue()
        header = _HEADER.pack(SNAPSHOT_VERSION, len(payload), hashlib.sha256(payload).digest())
        snapshot.write_bytes(MAGIC + header + payload)
    elif how == "nan":  # a valid checksum over NaN vectors
        model = json.loads(_meta(snapshot))["model"]
        loaded = load(snapshot, model)
        loaded.vectors[0, :] = np.nan
        save(loaded, snapshot)
    elif how == "escaping-rows":  # a valid checksum over rows pointing outside the repo
        model = json.loads(_meta(snapshot))["model"]
        loaded = load(snapshot, model)
        loaded.rows = [
            type(r)(r.id, "../../../../etc/passwd", 1, 5, r.symbol, r.key) for r in loaded.rows
        ]
        save(loaded, snapshot)


def _meta(snapshot: Path) -> bytes:
    from greprag.dense.store import _check_payload

    with open(snapshot, "rb") as handle:
        _check_payload(handle)
        with np.load(handle) as arrays:
            return arrays["meta"].tobytes()


DAMAGE = [
    ("truncated", "an index file cut in half", "truncated"),
    ("bit-flipped", "an index file with one bit flipped", "checksum mismatch"),
    ("empty", "an empty (0-byte) index file", "older format"),
    ("old-format", "an index file in the old unchecksummed .npz format", "older format"),
    ("malformed", "an index with a valid checksum and malformed metadata", "another GrepRAG"),
    ("nan", "an index with a valid checksum and NaN vectors", "non-finite vectors"),
]


@cases(
    AREA,
    [
        (
            ident,
            f"{hostile}: status, auto retrieve, --routes dense",
            f"status exit 1 saying '{said}'; auto: result + note; dense: one line, exit 3",
            ident,
            said,
        )
        for ident, hostile, said in DAMAGE
    ],
    "how, said",
)
def test_a_damaged_index_is_refused_everywhere(indexed, how, said):
    repo, cache, snapshot = indexed
    _rewrite(snapshot, how)
    status = cli("status", *_args(repo, cache))
    assert status.returncode == 1 and said in status.stdout, status.stdout
    auto = cli("retrieve", *_args(repo, cache), *CURSOR, "--json")
    assert auto.returncode == 0 and json.loads(auto.stdout)["blocks"]
    dense = cli("retrieve", *_args(repo, cache), *CURSOR, "--routes", "dense")
    one_line_error(dense, 3, said, "greprag index")


@cases(
    AREA,
    [
        ("bit-flipped", "greprag index on a bit-flipped index", "rebuilt; reported", "bit-flipped"),
        (
            "malformed",
            "an update over a malformed index (API)",
            "rebuilt; report.repaired",
            "malformed",
        ),
    ],
    "how",
)
def test_a_damaged_index_is_rebuilt(indexed, embedder, how):
    from greprag.dense.index import DenseIndex

    repo, cache, snapshot = indexed
    _rewrite(snapshot, how)
    if how == "bit-flipped":
        proc = cli("index", *_args(repo, cache), timeout=300)
        assert proc.returncode == 0 and "rebuilt" in proc.stdout, proc.stdout + proc.stderr
        assert any("checksum mismatch" in n for n in notes(proc))
    else:
        index = DenseIndex(repo, embedder=embedder, cache_dir=cache / "dense")
        report = index.update()
        assert report.repaired and report.changed == len([f for f in FILES if f.endswith(".py")])
    assert cli("status", *_args(repo, cache)).returncode == 0


@case(
    AREA,
    "an index whose rows (valid checksum) all point at ../../../../etc/passwd, searched",
    "no candidate, no outside text",
)
def test_rows_pointing_outside_are_never_read(indexed, embedder):
    from greprag.routes import RouteRequest
    from greprag.routes.dense import DenseRoute

    repo, cache, snapshot = indexed
    _rewrite(snapshot, "escaping-rows")
    route = DenseRoute(repo, cache_dir=cache / "dense")
    route.embedder = route.index.embedder = embedder
    hits = route.search(RouteRequest.of_text(repo.resolve(), "open a TCP connection"))
    assert hits.candidates == []


# The real CLI, except that the build checkpoints after every batch of 64 texts and
# then waits to be killed: on any machine speed, SIGKILL lands between the first
# checkpoint and the end of the build.
_HANG_AFTER_FIRST_CHECKPOINT = """
import sys, time
from greprag.dense import index
index.CHECKPOINT_S, index.FLUSH_TEXTS = 0.0, 64
save = index.DenseIndex._save
def save_then_wait(self):
    save(self)
    time.sleep(600)
index.DenseIndex._save = save_then_wait
from greprag.cli import main
sys.argv[0] = "greprag"
main()
"""


@case(
    AREA,
    "a cold build killed with SIGKILL midway (480 chunks)",
    "the checkpoint survives and loads; the next build embeds only the rest",
)
def test_a_killed_cold_build_keeps_its_work(tmp_path, embedder):
    from greprag.dense.index import DenseIndex
    from greprag.dense.store import load

    def module(n: int) -> str:  # 16 functions, each text unique (each embedded)
        return "".join(
            f"def handler_{n}_{i}(request):\n    return request.get({n * 100 + i})\n\n"
            for i in range(16)
        )

    repo = make_repo(tmp_path / "repo", {f"pkg/m{n:03d}.py": module(n) for n in range(30)})
    cache = tmp_path / "cache"
    worker = subprocess.Popen(
        [sys.executable, "-c", _HANG_AFTER_FIRST_CHECKPOINT, "index", *_args(repo, cache)],
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    while not list(cache.glob("dense/*/*.npz")):  # a fast machine still stops here
        assert worker.poll() is None, "the build ended before its first checkpoint"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.2)  # the checkpoint is renamed into place before the hang begins
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    index = DenseIndex(repo, embedder=embedder, cache_dir=cache / "dense")
    kept = load(index.path, embedder.name)
    assert kept is not None and 0 < len(kept.files) < 30
    report = index.update()
    assert report.changed == 30 - len(kept.files)
    assert len(index.snapshot.rows) == 480 and len(index.snapshot.files) == 30


@case(
    AREA,
    "greprag index while writes fail (file size limit: the disk is full)",
    "one line 'cannot write the dense index', exit 4; the previous index still loads",
)
def test_a_full_disk_is_one_line_and_keeps_the_old_index(indexed):
    repo, cache, _ = indexed
    (repo / "pkg" / "shapes.py").unlink()  # an update to write, no model needed
    proc = cli("index", *_args(repo, cache), preexec=with_file_size_limit(4096), timeout=300)
    one_line_error(proc, 4, "cannot write the dense index")
    assert cli("status", *_args(repo, cache)).returncode == 0


@cases(
    AREA,
    [
        ("index", "greprag index with a read-only cache folder", "one line, exit 4", "index", 4),
        (
            "status",
            "greprag status with a read-only cache folder",
            "its report, exit 0",
            "status",
            0,
        ),
    ],
    "command, code",
)
def test_a_read_only_cache(indexed, command, code):
    repo, cache, _ = indexed
    drop = without_file_permissions()
    (repo / "pkg" / "more.py").write_text("def more_work(n):\n    return n * 2\n")
    for folder in [cache, *cache.rglob("*")]:
        folder.chmod(0o555 if folder.is_dir() else 0o444)
    try:
        proc = cli(command, *_args(repo, cache), preexec=drop, timeout=300)
    finally:
        for folder in [cache, *cache.rglob("*")]:
            folder.chmod(0o755)
    if code:
        one_line_error(proc, code, "cannot lock")
    else:
        assert proc.returncode == 0 and "changed since index: 1 file(s)" in proc.stdout


@case(
    AREA,
    "retrieve --routes dense on a repo without an index",
    "one line 'no dense index ... greprag index', exit 3; no index written",
)
def test_dense_without_an_index_is_unavailable(tmp_path):
    repo = make_repo(tmp_path / "repo", FILES)
    cache = tmp_path / "cache"
    proc = cli("retrieve", *_args(repo, cache), *CURSOR, "--routes", "dense")
    one_line_error(proc, 3, "no dense index", "greprag index")
    assert not list(cache.glob("dense/*/*.npz"))


@case(
    AREA,
    "greprag status on a repo that was never indexed",
    "'no dense index ...; run greprag index', exit 1",
)
def test_status_without_an_index(tmp_path):
    repo = make_repo(tmp_path / "repo", FILES)
    proc = cli("status", *_args(repo, tmp_path / "cache"))
    assert proc.returncode == 1 and "greprag index" in proc.stdout


@case(
    AREA,
    "a one-shot retrieve in the default auto mode on an indexed repo, weak grep evidence",
    "grep result, exit 0, a note naming --routes dense and greprag serve; no model load",
)
def test_a_one_shot_auto_call_skips_the_model_load(indexed):
    repo, cache, _ = indexed
    proc = cli("retrieve", *_args(repo, cache), *CURSOR, "--json")
    payload = json.loads(proc.stdout)
    assert proc.returncode == 0 and payload["blocks"]
    said = " ".join(notes(proc))
    assert "--routes dense" in said and "greprag serve" in said
    assert payload["routes"]["dense"].startswith("not run")
    assert all(set(b["route"].split("+")) <= {"grep", "similar"} for b in payload["blocks"])


@case(
    AREA,
    "an index under --cache-dir C, looked up through $GREPRAG_CACHE_DIR=C and --cache-dir C",
    "status finds the same index both ways, exit 0; retrieve --cache-dir sees it (auto note)",
)
def test_the_cache_flag_and_the_variable_agree(indexed):
    repo, cache, snapshot = indexed
    by_env = cli("status", "--repo", str(repo), env=cli_env(GREPRAG_CACHE_DIR=str(cache)))
    by_flag = cli("status", *_args(repo, cache))
    assert by_env.returncode == by_flag.returncode == 0
    assert str(snapshot) in by_env.stdout and str(snapshot) in by_flag.stdout
    auto = cli("retrieve", *_args(repo, cache), *CURSOR)
    assert any("one-shot" in note for note in notes(auto)), auto.stderr


@pytest.fixture
def broken_extra(tmp_path) -> dict[str, str]:
    """An environment where sentence_transformers is installed but cannot load."""
    fake = tmp_path / "site" / "sentence_transformers"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ImportError('libtorch_cpu.so: cannot open shared object file')\n"
    )
    env = cli_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), env["PYTHONPATH"]])
    return env


@cases(
    AREA,
    [
        (
            "index",
            "greprag index with a half-installed dense extra (sentence_transformers fails)",
            "one line naming real packages (sentence-transformers, faiss-cpu), exit 3",
            ["index"],
            3,
        ),
        (
            "dense",
            "retrieve --routes dense with a half-installed dense extra",
            "one line naming real packages, exit 3",
            ["retrieve", *CURSOR, "--routes", "dense"],
            3,
        ),
        (
            "auto",
            "retrieve (auto) with a half-installed dense extra",
            "grep result, exit 0",
            ["retrieve", *CURSOR],
            0,
        ),
    ],
    "args, code",
)
def test_a_half_installed_extra(indexed, broken_extra, args, code):
    repo, cache, _ = indexed
    (repo / "pkg" / "more.py").write_text("def more_work(n):\n    return n * 2\n")  # to embed
    proc = cli(*args, *_args(repo, cache), env=broken_extra, timeout=300)
    if code:
        one_line_error(proc, code, "dense extra", "sentence-transformers", "faiss-cpu")
    else:
        assert proc.returncode == 0 and "class DataLoader" in proc.stdout


@case(
    AREA,
    "an embedding model that returns NaN vectors (its weights set to NaN), indexing a repo",
    "one DenseError 'non-finite vectors'; nothing written",
)
def test_nan_vectors_from_the_model_are_refused(tmp_path):
    import torch
    from sentence_transformers import SentenceTransformer

    from greprag.dense.embed import Embedder, resolve_model
    from greprag.dense.index import DenseIndex
    from greprag.errors import DenseError

    model = SentenceTransformer(resolve_model(None), device="cpu")
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.fill_(float("nan"))
    model.save(str(tmp_path / "nan-model"))
    repo = make_repo(tmp_path / "repo", FILES)
    index = DenseIndex(
        repo,
        embedder=Embedder(str(tmp_path / "nan-model"), backend="fp32"),
        cache_dir=tmp_path / "c",
    )
    with pytest.raises(DenseError, match="non-finite vectors"):
        index.update()
    assert not index.path.exists()
