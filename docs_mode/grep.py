"""The grep route of docs mode: one rg pass → whole sections and definitions, BM25-ranked.

Every term of the question's plan goes to a single rg process over the repository's
documentation and code (the files listed once per ``file_list_ttl``). Each matched line
is attributed to the terms whose pattern it matches, then to the unit (section,
docstring or definition) that contains it. Units are first ranked by which terms they
contain (term weight × inverse unit frequency over the repository); the best ``pool``
are then scored by BM25 over their whole text, each term counted by its own pattern (so
a stemmed keyword counts every form rg matched; the first HTML units count every term in
the text they show, where a word the source splits with tags is whole) and weighted by the
plan. Units outside the pool follow in the first order: nothing is cut before fusion. A
unit of a test file scores ``test_weight`` times as much, unless the question speaks of
tests: a test calls the API it tests many times and would outrank the API's own
definition by term counts. A member summary (Javadoc's method summary) scores
``summary_weight`` times as much: it repeats each entry's first sentence, and the entry
itself says more; a type stub's (``.pyi``) unit ``stub_weight`` times: it repeats the
signatures of the code beside it, without their docstrings.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, groupby
from operator import itemgetter
from pathlib import Path

from docs_mode.keywords import inner_name_pattern
from docs_mode.profile import DocsProfile
from docs_mode.sections import Section
from docs_mode.stem import stem
from docs_mode.units import SearchKind, UnitCache, unit_key
from greprag.config import Settings
from greprag.fusion.bm25 import split_identifier
from greprag.models import Candidate, Query, Skip
from greprag.rg import SearchSpec, WordMatch, find_rg, list_files, parse_size, search_words
from greprag.routes import QueryStats, RouteHits, RouteRequest

__all__ = ["SectionGrepRoute", "is_test_file", "speaks_of_tests"]

# the first units of the pool whose shown HTML text is read for terms rg missed there (a
# word split by tags): where the first blocks come from; reading all 100 cost flask 5 ms
SHOWN_TEXT_UNITS = 30
INSIDE_HEAD = 2  # names are read for words inside them in this many pools of the order

MAX_LISTED_FILES = 6000  # beyond this the argv grows past what is safe to pass
BM25_K1 = 1.2
BM25_B = 0.75
OUTSIDE_POOL = 1e-3  # units past the pool keep their first-stage order, far below it
_TAG = re.compile(r"<[^>]*>?|^[^<]*>")  # a tag, or one cut at the line's edge
# test files by their names (Python, Go, Java, JavaScript/TypeScript, Ruby) and folders;
# not ``test/`` alone, which is also a library's own package (``django/test/``)
_TEST_FILE = re.compile(
    r"(?:^|/)(?:test_[^/]*\.py|[^/]*_test\.(?:py|go)|tests\.py|conftest\.py"
    r"|[^/]*Tests?\.(?:java|kt)|[^/]*\.(?:test|spec)\.[cm]?[jt]sx?|[^/]*_spec\.rb)$"
    r"|(?:^|/)(?:tests|__tests__|src/test)/"
)

_STUBS = (".pyi", ".d.ts")  # type stubs: a module's signatures again, without docstrings

# a question speaks of tests when one of its words or name parts starts with "test" (tests,
# TestCase, tested) or names a test tool (unittest, pytest, doctest); "latest" does not
_TEST_WORD = re.compile(r"(?:unit|py|doc|sub)?test")


def speaks_of_tests(term: str) -> bool:
    """Whether a question's ``term`` (a word, phrase or identifier) is about tests."""
    return any(_TEST_WORD.match(part) for part in split_identifier(term))


def is_test_file(path: str) -> bool:
    """Whether the repo-relative ``path`` names a test file (``_TEST_FILE``)."""
    return _TEST_FILE.search(path) is not None


@dataclass
class _Term:
    index: int
    query: Query
    regex: re.Pattern[str]
    needle: str  # a substring every match contains (a cheap test before the regex)
    exact: bool  # the needle is case-sensitive


@dataclass
class _UnitHits:
    unit: Section
    lines: list[int] = field(default_factory=list)
    terms: set[int] = field(default_factory=set)


def _needle(query: Query) -> tuple[str, bool]:
    """A literal every line the query matches contains, and whether case matters."""
    if query.purpose == "identifier":
        return query.identifier, True
    first = query.identifier.lower().replace("-", " ").split()
    word = first[0] if first else ""
    root = stem(word) if query.purpose != "phrase" and len(first) == 1 else word
    return (root[:-1] if root.endswith("y") else root), False


def _decoded(raw: bytes) -> str | None:
    """A path as rg printed it, repo-relative with ``/``; None when not UTF-8."""
    try:
        path = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return path[2:] if path.startswith("./") else path


def _found(terms: list[_Term], text: str) -> list[int]:
    """The terms whose pattern matches ``text`` (a cheap substring test first)."""
    lowered = text.lower()
    return [
        t.index
        for t in terms
        if t.needle in (text if t.exact else lowered) and t.regex.search(text)
    ]


def _compile(plan_queries: list[Query]) -> list[_Term]:
    terms = []
    for i, query in enumerate(plan_queries):
        try:
            regex = re.compile(query.pattern, re.ASCII)
        except re.error:
            continue
        needle, exact = _needle(query)
        terms.append(_Term(i, query, regex, needle, exact))
    return terms


class SectionGrepRoute:
    """rg over docs and code → unit candidates with BM25 scores (see the module doc)."""

    name = "grep"

    def __init__(
        self,
        repo: Path,
        units: UnitCache,
        profile: DocsProfile,
        *,
        rg_path: str | None = None,
        max_filesize: str = "1M",
        file_list_ttl: float = 5.0,
        timeout: float = 20.0,
    ) -> None:
        self.repo = repo
        self.units = units
        self.profile = profile
        self.rg = find_rg(rg_path)
        self.max_filesize = max_filesize
        self.file_list_ttl = file_list_ttl
        self.timeout = timeout
        self._listing: tuple[float, list[str], int] | None = None

    @classmethod
    def from_settings(
        cls, repo: Path, settings: Settings, units: UnitCache, profile: DocsProfile
    ) -> SectionGrepRoute:
        return cls(
            repo,
            units,
            profile,
            rg_path=settings.rg_path or None,
            max_filesize=settings.max_filesize,
            file_list_ttl=settings.file_list_ttl,
        )

    def _files(self) -> tuple[list[str], int]:
        """Files rg would search (``.gitignore`` respected) within the size limit, and how
        many were over it; listed again only when older than ``file_list_ttl``."""
        now = time.monotonic()
        if self._listing is None or now - self._listing[0] > self.file_list_ttl:
            limit = parse_size(self.max_filesize)
            kept, big = [], 0
            for path in list_files(self.rg, self.repo, timeout=self.timeout):
                if not self.units.searchable(path, "all"):
                    continue
                try:
                    size = (self.repo / path).stat().st_size
                except OSError:
                    continue
                if size > limit:
                    big += 1
                else:
                    kept.append(path)
            self._listing = (now, kept, big)
        return self._listing[1], self._listing[2]

    def search(self, request: RouteRequest, kind: SearchKind = "all") -> RouteHits:
        """Units of ``kind`` that the plan's terms hit, best first."""
        started = time.perf_counter()
        terms = _compile(request.plan.queries)
        stats = [QueryStats(index=i) for i in range(len(request.plan.queries))]
        files, big = self._files()
        searched = [f for f in files if self.units.searchable(f, kind)]
        notes = [f"{big} file(s) over {self.max_filesize} not searched"] if big else []
        if not terms or not searched:
            return RouteHits(self.name, [], notes=notes, stats=stats)
        hits_by_path, skipped = self._matches(terms, searched, stats)
        units, in_hit_files = self._units(hits_by_path, kind)
        total = in_hit_files * len(searched) / max(len(hits_by_path), 1)
        df = Counter(chain.from_iterable(u.terms for u in units.values()))  # units per term
        candidates = self._rank(units, terms, df, max(total, len(units)))
        for i, count in df.items():
            stats[i].kept = count
        timings = {self.name: (time.perf_counter() - started) * 1000}
        return RouteHits(self.name, candidates, skipped, notes, stats, timings)

    def _matches(
        self, terms: list[_Term], files: list[str], stats: list[QueryStats]
    ) -> tuple[dict[str, dict[int, set[int]]], list[Skip]]:
        """One rg pass; each matched line with the terms found in it, per file.

        Source files (Markdown, reST, code) print only what matched: the terms found in a
        matched text are worked out once per distinct text. Longer patterns go first, so
        where two match at one place rg reports the longer text, and every term inside it
        is credited. HTML pages print whole lines (run beside, on the other core): a term
        counts only outside the tags. The files are rg's own listing (no symlinks); units
        are read through ``greprag.files``, which refuses anything outside the repository.
        """
        listed = len(files) <= MAX_LISTED_FILES
        markup = [f for f in files if self.units.is_html(f)] if listed else []
        skip = set(markup)
        source = [f for f in files if f not in skip] if markup else files
        patterns = tuple(sorted({t.query.pattern for t in terms}, key=lambda p: (-len(p), p)))
        jobs = [(paths, paths is source) for paths in (source, markup) if paths]
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            outputs = list(pool.map(lambda job: self._rg(patterns, job[0], listed, job[1]), jobs))
        wanted = set(files)
        found_in: dict[bytes, list[int]] = {}  # matched text → the terms it contains
        lines: dict[str, dict[int, set[int]]] = {}
        binaries: set[str] = set()
        unreadable: list[Skip] = []
        for (matches, binary, skipped), (_, only_matching) in zip(outputs, jobs, strict=True):
            binaries.update(binary)
            unreadable += skipped
            for raw_path, group in groupby(matches, key=itemgetter(0)):  # rg groups by file
                path = _decoded(raw_path)
                if path not in wanted:
                    continue
                at = lines.setdefault(path, {})
                for _, number, text in group:
                    if only_matching:
                        matched = found_in.get(text)
                        if matched is None:
                            matched = found_in[text] = _found(
                                terms, text.decode("utf-8", "replace")
                            )
                    else:
                        matched = _found(terms, _TAG.sub(" ", text.decode("utf-8", "replace")))
                    if matched:
                        line = int(number)
                        known = at.get(line)
                        if known is None:
                            at[line] = set(matched)
                        else:
                            known.update(matched)
        for path in binaries:
            lines.pop(path, None)
        for hits in lines.values():
            for i, count in Counter(chain.from_iterable(hits.values())).items():
                stats[i].hits += count
                stats[i].files += 1
        for skip in unreadable:
            lines.pop(skip.path, None)
        return lines, [Skip(p, "binary") for p in sorted(binaries)] + unreadable

    def _rg(
        self, patterns: tuple[str, ...], files: list[str], listed: bool, only: bool
    ) -> tuple[list[WordMatch], list[str], list[Skip]]:
        spec = SearchSpec(
            patterns=patterns,
            max_count_per_file=self.profile.max_count_per_file,
            max_filesize=self.max_filesize,
            paths=tuple(files) if listed else (),
        )
        return search_words(self.rg, self.repo, spec, self.timeout, only_matching=only)

    def _units(
        self, hits_by_path: dict[str, dict[int, set[int]]], kind: SearchKind
    ) -> tuple[dict[tuple[str, int], _UnitHits], int]:
        """Matched lines gathered per unit (lines outside every unit are dropped), and how
        many units the files with hits hold."""
        units: dict[tuple[str, int], _UnitHits] = {}
        in_hit_files = 0
        for path in sorted(hits_by_path):
            file_units = self.units.units(path, kind)
            starts, ends = file_units.starts, file_units.ends
            in_hit_files += len(starts)
            hits = hits_by_path[path]
            at, last = 0, len(starts)
            found = None
            for line in hits:  # rg prints a file's lines in order: one walk over its units
                if found is not None and line <= found.unit.end_line:
                    found.lines.append(line)  # the same unit as the line before
                    found.terms |= hits[line]
                    continue
                while at < last and ends[at] < line:
                    at += 1
                if at == last:
                    break
                if starts[at] > line:
                    continue
                unit = file_units.units[at]
                found = units[unit_key(path, unit.start_line)] = _UnitHits(unit, [line])
                found.terms |= hits[line]
        return units, in_hit_files

    def _factors(
        self, units: dict[tuple[str, int], _UnitHits], terms: list[_Term]
    ) -> dict[str, float]:
        """Per path of ``units``, what its units' scores are multiplied by: ``test_weight``
        for a test file, unless a term of the question speaks of tests; ``stub_weight``
        for a type stub."""
        down = self.profile.test_weight
        if any(speaks_of_tests(t.query.identifier) for t in terms):
            down = 1.0
        stub = self.profile.stub_weight
        return {
            p: (down if is_test_file(p) else 1.0) * (stub if p.endswith(_STUBS) else 1.0)
            for p in {path for path, _ in units}
        }

    def _named(
        self,
        units: dict[tuple[str, int], _UnitHits],
        terms: list[_Term],
        weighted: dict[int, float],
    ) -> tuple[dict[tuple[str, int], float], dict[tuple[str, int], float]]:
        """Per definition whose name a naming term (an identifier, or words searched as
        one name) matches: ``title_weight`` times those terms' weight. And per definition
        that words searched as one name name whole (``FormData`` for "form data"), what
        its score is multiplied by: ``question_name_factor`` when those words hold every
        word of the question, else ``name_factor``."""
        naming = {t.index: t for t in terms if t.query.purpose in ("identifier", "phrase")}
        bonus: dict[tuple[str, int], float] = {}
        factors: dict[tuple[str, int], float] = {}
        if not naming:
            return bonus, factors
        asked = {t.query.identifier.lower() for t in terms if t.query.purpose == "keyword"}
        for key, hits in units.items():
            unit = hits.unit
            if unit.kind != "definition":
                continue
            found = [i for i in hits.terms if i in naming and naming[i].regex.search(unit.title)]
            if not found:
                continue
            bonus[key] = self.profile.title_weight * sum(weighted[i] for i in found)
            whole = [
                set(naming[i].query.identifier.lower().split())
                for i in found
                if naming[i].query.purpose == "phrase" and naming[i].regex.fullmatch(unit.title)
            ]
            if whole:
                every = any(asked <= words for words in whole)
                p = self.profile
                factors[key] = p.question_name_factor if every else p.name_factor
        return bonus, factors

    def _named_inside(
        self,
        units: dict[tuple[str, int], _UnitHits],
        terms: list[_Term],
        weighted: dict[int, float],
        order: list[tuple[str, int]],
        first: dict[tuple[str, int], float],
        named: dict[tuple[str, int], float],
        factor: dict[tuple[str, int], float],
    ) -> list[tuple[str, int]]:
        """``order`` with the definitions among its first ``INSIDE_HEAD`` × ``pool`` whose
        name holds words searched as one name inside it (``MarkFlagRequired`` for "flag
        required") gaining ``title_weight`` times those terms' weight, re-sorted. In
        Python, on names only: rg's pattern starts a name at a word boundary (another
        start cost rg its fast path), and only the head of the order could reach the pool."""
        inner = {
            t.index: re.compile(inner_name_pattern(*words, stemming=self.profile.stemming))
            for t in terms
            if t.query.purpose == "phrase" and len(words := t.query.identifier.lower().split()) > 1
        }
        if not inner or self.profile.title_weight <= 0:
            return order
        size = INSIDE_HEAD * self.profile.pool
        head = order[:size]
        for key in head:
            unit = units[key].unit
            if unit.kind != "definition":
                continue
            found = [i for i, regex in inner.items() if regex.search(unit.title)]
            if found:
                gain = self.profile.title_weight * sum(weighted[i] for i in found)
                named[key] = named.get(key, 0.0) + gain
                first[key] += factor[key] * gain
        head.sort(key=first.__getitem__, reverse=True)
        return head + order[size:]

    def _rank(
        self,
        units: dict[tuple[str, int], _UnitHits],
        terms: list[_Term],
        df: Counter[int],
        total: float,
    ) -> list[Candidate]:
        """First by the terms each unit contains (weight × inverse unit frequency over
        an estimated ``total`` units), then BM25 over the whole text of the best ``pool``."""
        if not units:
            return []
        idf = {
            t.index: math.log(1 + (total - df[t.index] + 0.5) / (df[t.index] + 0.5)) for t in terms
        }
        weighted = {t.index: t.query.weight * idf[t.index] for t in terms}
        by_path = self._factors(units, terms)
        named, naming = self._named(units, terms, weighted)
        summary = self.profile.summary_weight  # a member index repeats the entries below
        factor = {
            key: by_path[key[0]]
            * naming.get(key, 1.0)
            * (summary if u.unit.kind == "summary" else 1.0)
            for key, u in units.items()
        }
        first = {
            key: factor[key] * (sum(map(weighted.__getitem__, u.terms)) + named.get(key, 0.0))
            for key, u in units.items()
        }
        order = sorted(units, key=first.__getitem__, reverse=True)  # stable: ties by key
        order = self._named_inside(units, terms, weighted, order, first, named, factor)

        pool = order[: self.profile.pool]
        lengths = {key: max(1, len(units[key].unit.text.split())) for key in pool}
        average = sum(lengths.values()) / len(lengths)
        by_index = {t.index: t for t in terms}
        scores: dict[tuple[str, int], float] = {}
        for rank, key in enumerate(pool):
            text = units[key].unit.text
            norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[key] / average)
            score = 0.0
            found = units[key].terms
            if rank < SHOWN_TEXT_UNITS and self.units.is_html(key[0]):  # ``two <code>int</code>s``
                found = found | set(_found([t for t in terms if t.index not in found], text))
            for i in found:
                tf = len(by_index[i].regex.findall(text))
                score += weighted[i] * tf * (BM25_K1 + 1) / (tf + norm)
            scores[key] = (score + named.get(key, 0.0)) * factor[key]
        ranked = sorted(pool, key=lambda key: (-scores[key], key)) + order[self.profile.pool :]
        candidates = []
        for key in ranked:
            hits = units[key]
            unit = hits.unit
            score = scores[key] if key in scores else first[key] * OUTSIDE_POOL
            candidates.append(
                Candidate(
                    unit.path,
                    unit.start_line,
                    unit.end_line,
                    unit.text,
                    self.name,
                    min(hits.terms),  # the plan is sorted by weight: the best term
                    tuple(hits.lines),  # gathered in line order
                    score,
                    tuple(hits.terms),  # read as a set: any order
                    first[key],
                )
            )
        return candidates
