"""Settings: built-in defaults < the repo's ``.greprag.toml`` < explicit arguments.

``configs/default.toml`` documents these defaults for users (a test keeps the two equal).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from greprag.errors import ConfigError

REPO_CONFIG = ".greprag.toml"


@dataclass(frozen=True)
class Settings:
    budget: int = 4096
    encoding: str = "cl100k_base"
    router: str = "offline"
    model: str = ""
    llm_timeout: float = 8.0
    routes: str = "auto"
    rerank: str = "bm25"
    dedup: bool = True
    dedup_pool: float = 0.5
    merge_gap: int = 1
    max_queries: int = 10
    window_lines: int = 30
    include_current_file: str = "no"
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
    dense_model: str = ""
    dense_backend: str = ""
    dense_cache_dir: str = ""
    dense_k: int = 20
    dense_weight: float = 1.0
    stale_bound_s: float = 1.0

    def validate(self) -> Settings:
        choices = {
            "router": ("offline", "llm"),
            "routes": ("grep", "dense", "auto"),
            "rerank": ("bm25", "jaccard", "none"),
            "include_current_file": ("no", "above"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}"
                )
        if self.budget < 1:
            raise ConfigError(f"budget must be a positive number of tokens, not {self.budget}")
        if not 0 < self.dedup_pool <= 1:
            raise ConfigError(f"dedup_pool must be in (0, 1], not {self.dedup_pool}")
        if not 0 < self.max_queries <= 50:
            raise ConfigError(f"max_queries must be in 1..50, not {self.max_queries}")
        return self


_TYPES = {f.name: f.type for f in fields(Settings)}


def _coerce(name: str, value: Any) -> Any:
    if name not in _TYPES:
        known = ", ".join(sorted(_TYPES))
        raise ConfigError(f"unknown setting {name!r} (known: {known})")
    kind = _TYPES[name]
    try:
        if kind == "bool":
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on")
            return bool(value)
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name!r} expects {kind}, got {value!r}") from exc


def load_settings(repo: Path | None = None, **overrides: Any) -> Settings:
    """Defaults, then ``<repo>/.greprag.toml``, then ``overrides`` (None values ignored)."""
    values: dict[str, Any] = {}
    if repo is not None and (repo / REPO_CONFIG).is_file():
        try:
            values.update(tomllib.loads((repo / REPO_CONFIG).read_text(encoding="utf-8")))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{repo / REPO_CONFIG}: {exc}") from exc
    values.update({k: v for k, v in overrides.items() if v is not None})
    coerced = {k: _coerce(k, v) for k, v in values.items()}
    return replace(Settings(), **coerced).validate()
