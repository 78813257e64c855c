"""Validation of model-proposed ripgrep queries: LLM output is hostile data.

Only fields that map onto ``Query`` survive; anything that smells of a command, an rg
flag, or a path outside the repository gets the whole query rejected, with a reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from greprag.errors import QueryRejected
from greprag.languages import LANGUAGES
from greprag.models import QUERY_KINDS, Query

__all__ = ["validate_plan", "validate_query"]

MAX_CONTEXT_LINES = 10
MAX_SYNONYM_KEYS = 20
MAX_SYNONYMS_PER_KEY = 8
MAX_SYNONYM_LEN = 64

# Fields that would carry a command line or raw rg arguments: never accepted.
_COMMAND_FIELDS = ("command", "cmd", "shell", "exec", "args", "argv", "flags", "options")
_PATH_FIELDS = ("path", "paths", "glob", "globs")
# rg options that run programs or decompress input: --pre, --pre-glob, --search-zip, -z.
_DANGEROUS_FLAGS = re.compile(r"--(?:pre|pre-glob|search-zip)\b|(?:^|\s)-[A-Za-z]*z\b")
_BAD_CHARS = ("\x00", "\n", "\r")
# rg's default engine has no look-around, backreferences or atomic groups.
_UNSUPPORTED_GROUPS = {
    "(?=": "look-around",
    "(?!": "look-around",
    "(?<=": "look-around",
    "(?<!": "look-around",
    "(?P=": "backreference",
    "(?>": "atomic group",
}


def _check_pattern_text(pattern: object, max_len: int) -> str:
    if not isinstance(pattern, str):
        raise QueryRejected("pattern is not a string")
    if not pattern.strip():
        raise QueryRejected("empty pattern")
    if len(pattern) > max_len:
        raise QueryRejected(f"pattern longer than {max_len} characters")
    if any(c in pattern for c in _BAD_CHARS):
        raise QueryRejected("pattern contains NUL or newline")
    if pattern.startswith("-"):
        raise QueryRejected("pattern starts with '-' (flag injection)")
    if _DANGEROUS_FLAGS.search(pattern):
        raise QueryRejected("pattern embeds an rg flag")
    return pattern


def _unsupported_regex_feature(pattern: str) -> str | None:
    """Look-around, backreference or atomic group in ``pattern``, or None."""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in "123456789" or nxt == "k":
                return "backreference"
            i += 2
            continue
        if c == "(":
            for opener, feature in _UNSUPPORTED_GROUPS.items():
                if pattern.startswith(opener, i):
                    return feature
        i += 1
    return None


def _check_regex(pattern: str) -> None:
    feature = _unsupported_regex_feature(pattern)
    if feature:
        raise QueryRejected(f"regex uses {feature} (unsupported by rg)")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise QueryRejected(f"invalid regex: {exc}") from None
    if compiled.search("") is not None:
        raise QueryRejected("regex matches the empty string (every line)")


def _check_paths(raw: dict) -> None:
    for name in _PATH_FIELDS:
        if name not in raw:
            continue
        values = raw[name]
        if isinstance(values, str):
            values = [values]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise QueryRejected(f"{name} is not a string or list of strings")
        for value in values:
            if not _safe_relative_glob(value):
                raise QueryRejected(f"{name} {value[:60]!r} escapes the repository")


def _safe_relative_glob(value: str) -> bool:
    """Relative, no ``..`` segment, no leading ``/ ~ ! -``, no drive letter or bad chars."""
    if not value or value[0] in "/\\~!-" or re.match(r"[A-Za-z]:", value):
        return False
    if any(c in value for c in _BAD_CHARS):
        return False
    return ".." not in re.split(r"[/\\]", value)


def _check_command_fields(raw: dict) -> None:
    for name in _COMMAND_FIELDS:
        if name in raw:
            if _DANGEROUS_FLAGS.search(str(raw[name])):
                raise QueryRejected(f"{name} field carries dangerous rg flags")
            raise QueryRejected(f"{name} field not allowed (queries are data, not commands)")


def _is_fixed(raw: dict) -> bool:
    fixed, regex = raw.get("fixed"), raw.get("regex")
    for name, value in (("fixed", fixed), ("regex", regex)):
        if value is not None and not isinstance(value, bool):
            raise QueryRejected(f"{name} is not a boolean")
    if fixed is not None and regex is not None and fixed == regex:
        raise QueryRejected("fixed and regex contradict each other")
    if fixed is not None:
        return fixed
    return regex is False


def _context_lines(raw: dict) -> int:
    value = raw.get("context_lines", Query.context_lines)
    if isinstance(value, bool) or not isinstance(value, int):
        raise QueryRejected("context_lines is not an integer")
    if not 0 <= value <= MAX_CONTEXT_LINES:
        raise QueryRejected(f"context_lines outside 0..{MAX_CONTEXT_LINES}")
    return value


def _lang(raw: dict, default_lang: str | None) -> str | None:
    value = raw.get("lang")
    if isinstance(value, str) and value.lower() in LANGUAGES:
        return value.lower()
    return default_lang


def validate_query(raw: dict, *, default_lang: str | None, max_pattern_len: int = 200) -> Query:
    """One model-proposed query as a safe ``Query``; raises ``QueryRejected``."""
    if not isinstance(raw, dict):
        raise QueryRejected("query is not a JSON object")
    _check_command_fields(raw)
    pattern = _check_pattern_text(raw.get("pattern"), max_pattern_len)
    _check_paths(raw)
    fixed = _is_fixed(raw)
    if not fixed:
        _check_regex(pattern)
    kind = raw.get("kind")
    return Query(
        pattern=pattern,
        kind=kind if kind in QUERY_KINDS else "other",
        fixed=fixed,
        lang=_lang(raw, default_lang),
        context_lines=_context_lines(raw),
    )


def _clean_synonyms(raw: object, rejections: list[str]) -> dict[str, list[str]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        rejections.append("synonyms: not an object")
        return {}
    synonyms: dict[str, list[str]] = {}
    for word, values in list(raw.items())[:MAX_SYNONYM_KEYS]:
        if not _is_clean_term(word) or not isinstance(values, list):
            rejections.append(f"synonyms: entry {str(word)[:40]!r} malformed")
            continue
        kept = [v for v in values if _is_clean_term(v) and v != word]
        synonyms[word] = list(dict.fromkeys(kept))[:MAX_SYNONYMS_PER_KEY]
    return {word: values for word, values in synonyms.items() if values}


def _is_clean_term(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value.strip()) <= MAX_SYNONYM_LEN
        and value.isprintable()
        and not value.startswith("-")
    )


def _entries(raw: object) -> tuple[Iterable[object], object]:
    if isinstance(raw, list):
        return raw, None
    if isinstance(raw, dict):
        queries = raw.get("queries")
        if not isinstance(queries, list):
            raise QueryRejected("plan has no 'queries' list")
        return queries, raw.get("synonyms")
    raise QueryRejected("plan is not a JSON object or list")


def validate_plan(
    raw: object, *, default_lang: str | None, max_queries: int = 10
) -> tuple[list[Query], dict[str, list[str]], list[str]]:
    """A model-proposed plan as (queries, synonyms, rejection reasons).

    Accepts ``{"queries": [...], "synonyms": {...}}`` or a bare list of queries; keeps
    the first ``max_queries`` valid, distinct queries. Raises ``QueryRejected`` when
    none survives.
    """
    entries, raw_synonyms = _entries(raw)
    queries: list[Query] = []
    seen: set[tuple[str, bool, str | None]] = set()
    rejections: list[str] = []
    for number, entry in enumerate(entries, start=1):
        if len(queries) >= max_queries:
            rejections.append(f"queries after the first {max_queries} valid ones dropped")
            break
        try:
            query = validate_query(entry, default_lang=default_lang)
        except QueryRejected as exc:
            pattern = entry.get("pattern") if isinstance(entry, dict) else None
            shown = f" {pattern[:60]!r}" if isinstance(pattern, str) else ""
            rejections.append(f"query {number}{shown}: {exc.reason}")
            continue
        key = (query.pattern, query.fixed, query.lang)
        if key not in seen:
            seen.add(key)
            queries.append(query)
    synonyms = _clean_synonyms(raw_synonyms, rejections)
    if not queries:
        detail = f": {rejections[0]}" if rejections else ""
        raise QueryRejected(f"no valid query in the plan ({len(rejections)} rejected){detail}")
    return queries, synonyms, rejections
