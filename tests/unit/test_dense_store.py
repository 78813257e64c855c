"""The snapshot file with an approximate (IVF) index: streamed in by faiss, checked and
read back; real faiss, real files, small vectors (no model needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("faiss")
pytestmark = pytest.mark.dense

from greprag.dense import store  # noqa: E402
from greprag.dense.store import Row, Snapshot, VectorIndex, load, save  # noqa: E402
from greprag.errors import DenseError  # noqa: E402


def _snapshot(n: int = 300, dim: int = 16) -> Snapshot:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [Row(i, f"pkg/m{i % 7}.py", i + 1, i + 2, f"f{i}", f"k{i}") for i in range(n)]
    return Snapshot(model="m", dim=dim, rows=rows, vectors=vectors, next_id=n)


def test_an_ivf_index_is_streamed_into_the_snapshot_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "APPROX_MIN_CHUNKS", 100)
    snapshot = _snapshot()
    index = VectorIndex(snapshot)
    index.rebalance(snapshot)
    assert index.approx and snapshot.approx is None  # nothing serialized in memory
    path = tmp_path / "index.npz"
    save(snapshot, path, index.write)

    loaded = load(path, "m")
    assert loaded is not None and loaded.approx is not None
    assert loaded.approx.dtype == np.uint8 and loaded.approx.ndim == 1
    again = VectorIndex(loaded)
    assert again.approx and again.size == 300
    assert [row_id for row_id, _ in again.search(snapshot.matrix()[42], 1)] == [42]
    np.testing.assert_array_equal(loaded.matrix(), snapshot.matrix())


def test_a_flipped_bit_in_the_streamed_index_is_refused(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(store, "APPROX_MIN_CHUNKS", 100)
    snapshot = _snapshot()
    index = VectorIndex(snapshot)
    index.rebalance(snapshot)
    path = tmp_path / "index.npz"
    save(snapshot, path, index.write)
    data = bytearray(path.read_bytes())
    data[-200] ^= 0x01  # inside the zip's tail: the IVF member or the directory
    path.write_bytes(bytes(data))
    with pytest.raises(DenseError, match="checksum mismatch"):
        load(path, "m")
