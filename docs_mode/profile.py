"""The docs profile: what docs mode changes, read at run time from ``configs/docs.toml``.

The defaults live here, in ``DocsProfile``; ``configs/docs.toml`` documents every one of
them and is what ``load_profile`` reads (a test keeps the two equal, as for
``configs/default.toml``). The numbers were chosen on the docs benchmark
(docs/benchmarks.md, "Docs mode").
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

from greprag.config import packaged_config
from greprag.errors import ConfigError

__all__ = ["DocsProfile", "load_profile"]


@dataclass(frozen=True)
class DocsProfile:
    """Docs mode's settings; ``configs/docs.toml`` says what each one does."""

    # -- file types ------------------------------------------------------------------
    markdown: tuple[str, ...] = (".md", ".markdown", ".mdx")
    rst: tuple[str, ...] = (".rst", ".rest", ".txt")
    html: tuple[str, ...] = (".html", ".htm")
    docstrings: bool = True
    # -- section sizes ---------------------------------------------------------------
    min_section_chars: int = 500
    max_section_chars: int = 4000
    # -- question understanding ------------------------------------------------------
    max_terms: int = 16
    stemming: bool = True
    stem_weight: float = 0.5
    split_identifiers: bool = True
    identifier_weight: float = 1.5
    keyword_weight: float = 1.0
    phrase_weight: float = 1.5
    joined_weight: float = 0.5
    part_weight: float = 0.5
    generic_weight: float = 0.4
    synonym_weight: float = 0.35
    synonyms: str = "synonyms"
    # -- search ----------------------------------------------------------------------
    k: int = 10
    max_block_share: float = 0.25
    pool: int = 100
    test_weight: float = 0.5
    stub_weight: float = 0.5
    summary_weight: float = 0.5
    title_weight: float = 1.0
    name_factor: float = 1.5
    question_name_factor: float = 3.0
    max_count_per_file: int = 20000
    dense_k: int = 50
    dense_rescore: int = 30
    dense_weight: float = 0.5

    def extensions(self) -> dict[str, str]:
        """File extension → format (``markdown``, ``rst``, ``html``)."""
        table = {ext: "markdown" for ext in self.markdown}
        table.update({ext: "rst" for ext in self.rst})
        table.update({ext: "html" for ext in self.html})
        return table

    def validate(self) -> DocsProfile:
        if not 0 < self.min_section_chars <= self.max_section_chars:
            raise ConfigError("docs profile: need 0 < min_section_chars <= max_section_chars")
        if self.k < 1 or self.pool < 1 or self.max_terms < 1:
            raise ConfigError("docs profile: k, pool and max_terms must be positive")
        if not 0 < self.max_block_share <= 1:
            raise ConfigError("docs profile: max_block_share must be in (0, 1]")
        return self


def _coerce(name: str, value: Any, default: Any) -> Any:
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"docs profile: {name} must be a list of strings")
        return tuple(v.lower() for v in value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"docs profile: {name} must be true or false")
        return value
    try:
        return type(default)(value)
    except (TypeError, ValueError):
        raise ConfigError(f"docs profile: {name} expects {type(default).__name__}") from None


@lru_cache(maxsize=1)
def load_profile() -> DocsProfile:
    """The profile as ``configs/docs.toml`` (shipped in the package) sets it."""
    values = packaged_config("docs")
    defaults = {f.name: f.default for f in fields(DocsProfile)}
    unknown = sorted(set(values) - set(defaults))
    if unknown:
        raise ConfigError(f"docs profile: unknown setting(s) {', '.join(unknown)}")
    return DocsProfile(**{k: _coerce(k, v, defaults[k]) for k, v in values.items()}).validate()
