"""Settings, resolved once per Retriever; the only reader of ``GREPRAG_*`` variables.

Sources, lowest first:

1. built-in defaults (documented in ``configs/default.toml``; a test keeps them equal);
2. the user's config file, ``$GREPRAG_CONFIG`` or ``$XDG_CONFIG_HOME/greprag/config.toml``
   (trusted: any setting);
3. the repository's ``.greprag.toml`` (untrusted: a cloned repo must not run a program,
   pick the LLM that receives the user's code with the user's key, choose where files are
   written or load a model from its own tree; only ``REPO_SETTINGS`` are read, the rest
   are ignored and reported in ``Settings.notes``);
4. ``GREPRAG_*`` environment variables (``ENV_SETTINGS``; the user's own);
5. explicit arguments (``Retriever(...)``, CLI flags).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from greprag.errors import ConfigError

__all__ = [
    "BOUNDS",
    "ENCODINGS",
    "ENV_SETTINGS",
    "REPO_CONFIG",
    "REPO_SETTINGS",
    "Settings",
    "cache_root",
    "load_settings",
    "packaged_config",
    "read_toml",
    "user_config_path",
]

REPO_CONFIG = ".greprag.toml"
MAX_CONFIG_BYTES = 1 << 20

# What a repository may tune: how retrieval ranks and packs, never what runs, where files
# go, or which model sees the code.
REPO_SETTINGS = frozenset(
    {
        "budget",
        "encoding",
        "routes",
        "rerank",
        "dedup",
        "dedup_pool",
        "merge_gap",
        "max_queries",
        "window_lines",
        "include_current_file",
        "max_block_share",
        "max_usage_tokens",
        "max_filesize",
        "max_line_chars",
        "max_count_per_file",
        "flood_files",
        "max_candidates",
        "file_list_ttl",
        "bm25_weight",
        "prior_weight",
        "import_bonus",
        "definition_bonus",
        "dense_k",
        "dense_weight",
        "similar",
        "similar_weight",
        "similar_share",
        "compact_after_share",
        "compact_tokens",
        "stale_bound_s",
    }
)

ENV_SETTINGS = {
    "GREPRAG_MODEL": "model",
    "GREPRAG_API_BASE": "api_base",
    "GREPRAG_API_KEY": "api_key",
    "GREPRAG_RG": "rg_path",
    "GREPRAG_CACHE_DIR": "cache_dir",
    "GREPRAG_DENSE_BACKEND": "dense_backend",
}
CONFIG_ENV = "GREPRAG_CONFIG"

# tiktoken encodings whose files ship with litellm, so counting tokens never downloads
ENCODINGS = ("cl100k_base", "o200k_base", "p50k_base", "p50k_edit")

# Inclusive (low, high) of every numeric setting, whatever its source: a repository's
# config must not make a retrieval unbounded (max_count_per_file = 10**9), silent
# (budget = 0) or undefined (weights of nan or inf).
BOUNDS: dict[str, tuple[float, float]] = {
    "budget": (1, 999_999),
    "llm_timeout": (0.1, 600),
    "dedup_pool": (0.01, 1),
    "merge_gap": (0, 1000),
    "max_queries": (1, 50),
    "window_lines": (1, 1000),
    "max_block_share": (0.01, 1),
    "max_usage_tokens": (0, 999_999),
    "max_line_chars": (20, 100_000),
    "max_count_per_file": (1, 10_000),
    "flood_files": (1, 100_000),
    "max_candidates": (1, 100_000),
    "file_list_ttl": (0, 3600),
    "bm25_weight": (-100, 100),
    "prior_weight": (-100, 100),
    "import_bonus": (-100, 100),
    "definition_bonus": (-100, 100),
    "dense_k": (1, 1000),
    "dense_weight": (0, 100),
    "stale_bound_s": (0, 600),
}
MAX_FILESIZE_RE = re.compile(r"[1-9][0-9]{0,9}[KMG]?")  # rg's --max-filesize, at least 1 byte


@dataclass(frozen=True)
class Settings:
    budget: int = 4096
    encoding: str = "cl100k_base"
    router: str = "offline"
    model: str = ""
    api_base: str = ""
    api_key: str = ""
    llm_timeout: float = 8.0
    answer_timeout: float = 45.0
    routes: str = "auto"
    rerank: str = "bm25"
    dedup: bool = True
    dedup_pool: float = 0.5
    merge_gap: int = 1
    max_queries: int = 10
    window_lines: int = 30
    include_current_file: str = "below"
    max_block_share: float = 0.125
    max_usage_tokens: int = 160
    rg_path: str = ""
    max_filesize: str = "1M"
    max_line_chars: int = 400
    max_count_per_file: int = 30
    flood_files: int = 40
    max_candidates: int = 400
    file_list_ttl: float = 5.0
    bm25_weight: float = 0.2
    prior_weight: float = 0.8
    import_bonus: float = 0.35
    definition_bonus: float = 0.0
    cache_dir: str = ""
    dense_model: str = ""
    dense_backend: str = ""
    dense_cache_dir: str = ""
    dense_k: int = 20
    dense_weight: float = 1.0
    stale_bound_s: float = 1.0
    similar: bool = True
    similar_weight: float = 2.0
    similar_share: float = 0.5
    similar_process: bool = True
    compact_after_share: float = 0.25
    compact_tokens: int = 120
    # what resolving said about its sources (ignored repo keys, ...); not a setting
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def validate(self) -> Settings:
        from greprag.router import ROUTERS  # here: config stays below what it configures

        choices = {
            "router": tuple(ROUTERS),
            "routes": ("grep", "dense", "auto"),
            "rerank": ("bm25", "jaccard", "none"),
            "include_current_file": ("no", "above", "below"),
            "dense_backend": ("", "int8", "fp32"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}"
                )
        for name, (low, high) in BOUNDS.items():
            value = getattr(self, name)
            if not (math.isfinite(value) and low <= value <= high):
                shown = str(value) if len(str(value)) <= 24 else f"{value:.3g}"
                raise ConfigError(f"{name} must be in {low:g}..{high:g}, not {shown}")
        if self.encoding not in ENCODINGS:
            raise ConfigError(
                f"encoding must be one of {', '.join(ENCODINGS)} (they ship offline), "
                f"not {self.encoding!r}"
            )
        if not MAX_FILESIZE_RE.fullmatch(self.max_filesize):
            raise ConfigError(
                f"max_filesize must be a size such as 512K, 1M or 2G, not {self.max_filesize!r}"
            )
        return self

    def dense_cache(self) -> Path:
        """Where dense indexes live: ``dense_cache_dir``, else ``<cache root>/dense``."""
        if self.dense_cache_dir:
            return Path(self.dense_cache_dir).expanduser()
        return cache_root(self.cache_dir) / "dense"


_TYPES = {f.name: f.type for f in fields(Settings) if f.name != "notes"}


def packaged_config(name: str) -> dict[str, Any]:
    """A TOML file shipped inside the package (``configs/<name>.toml``: ``default`` and the
    profiles), read at run time."""
    from importlib.resources import files

    resource = files("greprag") / "configs" / f"{name}.toml"
    try:
        return tomllib.loads(resource.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no packaged config named {name!r}") from None


def cache_root(configured: str = "") -> Path:
    """GrepRAG's cache folder: ``configured``, ``$GREPRAG_CACHE_DIR``, or
    ``$XDG_CACHE_HOME/greprag`` (``~/.cache/greprag``)."""
    chosen = configured or os.environ.get("GREPRAG_CACHE_DIR", "")
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "greprag"


def user_config_path() -> Path:
    """The user's config file: ``$GREPRAG_CONFIG``, or ``$XDG_CONFIG_HOME/greprag/config.toml``."""
    explicit = os.environ.get(CONFIG_ENV, "")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    return (Path(xdg) if xdg else Path.home() / ".config") / "greprag" / "config.toml"


def dense_test_pause_s() -> float:
    """``$GREPRAG_DENSE_TEST_PAUSE_S``: a pause inside index writes, so tests can kill one."""
    try:
        return float(os.environ.get("GREPRAG_DENSE_TEST_PAUSE_S") or 0)
    except ValueError:
        return 0.0


_BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True}
_BOOL_WORDS |= {"0": False, "false": False, "no": False, "off": False}


def _coerce(name: str, value: Any) -> Any:
    if name not in _TYPES:
        known = ", ".join(sorted(_TYPES))
        raise ConfigError(f"unknown setting {name!r} (known: {known})")
    kind = _TYPES[name]
    try:
        if kind == "bool":
            if isinstance(value, bool):
                return value
            word = str(value).strip().lower()
            if word not in _BOOL_WORDS:
                raise ValueError(value)
            return _BOOL_WORDS[word]
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        return str(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigError(f"setting {name!r} expects {kind}, got {value!r}") from exc


def read_toml(path: Path, label: str) -> dict[str, Any]:
    """A TOML file GrepRAG reads (a config, a workspace): bounded, one-line errors."""
    if not path.is_file():  # missing, a folder, or a FIFO that would block the read
        raise ConfigError(f"{label} {path} is not a readable file")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {label} {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{label} {path} is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{label} {path}: {exc}") from None


def _repo_values(repo: Path, notes: list[str]) -> dict[str, Any]:
    """The settings a repository's ``.greprag.toml`` may set; the rest go to ``notes``."""
    path = repo / REPO_CONFIG
    if not path.is_file():
        return {}
    real_root = Path(os.path.realpath(repo))
    real = Path(os.path.realpath(path))
    if real.parent != real_root:  # a symlink to a file elsewhere: not the repo's to give
        notes.append(f"{REPO_CONFIG} ignored: it links outside the repository")
        return {}
    values = read_toml(real, "repository config")
    kept: dict[str, Any] = {}
    refused = []
    for key, value in values.items():
        if key in REPO_SETTINGS:
            kept[key] = value
        elif key in _TYPES:
            refused.append(key)
        else:
            _coerce(key, value)  # an unknown name: the same clear error as anywhere else
    if refused:
        notes.append(
            f"{REPO_CONFIG} may not set {', '.join(sorted(refused))} (ignored; set them in "
            f"{user_config_path()}, GREPRAG_* variables or arguments)"
        )
    return kept


def _environment_values(env: Mapping[str, str]) -> dict[str, Any]:
    return {name: env[var] for var, name in ENV_SETTINGS.items() if env.get(var, "").strip()}


def load_settings(repo: Path | None = None, **overrides: Any) -> Settings:
    """Defaults < user config < ``<repo>/.greprag.toml`` (``REPO_SETTINGS`` only) <
    ``GREPRAG_*`` variables < ``overrides`` (None values ignored)."""
    notes: list[str] = []
    values: dict[str, Any] = {}
    user = user_config_path()
    if user.is_file() or os.environ.get(CONFIG_ENV, ""):  # a named file must be there
        values.update(read_toml(user, "user config"))
    if repo is not None:
        values.update(_repo_values(repo, notes))
    values.update(_environment_values(os.environ))
    values.update({k: v for k, v in overrides.items() if v is not None})
    coerced = {k: _coerce(k, v) for k, v in values.items()}
    return replace(Settings(), **coerced, notes=tuple(notes)).validate()
