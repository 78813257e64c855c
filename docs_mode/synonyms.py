"""The curated synonym table of technical vocabulary, and expanding a question with it.

The table is data (``configs/synonyms.toml``, named by the docs profile): groups of words
and phrases that mean the same thing. Every member of a group expands to all the others,
so the table works both ways; members are compared on light stems, word by word, so
"configured" finds the group of "configure" and "log in" matches as a phrase.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from docs_mode.stem import stem
from greprag.config import packaged_config
from greprag.errors import ConfigError

__all__ = ["SynonymTable", "load_synonyms"]

MAX_MEMBER_WORDS = 4


def _stems(term: str) -> tuple[str, ...]:
    return tuple(stem(word) for word in term.lower().replace("-", " ").split())


@dataclass(frozen=True)
class SynonymTable:
    """Groups of interchangeable terms (lowercase); see the module docstring."""

    groups: tuple[tuple[str, ...], ...] = ()

    def expansions(self, words: Sequence[str]) -> dict[str, list[str]]:
        """For each member found in ``words`` (the question's words in order), the other
        members of its groups: ``{"login": ["auth", "authentication", ...]}``."""
        stems = [stem(w) for w in words]
        found: dict[str, list[str]] = {}
        for group in self.groups:
            keys = {member: _stems(member) for member in group}
            matched = [m for m, key in keys.items() if key and _occurs(key, stems)]
            if not matched:
                continue
            hit = {keys[m] for m in matched}
            found.setdefault(matched[0], [])
            found[matched[0]] += [
                m for m in group if keys[m] not in hit and m not in found[matched[0]]
            ]
        return {member: others for member, others in found.items() if others}


def _occurs(key: tuple[str, ...], stems: list[str]) -> bool:
    n = len(key)
    return any(tuple(stems[i : i + n]) == key for i in range(len(stems) - n + 1))


def _clean_groups(raw: object, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"synonym table {where}: 'groups' must be a list of lists")
    groups = []
    for group in raw:
        if not isinstance(group, list) or not all(isinstance(m, str) for m in group):
            raise ConfigError(f"synonym table {where}: every group is a list of strings")
        members = tuple(
            dict.fromkeys(
                " ".join(m.lower().split())
                for m in group
                if m.strip() and len(m.split()) <= MAX_MEMBER_WORDS
            )
        )
        if len(members) > 1:
            groups.append(members)
    return tuple(groups)


@lru_cache(maxsize=8)
def load_synonyms(name: str) -> SynonymTable:
    """The table the docs profile names: a packaged config (``synonyms`` →
    ``configs/synonyms.toml``) or a path to a TOML file; ``""`` is no table."""
    if not name:
        return SynonymTable()
    if name.endswith(".toml"):
        import tomllib

        path = Path(name).expanduser()
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"synonym table {path}: {exc}") from None
    else:
        data = packaged_config(name)
    return SynonymTable(_clean_groups(data.get("groups", []), name))
