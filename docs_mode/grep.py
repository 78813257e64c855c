"""The grep route of docs mode: one rg pass → whole sections and definitions, BM25-ranked.

Every term of the question's plan goes to a single rg process over the repository's
documentation and code (the files listed once per ``file_list_ttl``). Each matched line
is attributed to the terms whose pattern it matches, then to the unit (section,
docstring or definition) that contains it. Units are first ranked by which terms they
contain (term weight × inverse unit frequency over the repository); the best ``pool``
are then scored by BM25 over their whole text, each term counted by its own pattern (so
a stemmed keyword counts every form rg matched) and weighted by the plan. Units outside
the pool follow in the first order: nothing is cut before fusion.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from docs_mode.profile import DocsProfile
from docs_mode.stem import stem
from docs_mode.units import SearchKind, UnitCache, unit_key
from greprag.config import Settings
from greprag.models import Candidate, Query, Skip
from greprag.rg import RgBinary, SearchSpec, find_rg, list_files, parse_size, search_words
from greprag.routes import QueryStats, RouteHits, RouteRequest

__all__ = ["SectionGrepRoute"]

MAX_LISTED_FILES = 6000  # beyond this the argv grows past what is safe to pass
BM25_K1 = 1.2
BM25_B = 0.75
OUTSIDE_POOL = 1e-3  # units past the pool keep their first-stage order, far below it


@dataclass
class _Term:
    index: int
    query: Query
    regex: re.Pattern[str]
    needle: str  # a substring every match contains (a cheap test before the regex)
    exact: bool  # the needle is case-sensitive


@dataclass
class _UnitHits:
    path: str
    start_line: int
    lines: set[int] = field(default_factory=set)
    terms: Counter[int] = field(default_factory=Counter)


def _needle(query: Query) -> tuple[str, bool]:
    """A literal every line the query matches contains, and whether case matters."""
    if query.purpose == "identifier":
        return query.identifier, True
    first = query.identifier.lower().replace("-", " ").split()
    word = first[0] if first else ""
    root = stem(word) if query.purpose != "phrase" and len(first) == 1 else word
    return (root[:-1] if root.endswith("y") else root), False


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
        units = self._units(hits_by_path, kind)
        candidates = self._rank(units, terms, len(searched), len(hits_by_path), kind)
        for term in terms:
            stats[term.index].kept = sum(1 for u in units.values() if term.index in u.terms)
        timings = {self.name: (time.perf_counter() - started) * 1000}
        return RouteHits(self.name, candidates, skipped, notes, stats, timings)

    def _matches(
        self, terms: list[_Term], files: list[str], stats: list[QueryStats]
    ) -> tuple[dict[str, list[tuple[int, list[int]]]], list[Skip]]:
        """One rg pass printing only what matched; each matched line with the terms found
        in it, per file. Longer patterns go first, so where two match at one place rg
        reports the longer text, and every term inside that text is credited. The files
        are rg's own listing (no symlinks); units are read through ``greprag.files``,
        which refuses any path that resolves outside the repository."""
        listed = len(files) <= MAX_LISTED_FILES
        patterns = sorted({t.query.pattern for t in terms}, key=lambda p: (-len(p), p))
        spec = SearchSpec(
            patterns=tuple(patterns),
            max_count_per_file=self.profile.max_count_per_file,
            max_filesize=self.max_filesize,
            paths=tuple(files) if listed else (),
        )
        wanted = set(files)
        found_in: dict[str, list[int]] = {}  # matched text → the terms it contains
        lines: dict[str, dict[int, set[int]]] = defaultdict(dict)
        binaries: set[str] = set()
        for item in search_words(self.rg, self.repo, spec, timeout=self.timeout):
            if isinstance(item, RgBinary):
                binaries.add(item.path)
                continue
            path, number, text = item
            if path not in wanted:
                continue
            matched = found_in.get(text)
            if matched is None:
                lowered = text.lower()
                matched = found_in[text] = [
                    t.index
                    for t in terms
                    if t.needle in (text if t.exact else lowered) and t.regex.search(text)
                ]
            if matched:
                at = lines[path]
                if number in at:
                    at[number].update(matched)
                else:
                    at[number] = set(matched)
        for path in binaries:
            lines.pop(path, None)
        by_path = {
            path: [(n, sorted(ts)) for n, ts in hits.items()] for path, hits in lines.items()
        }
        for hits in by_path.values():
            for _, matched in hits:
                for i in matched:
                    stats[i].hits += 1
            for i in {i for _, matched in hits for i in matched}:
                stats[i].files += 1
        return by_path, [Skip(p, "binary") for p in sorted(binaries)]

    def _units(
        self, hits_by_path: dict[str, list[tuple[int, list[int]]]], kind: SearchKind
    ) -> dict[tuple[str, int], _UnitHits]:
        """Matched lines gathered per unit; lines outside every unit are dropped."""
        units: dict[tuple[str, int], _UnitHits] = {}
        for path in sorted(hits_by_path):
            file_units = self.units.units(path, kind)
            for line, matched in hits_by_path[path]:
                unit = file_units.at(line)
                if unit is None:
                    continue
                key = unit_key(path, unit.start_line)
                hits = units.get(key)
                if hits is None:
                    hits = units[key] = _UnitHits(path, unit.start_line)
                hits.lines.add(line)
                hits.terms.update(matched)
        return units

    def _rank(
        self,
        units: dict[tuple[str, int], _UnitHits],
        terms: list[_Term],
        files_searched: int,
        files_hit: int,
        kind: SearchKind,
    ) -> list[Candidate]:
        """First by the terms each unit contains, then BM25 over the best ``pool``."""
        if not units:
            return []
        units_in_hit_files = sum(
            len(self.units.units(path, kind).units) for path in {u.path for u in units.values()}
        )
        total = max(len(units), units_in_hit_files * files_searched / max(files_hit, 1))
        df = Counter(i for u in units.values() for i in u.terms)
        idf = {
            t.index: math.log(1 + (total - df[t.index] + 0.5) / (df[t.index] + 0.5)) for t in terms
        }
        weight = {t.index: t.query.weight for t in terms}
        first = {key: sum(weight[i] * idf[i] for i in u.terms) for key, u in units.items()}
        order = sorted(units, key=lambda key: (-first[key], key))
        pool = order[: self.profile.pool]
        sections = {key: self.units.units(key[0], kind).at(key[1]) for key in pool}
        texts = {key: s.text if s is not None else "" for key, s in sections.items()}
        lengths = {key: max(1, len(text.split())) for key, text in texts.items()}
        average = sum(lengths.values()) / len(lengths)
        by_index = {t.index: t for t in terms}
        scores: dict[tuple[str, int], float] = {}
        for key in pool:
            score = 0.0
            norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[key] / average)
            for i in units[key].terms:
                tf = len(by_index[i].regex.findall(texts[key]))
                score += weight[i] * idf[i] * tf * (BM25_K1 + 1) / (tf + norm)
            scores[key] = score
        for key in order[self.profile.pool :]:
            scores[key] = first[key] * OUTSIDE_POOL
        ranked = sorted(pool, key=lambda key: (-scores[key], key)) + order[self.profile.pool :]
        candidates = []
        for key in ranked:
            hits = units[key]
            unit = sections.get(key) or self.units.units(key[0], kind).at(key[1])
            if unit is None:
                continue
            best = max(hits.terms, key=lambda i: (weight[i], -i))
            candidates.append(
                Candidate(
                    path=hits.path,
                    start_line=unit.start_line,
                    end_line=unit.end_line,
                    text=unit.text,
                    route=self.name,
                    query_index=best,
                    match_lines=tuple(sorted(hits.lines)),
                    score=round(scores[key], 6),
                    queries=tuple(sorted(hits.terms)),
                    prior=round(first[key], 6),
                )
            )
        return candidates
