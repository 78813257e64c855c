"""Question routers: a plain-language question → a validated ``QueryPlan``.

``OfflineQuestionRouter`` (the default) understands the question with ``keywords`` and
the synonym table; every term becomes a ``Query`` (purpose ``identifier``, ``keyword``,
``phrase``, ``part`` or ``synonym``) that passes the same validation as an LLM's queries
(``greprag.router.validate``), so nothing but a checked pattern reaches rg's argv.

The plan is made from the question alone: nothing a repository's files say (an
instruction written in a doc, say) can add, remove or reweigh a query.

Seam for a model: an LLM question router (``greprag ask``) returns keywords and synonyms;
``plan_of_terms`` turns them into the same plan through the same validation, and the
offline router stays the fallback, as for code completion.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from docs_mode.keywords import STOP_WORDS, Term, question_terms
from docs_mode.profile import DocsProfile
from docs_mode.synonyms import SynonymTable, load_synonyms
from greprag.errors import QueryRejected
from greprag.models import Query, QueryPlan
from greprag.router.validate import validate_query

__all__ = ["OfflineQuestionRouter", "QuestionRouter", "plan_of_terms"]


class QuestionRouter(Protocol):
    """Plans the searches for one question; ``name`` is what ``QueryPlan.router`` says."""

    name: str

    def plan(self, question: str) -> QueryPlan: ...


def plan_of_terms(
    terms: Iterable[Term], *, router: str, synonyms: dict[str, list[str]] | None = None
) -> QueryPlan:
    """Validated queries for ``terms`` (a rejected one is left out and said so)."""
    queries: list[Query] = []
    notes: list[str] = []
    for term in terms:
        try:
            checked = validate_query({"pattern": term.pattern, "fixed": False}, default_lang=None)
        except QueryRejected as exc:
            notes.append(f"term {term.text[:40]!r} left out: {exc.reason}")
            continue
        queries.append(
            Query(
                pattern=checked.pattern,
                fixed=False,
                lang=None,
                identifier=term.text,
                purpose=term.kind,
                weight=round(term.weight, 4),
                context_lines=0,
            )
        )
    return QueryPlan(queries=queries, router=router, synonyms=dict(synonyms or {}), fallbacks=notes)


class OfflineQuestionRouter:
    """Keywords, exact identifiers, phrases and weighted synonyms; no model needed."""

    name = "offline"

    def __init__(
        self,
        profile: DocsProfile,
        synonyms: SynonymTable | None = None,
        stop_words: frozenset[str] | None = None,
    ) -> None:
        self.profile = profile
        self.synonyms = synonyms if synonyms is not None else load_synonyms(profile.synonyms)
        self.stop_words = STOP_WORDS if stop_words is None else stop_words

    def plan(self, question: str) -> QueryPlan:
        terms, expansions = question_terms(question, self.profile, self.synonyms, self.stop_words)
        return plan_of_terms(terms, router=self.name, synonyms=expansions)
