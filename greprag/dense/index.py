"""DenseIndex: keeps one repo's snapshot in step with the files, and searches it.

Updates run under the index lock: re-read the snapshot (another process may have
written it), detect changed files, re-chunk them, embed only unseen chunk texts, swap
their rows in and save atomically. With a time bound, files that do not fit are left
out and reported stale; their old rows never reach a search result.

A full build embeds ``FLUSH_TEXTS`` texts at a time and saves a checkpoint every
``CHECKPOINT_S`` seconds (more rarely when saving is slow), so killing it keeps most of
the work: the next build embeds only what is missing. A damaged or outdated snapshot
(``problem``) is rebuilt by a full update and never searched; queries never build one.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from greprag.dense.chunks import Chunk, chunk_file
from greprag.dense.embed import Embedder
from greprag.dense.freshness import (
    MAX_FILE_BYTES,
    Changes,
    FileState,
    detect_changes,
    file_sha,
)
from greprag.dense.lock import exclusive_lock, remove_orphan_temps
from greprag.dense.naming import index_dir, snapshot_path
from greprag.dense.store import Row, Snapshot, VectorIndex, load, save
from greprag.errors import DenseError, StorageError
from greprag.files import decode_text, read_bytes

FLUSH_TEXTS = 128  # texts embedded per batch in a full build
CHECKPOINT_S = 2.0  # a full build saves at least this often ...
CHECKPOINT_SAVE_SHARE = 0.1  # ... but spends at most this share of its time saving
Progress = Callable[[int, int], None]


@dataclass
class UpdateReport:
    """What one update did; ``stale`` lists changed files left out to respect the bound."""

    changed: int = 0
    deleted: int = 0
    embedded: int = 0
    reused: int = 0
    stale: list[str] = field(default_factory=list)
    saved: bool = False
    seconds: float = 0.0
    repaired: str = ""  # the problem of the snapshot this update replaced
    note: str = ""  # why a query's update stayed in memory


class _KnownVectors:
    """Vectors an update can reuse instead of embedding: the loaded snapshot's by content
    key (kept even when their rows go: renamed code keeps its vector), and those of rows
    added by this update, looked up by row id in the snapshot (never held twice)."""

    def __init__(self, old: dict[str, np.ndarray], by_id: Callable[[int], np.ndarray]) -> None:
        self._old = old
        self._new: dict[str, int] = {}
        self._by_id = by_id

    def __contains__(self, key: str) -> bool:
        return key in self._old or key in self._new

    def __getitem__(self, key: str) -> np.ndarray:
        if key in self._old:
            return self._old[key]
        return self._by_id(self._new[key])

    def remember(self, rows: list[Row]) -> None:
        for row in rows:
            self._new.setdefault(row.key, row.id)


class DenseIndex:
    """The incremental dense index of one repo for one embedding model."""

    def __init__(
        self,
        repo: Path,
        *,
        embedder: Embedder | None = None,
        cache_dir: Path | None = None,
        rg_path: str | None = None,
    ) -> None:
        self.repo = Path(repo).resolve()
        self.rg_path = rg_path
        self.embedder = embedder or Embedder()
        self.folder = index_dir(self.repo, cache_dir)
        self.path = snapshot_path(self.folder, self.embedder.name)
        self.snapshot: Snapshot | None = None
        self._vectors: VectorIndex | None = None
        self._positions: dict[int, int] = {}
        self._per_path: Counter[str] = Counter()
        self._disk_signature: tuple[int, int, int] | None = None
        self.problem: str | None = None  # why the file on disk cannot be used

    # --- loading -----------------------------------------------------------------------

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def reload(self) -> bool:
        """Load the snapshot from disk when it changed there; True when it did. A file
        that cannot be used sets ``problem`` (and keeps what is in memory)."""
        signature = self._signature()
        if signature is None or signature == self._disk_signature:
            return False
        self._disk_signature = signature
        try:
            snapshot = load(self.path, self.embedder.name)
            if snapshot is None:
                return False
            self._install(snapshot)
        except DenseError as exc:
            self.problem = exc.reason
            return False
        self.problem = None
        return True

    def require(self) -> Snapshot:
        """The snapshot to search; ``DenseError`` when there is none or it is damaged
        (searches never build an index: ``greprag index`` does)."""
        self.reload()
        if self.snapshot is None:
            raise DenseError(
                self.problem
                or f"no dense index for {self.repo}: run `greprag index --repo {self.repo}`"
            )
        return self.snapshot

    def _install(self, snapshot: Snapshot) -> None:
        try:
            vectors = VectorIndex(snapshot)
        except (RuntimeError, ValueError, MemoryError) as exc:  # faiss on a malformed index
            raise DenseError(f"the dense index is damaged ({exc}): rebuild it") from None
        if vectors.size != len(snapshot.rows):
            raise DenseError("the dense index is damaged (index and rows differ): rebuild it")
        snapshot.approx = None  # the index holds it now; saving streams it from there
        self.snapshot = snapshot
        self._vectors = vectors
        self._reindex_rows()

    def _reindex_rows(self) -> None:
        rows = self.snapshot.rows if self.snapshot else []
        self._positions = {row.id: i for i, row in enumerate(rows)}
        self._per_path = Counter(row.path for row in rows)

    def _current(self) -> Snapshot:
        if self.snapshot is None:
            self._install(Snapshot(model=self.embedder.name, dim=self.embedder.dim))
        assert self.snapshot is not None
        return self.snapshot

    # --- freshness ---------------------------------------------------------------------

    def changes(self) -> Changes:
        """Files changed on disk since the loaded snapshot (loads it first)."""
        self.reload()
        snapshot = self.snapshot
        return detect_changes(
            self.repo,
            snapshot.files if snapshot else {},
            snapshot.dirs if snapshot else {},
            self.rg_path,
        )

    def update(
        self,
        *,
        bound_s: float | None = None,
        persist: bool = True,
        progress: Progress | None = None,
    ) -> UpdateReport:
        """Bring the index up to date; with ``bound_s``, leave out what would not fit.

        Unbounded updates wait for the lock; bounded ones (queries) never wait: when
        another process holds it they update in memory only.
        """
        started = time.perf_counter()
        changes = self.changes()
        if self.snapshot is not None and not changes.changed and not changes.deleted:
            # Same content, new stat: worth remembering, not worth a write.
            self.snapshot.files.update(changes.touched)
            self.snapshot.dirs = changes.dirs
            return UpdateReport(seconds=time.perf_counter() - started)
        with exclusive_lock(self.folder / "lock", blocking=bound_s is None) as locked:
            if locked:
                remove_orphan_temps(self.folder)
                if self.reload():
                    changes = self.changes()
            repaired = self.problem if self.snapshot is None else None
            try:
                report = self._apply(changes, started, bound_s, locked and persist, progress)
            except StorageError as exc:
                if bound_s is None:
                    raise
                report = UpdateReport(note=f"index kept in memory: {exc.reason}")
            report.repaired = repaired or ""
        report.seconds = time.perf_counter() - started
        return report

    def _apply(
        self,
        changes: Changes,
        started: float,
        bound_s: float | None,
        persist: bool,
        progress: Progress | None,
    ) -> UpdateReport:
        snapshot = self._current()
        report = UpdateReport(deleted=len(changes.deleted))
        snapshot.files.update(changes.touched)
        # taken before deletions: renamed code keeps vectors
        cache = _KnownVectors(snapshot.key_vectors(), self._vector)
        for path in changes.deleted:
            snapshot.files.pop(path, None)
        self._swap(set(changes.deleted), [], np.zeros((0, snapshot.dim), np.float32))
        total, done = len(changes.changed), 0
        batch: list[tuple[str, FileState, list[Chunk]]] = []
        pending: set[str] = set()
        checkpoint, save_s = time.perf_counter(), 0.0
        for path, state in changes.changed.items():
            data = read_bytes(self.repo, path, MAX_FILE_BYTES)
            if data is None:  # gone, grown, or now a link out of the repo
                report.deleted += 1
                snapshot.files.pop(path, None)
                self._swap({path}, [], np.zeros((0, snapshot.dim), np.float32))
                continue
            chunks = chunk_file(path, decode_text(data))
            fresh = {c.key for c in chunks if c.key not in cache} - pending
            if bound_s is not None:
                spent = time.perf_counter() - started
                cost = (len(pending) + len(fresh)) / self.embedder.texts_per_s
                if spent + cost > bound_s:
                    report.stale.append(path)
                    continue
            state = FileState(state.mtime_ns, state.size, file_sha(data), state.checked_ns)
            batch.append((path, state, chunks))
            pending |= fresh
            if bound_s is None and len(pending) >= FLUSH_TEXTS:
                done += self._flush(batch, cache, report)
                pending.clear()
                if progress:
                    progress(done, total)
                interval = max(CHECKPOINT_S, save_s / CHECKPOINT_SAVE_SHARE)
                if persist and time.perf_counter() - checkpoint > interval:
                    saving = time.perf_counter()
                    self._save()  # a checkpoint: a killed build keeps what it embedded
                    checkpoint = time.perf_counter()
                    save_s = checkpoint - saving
        done += self._flush(batch, cache, report)
        if progress:
            progress(done, total)
        # Directory mtimes vouch for the file list only once every listed file is in.
        snapshot.dirs = {} if report.stale else changes.dirs
        if persist:
            self._save()
            report.saved = True
        return report

    def _flush(
        self,
        batch: list[tuple[str, FileState, list[Chunk]]],
        cache: _KnownVectors,
        report: UpdateReport,
    ) -> int:
        """Embed a batch of changed files (unseen texts only) and swap their rows in."""
        snapshot = self._current()
        chunks = [c for _, _, file_chunks in batch for c in file_chunks]
        missing: dict[str, str] = {}
        for chunk in chunks:
            if chunk.key not in cache:
                missing.setdefault(chunk.key, chunk.text)
        embedded: dict[str, np.ndarray] = {}
        if missing:
            vectors = self.embedder.encode(list(missing.values()))
            finite = np.isfinite(vectors).all(axis=1)
            if not finite.all():
                raise DenseError(
                    f"the embedding model returned non-finite vectors (NaN or inf) for "
                    f"{int((~finite).sum())} of {len(missing)} texts; the index was not "
                    f"changed: check the model ({self.embedder.name})"
                )
            embedded = dict(zip(missing, vectors, strict=True))
        report.embedded += len(missing)
        report.reused += len(chunks) - len(missing)
        report.changed += len(batch)
        for path, state, _ in batch:
            snapshot.files[path] = state
        matrix = np.zeros((len(chunks), snapshot.dim), np.float32)
        for i, chunk in enumerate(chunks):
            matrix[i] = embedded[chunk.key] if chunk.key in embedded else cache[chunk.key]
        rows = self._swap({path for path, _, _ in batch}, chunks, matrix)
        cache.remember(rows)
        count = len(batch)
        batch.clear()
        return count

    def _swap(self, paths: set[str], chunks: list[Chunk], matrix: np.ndarray) -> list[Row]:
        """Replace every row of ``paths`` with ``chunks`` (vectors in ``matrix``); the new
        rows. New files' rows are appended, with no pass over the others."""
        snapshot = self._current()
        if not paths and not chunks:
            return []
        gone: list[int] = []
        if any(self._per_path.get(path) for path in paths):
            keep = [i for i, row in enumerate(snapshot.rows) if row.path not in paths]
            gone = [row.id for row in snapshot.rows if row.path in paths]
            snapshot.keep_only(keep)
            self._reindex_rows()
        new_rows = [
            Row(snapshot.next_id + i, c.path, c.start_line, c.end_line, c.symbol, c.key)
            for i, c in enumerate(chunks)
        ]
        snapshot.next_id += len(new_rows)
        first = len(snapshot.rows)
        snapshot.append(new_rows, matrix)
        assert self._vectors is not None
        self._vectors.remove(gone)
        self._vectors.add(matrix, [r.id for r in new_rows])
        for offset, row in enumerate(new_rows):
            self._positions[row.id] = first + offset
            self._per_path[row.path] += 1
        return new_rows

    def _vector(self, row_id: int) -> np.ndarray:
        return self._current().matrix()[self._positions[row_id]]

    def _save(self) -> None:
        snapshot = self._current()
        assert self._vectors is not None
        vectors = self._vectors
        vectors.rebalance(snapshot)
        save(snapshot, self.path, vectors.write if vectors.approx else None)
        self._disk_signature = self._signature()

    # --- search ------------------------------------------------------------------------

    def search(
        self, vector: np.ndarray, k: int, exclude: set[str] = frozenset()
    ) -> list[tuple[Row, float]]:
        """The ``k`` nearest rows, skipping rows of the ``exclude`` paths."""
        if self.snapshot is None:
            self.reload()
        if self.snapshot is None or self._vectors is None:
            return []
        if not np.isfinite(vector).all():
            raise DenseError("the embedding model returned a non-finite query vector (NaN)")
        skipped = sum(self._per_path[p] for p in exclude)
        hits = []
        for row_id, score in self._vectors.search(vector, k + skipped):
            row = self.snapshot.rows[self._positions[row_id]]
            if row.path not in exclude:
                hits.append((row, score))
        return hits[:k]

    @property
    def approximate(self) -> bool:
        return bool(self._vectors and self._vectors.approx)
