"""LLMRouter: ask a litellm model for ripgrep queries, then treat its answer as hostile.

Any failure (no model, timeout, HTTP error, non-JSON, nothing valid) raises
``RouterError``; the pipeline then falls back to the offline router.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from greprag.context import LocalContext
from greprag.errors import LLMError, QueryRejected, RouterError
from greprag.languages import IDENTIFIER_RE, LANGUAGES, get_language
from greprag.llm import NO_MODEL, complete_json
from greprag.models import Query, QueryPlan
from greprag.router.validate import validate_plan

if TYPE_CHECKING:
    from greprag.config import Settings

__all__ = ["SYSTEM_PROMPT", "LLMRouter", "build_messages", "main_identifier", "parse_answer"]

MAX_WINDOW_CHARS = 4000
MAX_ANSWER_CHARS = 20_000
MAX_PARSE_ATTEMPTS = 50
_ALL_KEYWORDS = frozenset().union(*(lang.keywords for lang in LANGUAGES.values()))

SYSTEM_PROMPT = """\
You plan ripgrep searches that find repository code useful for completing the code at \
the cursor. Reply with STRICT JSON only: one object, no prose, no markdown fences.

Schema:
{
  "queries": [
    {"pattern": "<ripgrep pattern>", "kind": "class|method|variable|other",
     "regex": true, "lang": "<language name, optional>"}
  ],
  "synonyms": {"<key term>": ["<synonym>", "..."]}
}

Rules:
- About 10 queries, best first, mixing the four kinds: definitions of the classes, \
methods and variables the next lines will need (e.g. "class\\\\s+ConfigModel\\\\b", \
"def\\\\s+load_config\\\\s*\\\\("), usages (e.g. "\\\\.load_config\\\\("), and a few \
wildcard regexes (e.g. "class.*ConfigModel").
- "regex": true for a Rust-regex pattern (no look-around, no backreferences); \
"regex": false for a literal string. One line, at most 200 characters, never starting \
with "-".
- Patterns only: no shell commands, no rg flags, no file paths.
- "synonyms": a few alternative spellings or related names for the key terms \
(e.g. "config": ["settings", "options"]).
"""


def _context_prompt(ctx: LocalContext) -> str:
    lines = [f"File: {ctx.path or '(unknown)'}", f"Language: {ctx.lang or '(unknown)'}"]
    if ctx.imports:
        lines.append("Imports:")
        for ref in ctx.imports:
            name = f"{ref.name} from {ref.module}" if ref.name else ref.module
            lines.append(f"- {name}" + (f" as {ref.alias}" if ref.alias else ""))
    if ctx.enclosing_class:
        bases = f" (bases: {', '.join(ctx.class_bases)})" if ctx.class_bases else ""
        lines.append(f"Enclosing class: {ctx.enclosing_class}{bases}")
    if ctx.enclosing_function:
        lines.append(f"Enclosing function: {ctx.function_signature or ctx.enclosing_function}")
    names = {**ctx.annotations, **ctx.assignments}
    if names:
        lines.append("Names in scope: " + ", ".join(f"{k}: {v}" for k, v in names.items()))
    window = ctx.window[-MAX_WINDOW_CHARS:]
    lines += ["Code before the cursor:", "<<<", window, ">>>", f"Cursor line: {ctx.prefix}"]
    lines.append("Reply with the JSON object now.")
    return "\n".join(lines)


def build_messages(ctx: LocalContext) -> list[dict]:
    """The chat messages sent to the model for ``ctx``."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": _context_prompt(ctx)},
    ]


def parse_answer(text: str) -> object:
    """The model's JSON: the whole (unfenced) answer, else its first decodable object,
    else its first decodable list."""
    if len(text) > MAX_ANSWER_CHARS:
        raise RouterError(f"LLM answer longer than {MAX_ANSWER_CHARS} characters")
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.S)
    text = re.sub(r"```[a-zA-Z]*", "", text).strip()
    decoder = json.JSONDecoder()
    for opener in ("", "{", "["):
        starts = [0] if not opener else [m.start() for m in re.finditer(re.escape(opener), text)]
        for start in starts[:MAX_PARSE_ATTEMPTS]:
            try:
                value, end = decoder.raw_decode(text, start)
            except (ValueError, RecursionError):
                continue
            if opener or end == len(text):
                return value
    raise RouterError("LLM answer is not JSON")


def main_identifier(query: Query) -> str:
    """The longest identifier-looking word of a pattern, preferring non-keywords."""
    text = query.pattern
    if not query.fixed:  # drop regex escapes (\s, \b, \() and anchors; keep a literal \$
        text = re.sub(r"\\(.)|\$", lambda m: "$" if m.group(1) == "$" else " ", text)
    words = IDENTIFIER_RE.findall(text)
    lang = get_language(query.lang)
    keywords = lang.keywords if lang else _ALL_KEYWORDS
    preferred = [w for w in words if w not in keywords] or words
    return max(preferred, key=len, default="")


class LLMRouter:
    """Queries from a litellm model, validated (``from_settings`` for the resolved ones)."""

    name = "llm"

    def __init__(
        self,
        model: str | None = None,
        *,
        timeout: float = 8.0,
        api_base: str | None = None,
        api_key: str | None = None,
        max_queries: int = 10,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.api_base = api_base
        self.api_key = api_key
        self.max_queries = max_queries

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMRouter:
        return cls(
            settings.model or None,
            timeout=settings.llm_timeout,
            api_base=settings.api_base or None,
            api_key=settings.api_key or None,
            max_queries=settings.max_queries,
        )

    def plan(self, ctx: LocalContext, imported: dict[str, str] | None = None) -> QueryPlan:
        """Ask the model; raise ``RouterError`` on any failure (caller falls back).

        The timeout caps the whole call. Rejected queries are listed in
        ``QueryPlan.fallbacks`` as ``llm rejected ...``. ``imported`` is unused: the
        prompt lists the imports, and the model's patterns are not tied to files.
        """
        if not self.model:
            raise RouterError(NO_MODEL)
        try:
            answer = complete_json(
                self.model,
                build_messages(ctx),
                timeout=self.timeout,
                api_base=self.api_base,
                api_key=self.api_key,
            )
            queries, synonyms, rejections = validate_plan(
                parse_answer(answer), default_lang=ctx.lang, max_queries=self.max_queries
            )
        except LLMError as exc:
            raise RouterError(f"LLM call failed: {exc.reason}") from exc
        except QueryRejected as exc:
            raise RouterError(f"LLM plan rejected: {exc.reason}") from exc
        return QueryPlan(
            queries=[replace(q, purpose="llm", identifier=main_identifier(q)) for q in queries],
            router=self.name,
            synonyms=synonyms,
            fallbacks=[f"llm rejected {reason}" for reason in rejections],
        )
