"""The on-disk dense index: one snapshot file per repo and model, replaced atomically.

A snapshot holds the file states, the chunk rows (path, lines, symbol, content key,
stable id), their vectors and, past ``APPROX_MIN_CHUNKS``, the serialized approximate
faiss index. Readers load a whole file, so they see either the old or the new index.

The file is ``MAGIC``, a header (format version, payload length, SHA-256 of the payload)
and the payload (an ``.npz``). ``load`` refuses anything it cannot vouch for: a
truncated or bit-flipped file, another format, rows or vectors of the wrong shape or
type, non-finite vectors. The caller then rebuilds (``greprag index``) rather than
search garbage.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from greprag.dense.chunks import CHUNKER_VERSION
from greprag.dense.freshness import FileState
from greprag.dense.lock import atomic_write
from greprag.errors import DenseError, StorageError

SNAPSHOT_VERSION = 2  # 2: checksummed file (MAGIC + header + npz payload)
MAGIC = b"GREPRAG-DENSE\n"
_HEADER = struct.Struct("<IQ32s")  # format version, payload bytes, SHA-256 of the payload
# Measured on the 2-core box (d=384): flat search 0.7 ms at 10k vectors, 32 ms at 100k;
# IVF (nlist=4*sqrt(n), nprobe=32) stays under 1 ms. Flat is exact, so use it while cheap.
APPROX_MIN_CHUNKS = 20_000
NPROBE = 32
_PIECE = 1 << 20  # bytes read or copied at a time when saving or checking a snapshot


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
    approx: np.ndarray | None = None  # serialized faiss index (uint8) when approximate

    _room: np.ndarray | None = field(default=None, repr=False, compare=False)

    def matrix(self) -> np.ndarray:
        if self.vectors is None:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.vectors

    def append(self, rows: list[Row], vectors: np.ndarray) -> None:
        """Add rows and their vectors at the end, into spare room kept behind ``vectors``
        (grown by a quarter when full): a build appending batch after batch copies the
        matrix a few times in all, not once per batch."""
        old = self.matrix()
        have, need = old.shape[0], old.shape[0] + len(rows)
        room = self._room
        if room is None or room.shape[0] < need or self.vectors is None or old.base is not room:
            room = np.empty((max(need, have + have // 4, 256), self.dim), dtype=np.float32)
            room[:have] = old
            self._room = room
        room[have:need] = vectors
        self.vectors = room[:need]
        self.rows.extend(rows)

    def keep_only(self, keep: list[int]) -> None:
        """Keep the rows (and vectors) at positions ``keep``, in order."""
        self.rows = [self.rows[i] for i in keep]
        self.vectors = np.ascontiguousarray(self.matrix()[keep], dtype=np.float32)
        self._room = None

    def key_vectors(self) -> dict[str, np.ndarray]:
        """Vectors by content key: moved or duplicated code is never embedded twice."""
        matrix = self.matrix()
        return {row.key: matrix[i] for i, row in enumerate(self.rows)}


def save(
    snapshot: Snapshot, path: Path, write_approx: Callable[[BinaryIO], None] | None = None
) -> None:
    """Write ``snapshot`` atomically (temp file, fsync, ``os.replace``), checksummed.

    The payload goes to a side file first and is copied behind the header in 1 MB
    pieces, so saving holds no copy of the vectors in memory; ``write_approx`` streams the
    approximate index into it (else ``snapshot.approx`` is written). Raises ``StorageError``
    when the folder is read-only or the disk full; the previous file, if any, is left
    as it was.
    """
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
    if snapshot.approx is not None and write_approx is None:
        arrays["approx"] = snapshot.approx
    side = path.with_name(f"{path.name}.tmp-payload-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(side, "w+b") as payload:
            _write_npz(payload, arrays, write_approx)
            length = payload.tell()
            payload.seek(0)
            digest = hashlib.sha256()
            while piece := payload.read(_PIECE):
                digest.update(piece)
            header = _HEADER.pack(SNAPSHOT_VERSION, length, digest.digest())

            def write(handle) -> None:
                handle.write(MAGIC + header)
                payload.seek(0)
                shutil.copyfileobj(payload, handle, _PIECE)

            atomic_write(path, write)
    except OSError as exc:
        raise StorageError(f"cannot write the dense index {path}: {exc.strerror or exc}") from None
    finally:
        side.unlink(missing_ok=True)


def load(path: Path, model: str) -> Snapshot | None:
    """The snapshot at ``path``; None when there is none. Raises ``DenseError`` (the index
    must be rebuilt) when the file is unreadable, damaged, malformed or built otherwise.

    The checksum is computed reading the file in pieces, then the arrays are read from
    the same open file: one copy of the vectors in memory, never a stale mix."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the arrays are read
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DenseError(f"the dense index {path} is unreadable: {exc.strerror or exc}") from None
    with handle:
        try:
            _check_payload(handle)
            with np.load(handle, allow_pickle=False) as arrays:
                meta = json.loads(arrays["meta"].tobytes())
                vectors = np.ascontiguousarray(arrays["vectors"], dtype=np.float32)
                approx = arrays["approx"] if "approx" in arrays.files else None
                if isinstance(approx, bytes):  # streamed by faiss: a raw member, not .npy
                    approx = np.frombuffer(approx, dtype=np.uint8)
        except OSError as exc:
            raise DenseError(
                f"the dense index {path} is unreadable: {exc.strerror or exc}"
            ) from None
        except (ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile) as exc:
            raise _damaged(f"malformed ({type(exc).__name__})") from None
    if not isinstance(meta, dict):
        raise _damaged("malformed (no metadata)")
    built = (meta.get("version"), meta.get("chunker"), meta.get("model"))
    if built != (SNAPSHOT_VERSION, CHUNKER_VERSION, model):
        raise DenseError(
            "the dense index was built by another GrepRAG version or model: "
            "run `greprag index` to rebuild it"
        )
    try:
        snapshot = Snapshot(
            model=model,
            dim=int(meta["dim"]),
            files={str(p): FileState(*map(_int_or_str, s)) for p, s in meta["files"].items()},
            dirs={str(d): int(m) for d, m in meta["dirs"].items()},
            rows=[_row(r) for r in meta["rows"]],
            vectors=vectors,
            next_id=int(meta["next_id"]),
            updated_at=float(meta["updated_at"]),
            approx=approx,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _damaged(f"malformed ({type(exc).__name__}: {str(exc)[:80]})") from None
    _check_shapes(snapshot)
    return snapshot


def _write_npz(
    handle: BinaryIO,
    arrays: dict[str, np.ndarray],
    write_approx: Callable[[BinaryIO], None] | None,
) -> None:
    """What ``np.savez`` writes (one ``.npy`` member per array, stored), plus the raw
    ``approx`` member written by ``write_approx``; ``np.load`` reads it back as bytes."""
    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
        if write_approx is not None:
            with archive.open("approx", "w", force_zip64=True) as member:
                write_approx(member)


def _check_payload(handle: BinaryIO) -> None:
    """Check a snapshot file's magic, length and checksum, reading the payload in pieces;
    leaves ``handle`` at the payload's start."""
    head = len(MAGIC) + _HEADER.size
    start = handle.read(head)
    if not start.startswith(MAGIC):
        raise DenseError(
            "the dense index is in an older format or not an index: "
            "run `greprag index` to rebuild it"
        )
    if len(start) < head:
        raise _damaged("truncated")
    version, length, expected = _HEADER.unpack(start[len(MAGIC) :])
    size = os.fstat(handle.fileno()).st_size - head
    if size != length:
        raise _damaged(f"truncated ({size} of {length} payload bytes)")
    digest = hashlib.sha256()
    while piece := handle.read(_PIECE):
        digest.update(piece)
    if digest.digest() != expected:
        raise _damaged("checksum mismatch")
    if version != SNAPSHOT_VERSION:
        raise DenseError("the dense index was built by another GrepRAG version: rebuild it")
    handle.seek(head)


def _damaged(what: str) -> DenseError:
    return DenseError(f"the dense index is damaged ({what}): run `greprag index` to rebuild it")


def _int_or_str(value: object) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"unexpected {type(value).__name__} in a file state")
    return value


def _row(raw: object) -> Row:
    if not isinstance(raw, list) or len(raw) != 6:
        raise TypeError("a row is not a 6-item list")
    row_id, path, start, end, symbol, key = raw
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (row_id, start, end)):
        raise TypeError("row id and lines must be integers")
    if not all(isinstance(v, str) for v in (path, symbol, key)):
        raise TypeError("row path, symbol and key must be strings")
    return Row(row_id, path, start, end, symbol, key)


def _check_shapes(snapshot: Snapshot) -> None:
    """Vectors one per row, of the stated width, finite; row ids unique."""
    vectors = snapshot.matrix()
    rows = len(snapshot.rows)
    if vectors.ndim != 2 or vectors.shape[0] != rows or (rows and vectors.shape[1] != snapshot.dim):
        raise _damaged(f"malformed (vectors {vectors.shape} for {rows} rows)")
    if not np.isfinite(vectors).all():
        raise _damaged("non-finite vectors")
    approx = snapshot.approx
    if approx is not None and (approx.ndim != 1 or approx.dtype != np.uint8):
        raise _damaged("malformed (approximate index)")
    if len({row.id for row in snapshot.rows}) != rows or snapshot.dim < 1:
        raise _damaged("malformed (duplicate row ids)")


class VectorIndex:
    """faiss inner-product search over the snapshot's rows, keyed by stable row ids.

    Exact (``IndexFlatIP``) below ``APPROX_MIN_CHUNKS`` rows, IVF above; rows are added
    and removed in place, so an update costs what changed, not the whole index.
    """

    def __init__(self, snapshot: Snapshot) -> None:
        from greprag.dense.embed import dense_import

        faiss = dense_import("faiss")
        self._faiss = faiss
        self.dim = snapshot.dim
        ids = np.array([r.id for r in snapshot.rows], dtype=np.int64)
        if snapshot.approx is not None:
            self.index = faiss.deserialize_index(snapshot.approx)
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

    def write(self, handle: BinaryIO) -> None:
        """The index as faiss serializes it, streamed to ``handle`` in 1 MB pieces (an
        in-memory copy was ~2x its size at the peak)."""
        faiss = self._faiss
        faiss.write_index(self.index, faiss.PyCallbackIOWriter(handle.write, _PIECE))

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(row id, similarity) pairs, best first."""
        k = min(k, self.size)
        if k <= 0:
            return []
        scores, ids = self.index.search(vector.reshape(1, -1).astype(np.float32), k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
