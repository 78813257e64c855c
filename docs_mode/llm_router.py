"""LLMQuestionRouter: a model proposes keywords and synonyms for a question.

The model's answer is hostile input. It can only add terms: the offline router's terms
(the user's own words, weighed by the profile) always stay, and every proposed word or
phrase becomes an escaped pattern that weighs as a synonym (``synonym_weight`` times a
keyword), so an exact identifier the user typed is never outranked by what a model
suggested. Patterns pass ``plan_of_terms``' validation like every other query. Any
failure (no model, timeout, HTTP error, no JSON) falls back to the offline plan and says
why in ``QueryPlan.fallbacks``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from docs_mode.keywords import Term, identifier_pattern, is_identifier, phrase_pattern
from docs_mode.router import OfflineQuestionRouter, plan_of_terms
from docs_mode.stem import word_pattern
from greprag.errors import LLMError
from greprag.models import QueryPlan

if TYPE_CHECKING:
    from greprag.config import Settings

__all__ = ["MAX_MODEL_TERMS", "SYSTEM_PROMPT", "LLMQuestionRouter", "parse_terms"]

MAX_MODEL_TERMS = 8  # terms a model may add to the user's own
MAX_TERM_CHARS = 60
_TERM = re.compile(r"[\w$][\w$.:#\- ]*")
_OBJECT = re.compile(r"\{.*\}", re.S)

SYSTEM_PROMPT = """\
You turn a question about a software project into search terms for its documentation \
and code. Reply with STRICT JSON only: one object, no prose, no markdown fences.

Schema: {"keywords": ["<word, phrase or identifier>", ...], \
"synonyms": {"<word from the question>": ["<synonym>", ...]}}

Rules:
- keywords: at most 8 words, short phrases or exact identifiers (e.g. "retry", \
"connection pool", "Session.send") that the relevant docs or code would contain; \
include likely API names.
- synonyms: other words the docs may use for the question's words (e.g. \
"auth": ["authentication", "login"]).
- Plain words only: no regexes, no shell commands, no file paths.
"""


def parse_terms(reply: str) -> tuple[list[str], dict[str, list[str]]]:
    """The keywords and synonyms in a model's reply; anything malformed is dropped.
    Raises ``LLMError`` when the reply holds no JSON object at all."""
    found = _OBJECT.search(reply)
    try:
        data: Any = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise LLMError("the model's answer holds no JSON object")
    keywords = [t for t in _strings(data.get("keywords")) if _valid(t)]
    synonyms: dict[str, list[str]] = {}
    raw = data.get("synonyms")
    for word, others in raw.items() if isinstance(raw, dict) else []:
        kept = [o for o in _strings(others) if _valid(o)]
        if isinstance(word, str) and _valid(word) and kept:
            synonyms[word.strip()] = kept
    return keywords, synonyms


def _strings(value: Any) -> list[str]:
    return [v.strip() for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _valid(term: str) -> bool:
    return 0 < len(term) <= MAX_TERM_CHARS and _TERM.fullmatch(term.strip()) is not None


class LLMQuestionRouter:
    """The offline plan plus a model's keywords and synonyms, weighed as synonyms."""

    name = "llm"

    def __init__(self, offline: OfflineQuestionRouter, settings: Settings) -> None:
        self.offline = offline
        self.settings = settings

    def plan(self, question: str) -> QueryPlan:
        from docs_mode.keywords import question_terms
        from greprag.llm import complete_json

        o, s = self.offline, self.settings
        terms, expansions = question_terms(question, o.profile, o.synonyms, o.stop_words)
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Question: {question}\nReply with the JSON object now."},
        ]
        try:
            reply = complete_json(
                s.model,
                messages,
                timeout=s.llm_timeout,
                api_base=s.api_base or None,
                api_key=s.api_key or None,
            )
            keywords, synonyms = parse_terms(reply)
        except LLMError as exc:
            plan = o.plan(question)
            plan.fallbacks.append(f"llm question router: {exc.reason}; offline plan used")
            return plan
        proposed = keywords + [w for others in synonyms.values() for w in others]
        added = self._model_terms(proposed, terms)
        for word, others in synonyms.items():
            expansions.setdefault(word, []).extend(o for o in others if o not in expansions[word])
        return plan_of_terms([*terms, *added], router=self.name, synonyms=expansions)

    def _model_terms(self, proposed: list[str], known: list[Term]) -> list[Term]:
        """At most ``MAX_MODEL_TERMS`` new terms, each weighing as a synonym."""
        p = self.offline.profile
        weight = p.synonym_weight * p.keyword_weight
        patterns = {t.pattern for t in known}
        added: list[Term] = []
        for text in proposed:
            if len(added) >= MAX_MODEL_TERMS:
                break
            if is_identifier(text):
                pattern = identifier_pattern(text)
            elif " " in text or "-" in text:
                pattern = phrase_pattern(text)
            else:
                pattern = word_pattern(text, p.stemming)
            if pattern in patterns or any(re.fullmatch(t.pattern, text) for t in known):
                continue  # the user's words already find it
            patterns.add(pattern)
            added.append(Term(text, "synonym", weight, pattern, "llm"))
        return added
