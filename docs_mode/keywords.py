"""A question → weighted search terms: what the user typed, understood offline.

- identifiers (``snake_case``, ``camelCase``, ``CapWords``, ``name()``, ``--option``) and
  dotted names (``QuerySet.filter``) are kept exact and case-sensitive; a dotted name also
  searches its last part (``filter``) and, a little weaker, its other parts;
- ``"quoted phrases"`` and `` `code spans` `` are searched as written;
- other words are keywords: stop words are dropped, common question words (``use``,
  ``way``, ``work``) weigh less; each keyword also finds its light-stemmed forms, at
  ``stem_weight`` times its own weight;
- compound identifiers are split (``getUserById`` → ``get``, ``user``, ``id``) into
  weaker parts;
- two neighbouring words are also searched as one name (``add command`` finds
  ``AddCommand``, ``add_command`` and ``add-command``; ``sub command`` finds
  ``subcommand``), at ``joined_weight``: what a user calls two words, code often joins;
- synonyms from the curated table expand the user's words, weighted at
  ``synonym_weight`` times the word they came from.

Every weight comes from the docs profile; the user's own words always weigh more than
what they expand to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from docs_mode.profile import DocsProfile
from docs_mode.stem import stem, word_forms, word_pattern
from docs_mode.synonyms import SynonymTable
from greprag.fusion.bm25 import split_identifier
from greprag.languages import words
from greprag.rg import escape_regex

__all__ = [
    "GENERIC_WORDS",
    "STOP_WORDS",
    "Term",
    "TermKind",
    "identifier_pattern",
    "inner_name_pattern",
    "is_identifier",
    "joined_pattern",
    "phrase_pattern",
    "question_terms",
]

TermKind = Literal["identifier", "keyword", "stem", "phrase", "part", "synonym"]

STOP_WORDS = words(
    """
    a an the and or but nor not no of to in on at by for with from as into onto about
    over under after before between through during above below up down out off again
    is are was were be been being am do does did doing done has have had having
    i me my mine we us our you your yours he him his she her it its they them their
    this that these those there here what which who whom whose when where why how
    can could should would will shall may might must let lets
    if then than else so too very just only also even ever still yet any all each
    every some such more most other same own both either neither few many much
    s t d ll m re ve don doesn isn aren wasn weren won wouldn shouldn couldn cannot
    please thanks hi hello someone something anything anyone one ones via per
    """
)
GENERIC_WORDS = words(
    """
    use uses used using way ways want wants need needs needed make makes made get gets
    got getting thing things example examples possible able good best better new work
    works working worked happen happens happened instead without within like etc
    correct correctly right properly proper kind sort type types go goes going see
    know tell show find try trying tried call calls called add added write writes
    handle handles handled case cases option give gives given take takes set sets
    """
)
MAX_JOINED = 4  # pairs of neighbouring words searched as one name
MAX_NAME_WORDS = 4  # a question of at most this many words is also searched as one name
_ARTICLES = frozenset({"a", "an", "the"})  # left out of a question searched as one name
DOTTED_PART = 0.8  # the last part of a dotted name, times identifier_weight
OTHER_PART = 0.6  # its other parts
MIN_PART = 2

_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r'"([^"\n]+)"|(?<![\w\'])\'([^\'\n]+\s[^\'\n]+)\'(?![\w\'])')
_TOKEN = re.compile(
    r"(?<![\w-])--[A-Za-z][\w-]*"  # a command-line option
    r"|[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*(?:\(\))?"  # names, dotted names
    r"|\d+(?:\.\d+)*"
)
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]")
_PHRASE_GAP = r"[\s_-]+"  # "select related" also finds select_related and select-related


@dataclass(frozen=True)
class Term:
    """One search term: ``pattern`` is a regex valid for rg and Python alike."""

    text: str
    kind: TermKind
    weight: float
    pattern: str
    source: str = ""  # the user's word a part or synonym came from


def is_identifier(token: str) -> bool:
    if token.startswith("-") or token.endswith("()"):
        return True
    core = token.strip("_$")
    return (
        any(sep in token for sep in (".", "::", "#"))
        or "_" in core
        or "$" in token
        or bool(_INNER_CAPITAL.search(token))
    )


def identifier_pattern(name: str) -> str:
    """Case-sensitive, whole-word: ``filter`` does not find ``filters`` or ``prefilter``."""
    lead = r"\b" if re.match(r"\w", name) else ""
    tail = r"\b" if re.search(r"\w$", name) else ""
    return f"{lead}{escape_regex(name)}{tail}"


def phrase_pattern(phrase: str) -> str:
    """Case-insensitive, the words in order with any spacing between them."""
    parts = [escape_regex(w) for w in re.findall(r"[\w$.-]+", phrase)]
    lead = r"\b" if re.match(r"\w", phrase.strip()) else ""
    tail = r"\b" if re.search(r"\w$", phrase.strip()) else ""
    return f"(?i){lead}{_PHRASE_GAP.join(parts)}{tail}"


def joined_pattern(
    *words: str, optional: frozenset[str] = frozenset(), stemming: bool = True
) -> str:
    """Words as one name in any case, joined directly or by one space, ``_`` or ``-``:
    ``add`` + ``command`` finds ``AddCommand``, ``add_command``, ``ADD-COMMANDS`` and
    ``add command``. The name may go on past the last word at a capital, a digit or
    ``_`` (``AddCommandTo``), not at a lowercase letter (``add commandline`` is another
    word); only the last word takes its other forms. Words in ``optional`` before the
    last may be left out: "not an error" finds ``NotAnError`` and ``NotError``."""
    return rf"\b{_joined(words, stemming, optional)}(?:\b|[A-Z0-9_])"


def inner_name_pattern(*words: str, stemming: bool = True) -> str:
    """``joined_pattern`` for the words as whole parts inside a longer name, starting at
    a capital or after ``_``: "flag required" in ``MarkFlagRequired`` and
    ``mark_flag_required``. Python's syntax only (lookarounds): rg, lacking them, would
    need an alternation that costs it its fast path; this one reads definitions' names."""
    first = escape_regex(words[0].lower())
    start = rf"(?:(?<=[a-z0-9])(?={first[:1].upper()})|(?<=_))"
    return rf"{start}{_joined(words, stemming)}(?:\b|[A-Z0-9_])"


def _joined(words: tuple[str, ...], stemming: bool, optional: frozenset[str] = frozenset()) -> str:
    *head, last = words
    parts = [
        f"(?:(?i:{escape_regex(w.lower())})[\\s_-]?)?"
        if w.lower() in optional
        else f"(?i:{escape_regex(w.lower())})[\\s_-]?"
        for w in head
    ]
    return "".join([*parts, f"(?i:{word_forms(last, stemming)})"])


class _Terms:
    """Terms collected in order; one per pattern, keeping the highest weight."""

    def __init__(self) -> None:
        self.by_pattern: dict[str, Term] = {}

    def add(self, term: Term) -> None:
        known = self.by_pattern.get(term.pattern)
        if known is None or known.weight < term.weight:
            self.by_pattern[term.pattern] = term

    def ranked(self, limit: int) -> list[Term]:
        order = {p: i for i, p in enumerate(self.by_pattern)}
        terms = sorted(self.by_pattern.values(), key=lambda t: (-t.weight, order[t.pattern]))
        return terms[:limit]


def _identifier_terms(token: str, p: DocsProfile, into: _Terms) -> None:
    name = token[:-2] if token.endswith("()") else token
    into.add(Term(name, "identifier", p.identifier_weight, identifier_pattern(name)))
    parts = [x for x in re.split(r"\.|::|#", name) if x]
    if len(parts) > 1:
        last = parts[-1]
        into.add(
            Term(last, "identifier", p.identifier_weight * DOTTED_PART, identifier_pattern(last))
        )
        for other in parts[:-1]:
            if len(other) > MIN_PART:
                weight = p.identifier_weight * OTHER_PART
                into.add(Term(other, "identifier", weight, identifier_pattern(other)))
    if not p.split_identifiers:
        return
    for part in parts:
        pieces = split_identifier(part.lstrip("-"))
        if len(pieces) < 2:
            continue
        for piece in pieces:
            if len(piece) < MIN_PART or piece in STOP_WORDS or not piece.isalpha():
                continue
            weight = p.part_weight * (p.generic_weight if piece in GENERIC_WORDS else 1.0)
            into.add(Term(piece, "part", weight, word_pattern(piece, p.stemming), name))


def _keyword(word: str, p: DocsProfile, stop_words: frozenset[str]) -> list[Term]:
    """The word as typed and, weaker, its other forms (light stemming is an expansion
    too: ``returns`` finds ``returns`` at full weight, ``return`` below it)."""
    w = word.lower()
    if w in stop_words or len(w) < MIN_PART:  # "1-based": the 1 would match every line
        return []
    weight = p.generic_weight if w in GENERIC_WORDS else p.keyword_weight
    terms = [Term(w, "keyword", weight, word_pattern(w, stemming=False))]
    forms = word_pattern(w, stemming=True) if p.stemming and w.isalpha() else terms[0].pattern
    if forms != terms[0].pattern and p.stem_weight > 0:
        terms.append(Term(stem(w), "stem", weight * p.stem_weight, forms, w))
    return terms


def _synonym_terms(
    plain: list[str], kept: dict[str, float], p: DocsProfile, table: SynonymTable, into: _Terms
) -> dict[str, list[str]]:
    """Expand the question's plain words; each expansion weighs ``synonym_weight`` times
    the word (or phrase) it came from."""
    expansions = table.expansions(plain)
    used: dict[str, list[str]] = {}
    for member, others in expansions.items():
        base = max((kept.get(stem(w), p.keyword_weight) for w in member.split()), default=1.0)
        for other in others:
            if any(re.fullmatch(t.pattern, other) for t in into.by_pattern.values()):
                continue  # already found by the user's word or another expansion
            pattern = (
                phrase_pattern(other)
                if " " in other or "-" in other
                else word_pattern(other, p.stemming)
            )
            into.add(Term(other, "synonym", p.synonym_weight * base, pattern, member))
            used.setdefault(member, []).append(other)
    return used


def question_terms(
    question: str,
    profile: DocsProfile,
    table: SynonymTable | None = None,
    stop_words: frozenset[str] = STOP_WORDS,
) -> tuple[list[Term], dict[str, list[str]]]:
    """The weighted terms of ``question``, best first (at most ``profile.max_terms``, and
    up to ``MAX_JOINED`` neighbouring words joined), and the synonym expansions used
    (``{word: [synonyms]}``)."""
    p = profile
    terms = _Terms()
    rest = question
    named = _named_question(question, p)
    for match in _CODE_SPAN.finditer(question):
        span = match.group(1).strip()
        if _TOKEN.fullmatch(span) and (is_identifier(span) or span.isidentifier()):
            _identifier_terms(span, p, terms)
        elif span:
            terms.add(Term(span, "phrase", p.phrase_weight, phrase_pattern(span)))
        rest = rest.replace(match.group(0), " ")
    for match in _QUOTED.finditer(rest):
        phrase = (match.group(1) or match.group(2)).strip()
        if len(phrase.split()) > 1:
            terms.add(Term(phrase, "phrase", p.phrase_weight, phrase_pattern(phrase)))
            rest = rest.replace(match.group(0), f" {phrase} ")
    plain: list[str] = []
    kept: dict[str, float] = {}
    neighbours: list[tuple[str, str]] = []
    previous = ""  # the last plain word, while no identifier or number came after it
    for token in _TOKEN.findall(rest):
        if is_identifier(token):
            if any(len(part) > 1 for part in re.split(r"\W+", token)):  # not "e.g"
                _identifier_terms(token, p, terms)
            previous = ""
            continue
        for word in token.split("-"):
            plain.append(word.lower())
            found = _keyword(word, p, stop_words)
            for term in found:
                terms.add(term)
            if found:
                root = stem(found[0].text)
                kept[root] = max(kept.get(root, 0.0), found[0].weight)
                if previous and word.isalpha():
                    neighbours.append((previous, found[0].text))
                previous = found[0].text if word.isalpha() else ""
            elif word.lower() not in stop_words:
                if previous and word.isdigit():  # "Windows 7", "HTTP 2": the number says which
                    phrase = f"{previous} {word}"
                    terms.add(Term(phrase, "phrase", p.keyword_weight, phrase_pattern(phrase)))
                previous = ""  # a number or a one-letter word: no name joins across it
    expansions = _synonym_terms(plain, kept, p, table, terms) if table else {}
    kept_terms = terms.ranked(p.max_terms)
    joined = _joined_terms(neighbours, p)
    joined += [t for t in named if all(t.pattern != j.pattern for j in joined)]
    return sorted([*kept_terms, *joined], key=lambda t: -t.weight), expansions


def _named_question(question: str, p: DocsProfile) -> list[Term]:
    """A short question of plain words, stop words too (articles not), as one name: "no
    such option" finds ``NoSuchOption``, "is naive" ``is_naive``, "set the version
    template" ``SetVersionTemplate`` (no pair of their words would: stop words break
    pairs). None for a longer question or one with names, numbers or quotes."""
    tokens = _TOKEN.findall(question)
    every = [w.lower() for token in tokens for w in token.split("-")]
    plain = [w for w in every if w not in _ARTICLES]
    if (
        p.joined_weight <= 0
        or not 2 <= len(plain) <= MAX_NAME_WORDS
        or not all(w.isalpha() and w.isascii() for w in plain)
        or any(is_identifier(token) for token in tokens)
        or _CODE_SPAN.search(question)
        or _QUOTED.search(question)
    ):
        return []
    while every[-1] in _ARTICLES:
        every.pop()
    pattern = joined_pattern(*every, optional=_ARTICLES, stemming=p.stemming)
    return [Term(" ".join(plain), "phrase", p.joined_weight, pattern)]


def _joined_terms(neighbours: list[tuple[str, str]], p: DocsProfile) -> list[Term]:
    """The first ``MAX_JOINED`` pairs of neighbouring words, each as one name; beside
    ``max_terms``, so that no word, form or synonym of the question gives way to them."""
    if p.joined_weight <= 0:
        return []
    pairs = list(dict.fromkeys(neighbours))[:MAX_JOINED]
    return [
        Term(f"{a} {b}", "phrase", p.joined_weight, joined_pattern(a, b, stemming=p.stemming))
        for a, b in pairs
    ]
