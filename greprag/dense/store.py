"""The on-disk dense index: one ``.npz`` snapshot per repo and model, replaced atomically.

A snapshot holds the file states, the chunk rows (path, lines, symbol, content key,
stable id), their vectors and, past ``APPROX_MIN_CHUNKS``, the serialized approximate
faiss index. Readers load a whole file, so they see either the old or the new index.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from greprag.config import cache_root
from greprag.dense.chunks import CHUNKER_VERSION
from greprag.dense.freshness import FileState
from greprag.dense.lock import atomic_write

SNAPSHOT_VERSION = 1
# Measured on the 2-core box (d=384): flat search 0.7 ms at 10k vectors, 32 ms at 100k;
# IVF (nlist=4*sqrt(n), nprobe=32) stays under 1 ms. Flat is exact, so use it while cheap.
APPROX_MIN_CHUNKS = 20_000
NPROBE = 32


def index_dir(repo: Path, cache_dir: Path | None = None) -> Path:
    """``<cache>/<repo-name>-<hash>``; cache: the argument, else ``<cache root>/dense``
    (``greprag.config.cache_root``)."""
    if cache_dir is None:
        cache_dir = cache_root() / "dense"
    real = Path(os.path.realpath(repo))
    digest = hashlib.sha1(str(real).encode()).hexdigest()[:16]
    return Path(cache_dir).expanduser() / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', real.name)}-{digest}"


def snapshot_path(folder: Path, model: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", model)[-60:]
    return folder / f"{slug}-{hashlib.sha1(model.encode()).hexdigest()[:8]}.npz"


@dataclass(frozen=True)
class Row:
    """One indexed chunk as stored: where it is and the key of its embedded text."""

    id: int
    path: str
    start_line: int
    end_line: int
    symbol: str
    key: str


@dataclass
class Snapshot:
    """Everything one index file holds; ``vectors[i]`` belongs to ``rows[i]``."""

    model: str
    dim: int
    files: dict[str, FileState] = field(default_factory=dict)
    dirs: dict[str, int] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    vectors: np.ndarray | None = None
    next_id: int = 0
    updated_at: float = 0.0
    approx: bytes | None = None  # serialized faiss index when approximate

    def matrix(self) -> np.ndarray:
        if self.vectors is None:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.vectors

    def key_vectors(self) -> dict[str, np.ndarray]:
        """Vectors by content key: moved or duplicated code is never embedded twice."""
        matrix = self.matrix()
        return {row.key: matrix[i] for i, row in enumerate(self.rows)}


def save(snapshot: Snapshot, path: Path) -> None:
    """Write ``snapshot`` atomically (temp file, fsync, ``os.replace``)."""
    meta: dict[str, Any] = {
        "version": SNAPSHOT_VERSION,
        "chunker": CHUNKER_VERSION,
        "model": snapshot.model,
        "dim": snapshot.dim,
        "next_id": snapshot.next_id,
        "updated_at": time.time(),
        "files": {p: [s.mtime_ns, s.size, s.sha, s.checked_ns] for p, s in snapshot.files.items()},
        "dirs": snapshot.dirs,
        "rows": [[r.id, r.path, r.start_line, r.end_line, r.symbol, r.key] for r in snapshot.rows],
    }
    arrays = {
        "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        "vectors": snapshot.matrix(),
    }
    if snapshot.approx is not None:
        arrays["approx"] = np.frombuffer(snapshot.approx, dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda handle: handle.write(buffer.getbuffer()))


def load(path: Path, model: str) -> Snapshot | None:
    """The snapshot at ``path``; None when missing, unreadable or built differently."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(data["meta"].tobytes())
            vectors = np.ascontiguousarray(data["vectors"], dtype=np.float32)
            approx = data["approx"].tobytes() if "approx" in data.files else None
    except (OSError, ValueError, KeyError, EOFError):
        return None
    if (meta.get("version"), meta.get("chunker"), meta.get("model")) != (
        SNAPSHOT_VERSION,
        CHUNKER_VERSION,
        model,
    ):
        return None
    rows = [Row(*r) for r in meta["rows"]]
    if vectors.shape[0] != len(rows):
        return None
    return Snapshot(
        model=model,
        dim=int(meta["dim"]),
        files={p: FileState(*s) for p, s in meta["files"].items()},
        dirs={d: int(m) for d, m in meta["dirs"].items()},
        rows=rows,
        vectors=vectors,
        next_id=int(meta["next_id"]),
        updated_at=float(meta["updated_at"]),
        approx=approx,
    )


class VectorIndex:
    """faiss inner-product search over the snapshot's rows, keyed by stable row ids.

    Exact (``IndexFlatIP``) below ``APPROX_MIN_CHUNKS`` rows, IVF above; rows are added
    and removed in place, so an update costs what changed, not the whole index.
    """

    def __init__(self, snapshot: Snapshot) -> None:
        import faiss

        self._faiss = faiss
        self.dim = snapshot.dim
        ids = np.array([r.id for r in snapshot.rows], dtype=np.int64)
        if snapshot.approx is not None:
            self.index = faiss.deserialize_index(np.frombuffer(snapshot.approx, dtype=np.uint8))
            self.approx = True
        else:
            self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
            self.approx = False
            self.index.add_with_ids(snapshot.matrix(), ids)
        self._tune()

    def _tune(self) -> None:
        if self.approx:
            self._faiss.extract_index_ivf(self.index).nprobe = NPROBE

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def remove(self, ids: list[int]) -> None:
        if ids:
            self.index.remove_ids(np.array(ids, dtype=np.int64))

    def add(self, vectors: np.ndarray, ids: list[int]) -> None:
        if ids:
            self.index.add_with_ids(vectors, np.array(ids, dtype=np.int64))

    def rebalance(self, snapshot: Snapshot) -> None:
        """Switch between exact and IVF when the row count crosses the threshold."""
        n = len(snapshot.rows)
        floor = APPROX_MIN_CHUNKS // 2 if self.approx else APPROX_MIN_CHUNKS  # hysteresis
        if (n >= floor) == self.approx:
            snapshot.approx = self.serialize() if self.approx else None
            return
        faiss, matrix = self._faiss, snapshot.matrix()
        ids = np.array([r.id for r in snapshot.rows], dtype=np.int64)
        if n >= APPROX_MIN_CHUNKS:
            nlist = int(4 * n**0.5)
            index = faiss.index_factory(self.dim, f"IVF{nlist},Flat", faiss.METRIC_INNER_PRODUCT)
            sample = matrix[np.random.default_rng(0).permutation(n)[: 64 * nlist]]
            index.train(sample)
            self.index, self.approx = index, True
        else:
            self.index, self.approx = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim)), False
        self.index.add_with_ids(matrix, ids)
        self._tune()
        snapshot.approx = self.serialize() if self.approx else None

    def serialize(self) -> bytes:
        return self._faiss.serialize_index(self.index).tobytes()

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(row id, similarity) pairs, best first."""
        k = min(k, self.size)
        if k <= 0:
            return []
        scores, ids = self.index.search(vector.reshape(1, -1).astype(np.float32), k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
