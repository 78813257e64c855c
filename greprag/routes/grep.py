"""The grep route: one batched rg pass for a query plan → candidates, skips and stats.

All queries of a language go to a single rg process (each pattern after ``-e``); each
matched line is then attributed to the queries whose pattern it matches. That scans the
repository once instead of ten times. Queries limited to some files (every definition
of an imported module, in that module) run in other processes over those files alone,
so that their matches neither flood the output nor use up rg's per-file line cap (the
module probes of every top-level name in one, the rest in another); over a few files of
plain text they are matched in-process instead, line by line as rg would. A
query that floods (hits in too many files) is narrowed to its hits in files that other
queries also hit, or dropped.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import subprocess
import time
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate, groupby
from pathlib import Path
from typing import NamedTuple

from greprag.config import Settings
from greprag.context import untyped_receiver
from greprag.cursor_file import CursorFile
from greprag.errors import SearchError
from greprag.files import FileCache, LinesMemo, file_text, inside
from greprag.languages import get_language
from greprag.matching import LineMatcher, NamesMatcher, as_rg_reads, top_level_branches
from greprag.models import Candidate, Query, QueryPlan, Skip, folder_entry
from greprag.rg import (
    RgMatch,
    RgOutput,
    SearchSpec,
    build_argv,
    collect,
    collect_plain,
    files_argv,
    find_rg,
    list_files,
    parse_file_list,
    parse_size,
    pattern_error,
    spawn,
    wait_for,
)
from greprag.rg import rg_pattern as rg_regex
from greprag.router.names import external_names
from greprag.router.probes import ANY_NAME, binding_probes, receiver_types, type_probes
from greprag.routes import QueryStats, RouteHits, RouteRequest
from greprag.routes.bases import ClassSite, RepoFiles, inherited_bases, site_probe
from greprag.routes.fields import inherited_field_types
from greprag.routes.members import classes_of_members
from greprag.routes.returns import returned_classes

# purposes of queries built from GrepRAG's own templates (identifiers escaped), matched
# without a time budget; any other purpose (``llm``, a custom router's) keeps one
TEMPLATE_PURPOSES = frozenset({"definition", "usage", "wildcard", "import", "second hop"})
MAX_LISTED_FILES = 6000  # beyond this the argv grows past what is safe to pass
MAX_HITS_PER_QUERY = 200
OWN_FILE = "own file"  # the rg process of probes limited to the cursor's own file
# rg reads the cursor's whole file for them: the lines above the cursor would otherwise
# use up the per-file cap before its members below, the ones the prompt does not show
OWN_FILE_MAX_COUNT = 5000
OWN_FILE_HITS = 15  # per query, its nearest lines below the cursor in the cursor's file
MAX_FILES_HERE = 4  # limited queries over at most this many files are matched in-process
SECOND_HOP_TYPES = 3  # receiver types a second hop probes
SECOND_HOP_WEIGHT = 0.9  # their probes' weight (a definition probe of the cursor's own type: 1.0)
BASE_WEIGHT = 0.8  # probes of the bases of a class the first pass found (routes.bases)
BOUND_DEMOTION = 0.6  # the prior left to the receiver's bindings once its type is probed


@dataclass
class _Compiled:
    """A query ready for attribution. ``needles``: strings one of which every line it
    matches contains (None: unknown); ``lead``: the same for the keywords a definition
    template opens on; ``spaced``: a name that whitespace precedes on every line it
    matches. Trusted patterns compile on first use."""

    index: int
    query: Query
    needles: tuple[str, ...] | None
    trusted: bool
    lead: tuple[str, ...] = ()
    spaced: str = ""
    _matcher: LineMatcher | NamesMatcher | None = None
    failed: bool = False

    @property
    def matcher(self) -> LineMatcher | NamesMatcher | None:
        if self._matcher is None and not self.failed:
            q = self.query
            if q.purpose == "import" and not q.fixed and q.identifier not in ("", ANY_NAME):
                self._matcher = NamesMatcher.compile(q.pattern, q.identifier.split(","))
            if self._matcher is None:
                self._matcher = LineMatcher.compile(q.pattern, fixed=q.fixed, trusted=self.trusted)
            self.failed = self._matcher is None
        return self._matcher

    def search(self, text: str) -> bool:
        matcher = self.matcher
        return matcher is not None and matcher.search(text)

    def pattern_shown(self) -> str:
        return repr(self.query.pattern[:60])


def rg_pattern(query: Query) -> str:
    """The query as a ripgrep regex (``greprag.rg.rg_pattern``)."""
    return rg_regex(query.pattern, fixed=query.fixed, template=query.purpose in TEMPLATE_PURPOSES)


def _needles(query: Query) -> tuple[str, ...] | None:
    """Strings one of which is on every line ``query`` matches, or None when unknown."""
    if query.fixed:
        return (query.pattern,)
    if query.purpose == "import":
        names = tuple(query.identifier.split(",")) if query.identifier else ()
        if names and all(n.isidentifier() and n in query.pattern for n in names):
            return names  # the import template's alternation of the names
        return None
    if (
        query.identifier
        and query.identifier in query.pattern
        and (query.purpose != "llm" or "|" not in query.pattern)
    ):
        return (query.identifier,)  # the offline router's templates all contain it
    return None


# a template opening on keywords and whitespace: ``\b(class|interface)\s+``, ``^\s*class\s+``
_KEYWORD_LEAD = re.compile(r"(?:\\b|\^\\s\*)(?:\(((?:@?\w+\|)*@?\w+)\)|(\w+))\\s\+")


def _guards(query: Query) -> tuple[tuple[str, ...], str]:
    r"""What is on every line a template query of one branch matches, besides its needle:
    one of the keywords it opens on (``\b(class|interface)\s+Name``), and whitespace
    before its identifier where ``\s+Name`` stands outside any group; ``()`` and ``""``
    where the pattern promises neither."""
    if query.purpose not in TEMPLATE_PURPOSES or query.fixed:
        return (), ""
    pattern, name = query.pattern, query.identifier
    opening = _KEYWORD_LEAD.match(pattern)
    at = pattern.find(r"\s+" + name) if name.isidentifier() else -1
    if (opening is None and at < 0) or top_level_branches(pattern) != [pattern]:
        return (), ""
    lead: tuple[str, ...] = ()
    if opening is not None:
        keywords = opening.group(1) or opening.group(2)
        lead = tuple(dict.fromkeys(word.lstrip("@") for word in keywords.split("|")))
    # a branch cut there is a top-level one only outside every group and class
    cut = top_level_branches(pattern[:at] + "|" + pattern[at:]) if at >= 0 else None
    return lead, name if cut is not None and len(cut) == 2 else ""


def _compile(index: int, query: Query) -> _Compiled | None:
    """The query for attribution; None when Python's regex engine cannot read it (an
    untrusted pattern is compiled at once to tell; a template's on first use)."""
    trusted = query.purpose in TEMPLATE_PURPOSES
    compiled = _Compiled(index, query, _needles(query), trusted, *_guards(query))
    if not compiled.trusted and compiled.matcher is None:
        return None
    return compiled


_MATCHED_HERE = LinesMemo(512)  # per file content, patterns and cap, across retrievals
_LINE_STARTS = LinesMemo(64)  # the files limited probes search: the same few


def _matched_here(
    members: list[_Compiled], files: dict[str, tuple[str, ...]], cap: int
) -> list[RgMatch]:
    """What rg prints for ``members`` over ``files`` (``GrepRoute._here``): each line one
    of them matches, the first ``cap`` of a file (``--max-count``). Remembered per file
    content: a module's probe of every name is the same in every retrieval."""
    key = (tuple(rg_pattern(c.query) for c in members), cap)
    matches: list[RgMatch] = []
    for path, lines in files.items():
        numbers = _MATCHED_HERE.get(lines, key, lambda lines=lines: _matching(members, lines, cap))
        matches += [RgMatch(path, n, lines[n - 1]) for n in numbers]
    return matches


def _matching(members: list[_Compiled], lines: Sequence[str], cap: int) -> tuple[int, ...]:
    """The numbers of the first ``cap`` of ``lines`` one of ``members`` matches; only
    the lines holding a needle are tried when every member has needles."""
    distinct = list({rg_pattern(c.query): c for c in members}.values())
    needles = [n for c in distinct for n in c.needles or ()]
    if all(c.needles for c in distinct):
        tried: Iterable[int] = _holding(lines, needles)
    else:
        tried = range(1, len(lines) + 1)
    regexes = [as_rg_reads(rg_pattern(c.query)) for c in distinct]  # ``_here`` read them all
    searches = [regex.search for regex in regexes if regex is not None]
    found: list[int] = []
    for number in tried:
        line = lines[number - 1]
        if any(search(line) for search in searches):
            found.append(number)
            if len(found) >= cap:
                break
    return tuple(found)


def _holding(lines: Sequence[str], needles: list[str]) -> list[int]:
    """The numbers of the lines holding one of ``needles``, ascending (found in the
    file's text, a line number per occurrence by bisection)."""
    text = file_text(lines)
    starts = _LINE_STARTS.get(
        lines, "starts", lambda: list(accumulate((len(line) + 1 for line in lines), initial=0))
    )
    numbers: set[int] = set()
    for needle in dict.fromkeys(needles):
        at = text.find(needle)
        while at >= 0:
            numbers.add(bisect_right(starts, at))
            at = text.find(needle, at + 1)
    return sorted(numbers)


def _group(query: Query) -> str | None:
    """The rg process a query runs in: one per known language, one for the rest."""
    return query.lang if get_language(query.lang) else None


def _limit(query: Query, own: str | None) -> str:
    """The rg process of a query by the files it runs over: all, or those of the queries
    limited to named definitions, or those of the module probes of every top-level name,
    or the cursor's own file (``own``) alone. The module probes match dozens of lines
    per file, so with the others they would use up rg's per-file line cap before another
    module's class (pytest's ``class Config:``)."""
    if not query.paths:
        return ""
    if own is not None and query.paths == (own,):
        return OWN_FILE
    return "every name" if query.identifier == ANY_NAME else "names"


def _possible(compiled: list[_Compiled], text: str) -> list[_Compiled]:
    """The queries that could match in ``text``: one of their needles is in it, and one
    of their lead keywords, and their spaced name after whitespace. Cheaper than a
    regex: most lines holding a class's name only use it."""
    found = []
    for c in compiled:  # called per matched line: a loop, not a generator per query
        needles = c.needles
        if needles is None:
            found.append(c)
            continue
        for needle in needles:
            if needle in text:
                break
        else:
            continue
        if c.lead and not any(word in text for word in c.lead):
            continue
        if c.spaced and not _after_space(text, c.spaced):
            continue
        found.append(c)
    return found


def _after_space(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` right after a whitespace character (any that
    rg's Unicode whitespace class matches: ``str.isspace`` holds for all of them)."""
    at = text.find(name, 1)
    while at > 0:
        if text[at - 1].isspace():
            return True
        at = text.find(name, at + 1)
    return False


def _attribute(compiled: list[_Compiled], text: str, complete: bool) -> list[_Compiled]:
    """The queries whose pattern matches ``text``, a line rg matched; ``compiled`` may be
    narrowed to the queries possible anywhere in the line's file. ``complete``: every
    query of the rg process that matched the line is in ``compiled``.

    When the process's queries are all here and only one can match the line at all (its
    needle is there, no other query's is), rg already said it does: no regex runs.
    Otherwise each candidate's pattern is checked in Python.
    """
    possible = _possible(compiled, text)
    if complete and len(possible) == 1:
        return possible
    return [c for c in possible if c.search(text)]


def _nearest_own(hits: list[RgMatch], own: str | None) -> list[RgMatch]:
    """``hits`` with at most ``OWN_FILE_HITS`` in the cursor's own file (``own``): the
    first of them, the nearest below the cursor once the lines above are left out."""
    if own is None or len(hits) <= OWN_FILE_HITS:
        return hits  # nothing to cut: most queries, on every retrieval
    kept, seen = [], 0
    for match in hits:
        if match.path == own:
            seen += 1
            if seen > OWN_FILE_HITS:
                continue
        kept.append(match)
    return kept


class _Probe(NamedTuple):
    """An rg -l over oversize ``files`` with ``patterns``, running."""

    files: tuple[str, ...]
    patterns: tuple[str, ...]
    proc: subprocess.Popen[bytes]


class _Group(NamedTuple):
    """One group of a pass's queries, started: its rg process, or (``proc`` None) the
    lines of the few plain files it is matched over in-process (``here``)."""

    lang: str | None
    paths: tuple[str, ...] | None  # None: every file of the language
    members: list[_Compiled]
    patterns: list[str]
    cap: int
    proc: subprocess.Popen[bytes] | None
    here: dict[str, tuple[str, ...]] | None


class _Listing(NamedTuple):
    """A language's file list (oversize files left out), when it was made, as a set."""

    at: float  # time.monotonic()
    files: list[str]
    names: frozenset[str]


@dataclass
class _Search:
    """One rg process: the queries it ran, and what it matched (sorted by path and line).
    ``limited``: it ran only over the files its queries are limited to, each query's own
    among them."""

    compiled: list[_Compiled]
    matches: list[RgMatch]
    limited: bool = False


class GrepRoute:
    """rg → candidate windows around matched lines."""

    name = "grep"

    def __init__(
        self,
        repo: Path,
        *,
        rg_path: str | None = None,
        max_filesize: str = "1M",
        max_line_chars: int = 400,
        max_count_per_file: int = 30,
        flood_files: int = 40,
        max_candidates: int = 400,
        timeout: float = 20.0,
        file_list_ttl: float = 5.0,
    ) -> None:
        self.repo = repo
        self.rg = find_rg(rg_path)
        self.max_filesize = max_filesize
        self.max_line_chars = max_line_chars
        self.max_count_per_file = max_count_per_file
        self.flood_files = flood_files
        self.max_candidates = max_candidates
        self.timeout = timeout
        self._oversize: dict[str | None, list[str]] = {}
        self.file_list_ttl = file_list_ttl
        self._file_lists: dict[str | None, _Listing] = {}
        self._listed: set[str] = set()  # every file of a cached list, oversize ones included
        self._epoch = 0  # bumped by invalidate: a listing begun before it is not kept

    @classmethod
    def from_settings(cls, repo: Path, settings: Settings) -> GrepRoute:
        return cls(
            repo,
            rg_path=settings.rg_path or None,
            max_filesize=settings.max_filesize,
            max_line_chars=settings.max_line_chars,
            max_count_per_file=settings.max_count_per_file,
            flood_files=settings.flood_files,
            max_candidates=settings.max_candidates,
            file_list_ttl=settings.file_list_ttl,
        )

    def search(self, request: RouteRequest) -> RouteHits:
        """Run the request's plan, then its second hop, then join the classes the imports
        locate (``_located``); candidates come back in plan priority order (not yet
        re-ranked). The last two append their probes to ``request.plan`` (so candidates,
        stats and ``Result.queries`` stay aligned)."""
        started = time.perf_counter()
        hits = self._pass(request)
        hits.candidates = _stand_ins(hits.candidates, request, hits.stats)
        where = RepoFiles(self.repo, self.file_set(request.ctx.lang, list_now=False))
        hits = self._second_hop(request, hits, where)
        hits = self._located(request, hits, where)
        hits.timings[self.name] = (time.perf_counter() - started) * 1000
        return hits

    def _second_hop(self, request: RouteRequest, hits: RouteHits, where: RepoFiles) -> RouteHits:
        """``x.`` at the cursor with x's type unnamed: the type a base of the enclosing
        class declares x as (``routes.fields``, no search), else read x's assignments
        elsewhere (``self.x = Loader(...)``, ``x: Loader``) off the first pass and probe
        those types."""
        ctx, plan = request.ctx, request.plan
        if inherited := inherited_field_types(ctx, request.files.get, where):
            hits.candidates = _demote_bindings(hits.candidates, plan, untyped_receiver(ctx))
            return self._join(request, hits, inherited, SECOND_HOP_WEIGHT)
        externals = external_names(ctx, set(request.imported))
        types = receiver_types(ctx, plan, hits.candidates, request.files.get, externals)
        if not types:
            return hits
        extra = type_probes(ctx.lang, types[:SECOND_HOP_TYPES], weight=SECOND_HOP_WEIGHT)
        hits.candidates = _demote_bindings(hits.candidates, plan, untyped_receiver(ctx))
        more = self._pass(
            RouteRequest(
                QueryPlan(queries=extra, router=plan.router),
                ctx,
                request.files,
                current=request.current,
                cursor_line=request.cursor_line,
                rg_threads=request.rg_threads,
            )
        )
        return _appended(hits, plan, extra, more)

    def _located(self, request: RouteRequest, hits: RouteHits, where: RepoFiles) -> RouteHits:
        """On a member access, classes whose files the imports give away, so that they
        join without a search: the class the receiver's factory returns
        (``routes.returns``) and the classes defining the methods the code calls on the
        receiver (``routes.members``), then the in-repo bases of the classes found so far, where
        an inherited member is defined (``routes.bases``). Their probes, limited to
        those files, stand in the plan for what was found."""
        ctx, plan, files = request.ctx, request.plan, request.files
        returned = returned_classes(ctx, plan, hits.candidates, files.get, where)
        seen_with = classes_of_members(ctx, plan, hits.candidates, files.get)
        typed = returned + [s for s in seen_with if s not in returned]
        hits = self._join(request, hits, typed, SECOND_HOP_WEIGHT)
        bases = inherited_bases(ctx, plan, hits.candidates, files.get, where)
        return self._join(request, hits, bases, BASE_WEIGHT)

    def _join(
        self, request: RouteRequest, hits: RouteHits, sites: list[ClassSite], weight: float
    ) -> RouteHits:
        """``hits`` with the class headers at ``sites`` as the hits of their probes."""
        files = request.files
        found = [
            s for s in sites if files.allowed(s.path) and request.current.admits(s.path, s.line)
        ]
        if not found:
            return hits
        extra = [site_probe(s, request.ctx.lang, weight) for s in found]
        kept = {
            i: [RgMatch(s.path, s.line, files.get(s.path)[s.line - 1])] for i, s in enumerate(found)
        }
        stats = [QueryStats(index=i, hits=1, files=1, kept=1) for i in range(len(found))]
        more = RouteHits(
            self.name,
            self._windows(QueryPlan(queries=extra), kept, files, request.current),
            stats=stats,
        )
        return _appended(hits, request.plan, extra, more)

    def _pass(self, request: RouteRequest) -> RouteHits:
        """One rg pass over the request's plan."""
        plan, files = request.plan, request.files
        current = request.current
        compiled = [c for i, q in enumerate(plan.queries) if (c := _compile(i, q)) is not None]
        stats = [QueryStats(index=i) for i in range(len(plan.queries))]
        for i in range(len(plan.queries)):
            if not any(c.index == i for c in compiled):
                stats[i].note = "pattern rejected by the regex engine"
        own = current.path
        searches, skipped, rejected = self._run(compiled, request.rg_threads, own, files)
        notes = []
        for c in compiled:
            reason = rejected.get(rg_pattern(c.query))
            if reason:
                stats[c.index].note = f"rejected by rg: {reason}"
                notes.append(f"query {c.pattern_shown()} rejected by rg: {reason}")
        hits_by_query: dict[int, list[RgMatch]] = defaultdict(list)
        minified: set[str] = set()
        for search in searches:
            ran = [c for c in search.compiled if rg_pattern(c.query) not in rejected]
            for path, in_file in groupby(search.matches, key=lambda m: m.path):
                kept: list[RgMatch] = []
                for match in in_file:
                    if not current.admits(path, match.line_number):
                        continue
                    if len(match.text) > self.max_line_chars:
                        minified.add(path)
                        continue
                    kept.append(match)
                # the queries that can match anything here: often one, and then no line
                # is checked one by one
                mine = [c for c in ran if c.query.limits_to(path)] if search.limited else ran
                complete = len(mine) == len(ran)  # else a line may be another file's query's
                here = _possible(mine, "\n".join(m.text for m in kept))
                if complete and len(here) == 1:
                    hits_by_query[here[0].index] += kept
                    continue
                for match in kept:
                    for c in _attribute(here, match.text, complete):
                        hits_by_query[c.index].append(match)
        skipped += [
            Skip(p, f"minified line (over {self.max_line_chars} chars)") for p in sorted(minified)
        ]
        for c in compiled:
            if c.failed:
                stats[c.index].note = "pattern rejected by the regex engine"
            elif c._matcher is not None and c._matcher.exhausted:
                stats[c.index].note = "regex over its time budget: stopped matching it"
                notes.append(f"query {c.pattern_shown()} stopped: regex over its time budget")
        for index, hits in hits_by_query.items():  # the nearest lines below the cursor
            hits_by_query[index] = _nearest_own(hits, own)
        kept = self._narrow(hits_by_query, stats, own)
        unread: set[str] = set()
        candidates = self._windows(plan, kept, files, current, unread)
        # rg follows listed symlinks; reads never pass the root (``FileStore``), so only a
        # file that gave no lines is checked: a stat per hit file cost jdk17 3 ms
        outside = sorted(p for p in unread if not files.allowed(p))
        skipped += [Skip(p, "resolves outside the repository") for p in outside]
        return RouteHits(self.name, candidates, skipped=skipped, notes=notes, stats=stats)

    def _popen(self, argv: list[str], stderr: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
        return spawn(argv, self.repo, stderr=stderr)

    def _listed_files(self, lang: str | None) -> list[str] | None:
        """The language's file list if listed within ``file_list_ttl`` and small enough.

        Passing files to rg skips its directory walk, which on a wheel full of locale
        folders costs more than the search. Edits are seen at once (rg reads the files);
        new files within ``file_list_ttl`` seconds.
        """
        listed = self.fresh_files(lang)
        return listed if listed and len(listed) <= MAX_LISTED_FILES else None

    def fresh_files(self, lang: str | None) -> list[str] | None:
        """The language's file list when listed within ``file_list_ttl``, else None."""
        listing = self._fresh(lang)
        return None if listing is None else listing.files

    def files(self, lang: str | None) -> list[str]:
        """The language's files (``.gitignore`` respected, oversize ones left out), listed
        again only when older than ``file_list_ttl``."""
        return self._listing(lang).files

    def file_set(self, lang: str | None, *, list_now: bool = True) -> frozenset[str] | None:
        """``files(lang)`` as a set, made once per listing; with ``list_now`` False, None
        unless listed within ``file_list_ttl`` (as ``fresh_files``)."""
        listing = self._listing(lang) if list_now else self._fresh(lang)
        return None if listing is None else listing.names

    def _fresh(self, lang: str | None) -> _Listing | None:
        cached = self._file_lists.get(lang)
        if cached is None or time.monotonic() - cached.at > self.file_list_ttl:
            return None
        return cached

    def _listing(self, lang: str | None) -> _Listing:
        found = self._fresh(lang)
        if found is None:
            listed = list_files(self.rg, self.repo, (lang,) if lang else (), self.timeout)
            found = self._remember_files(lang, listed)
        return found

    def invalidate(self, paths: Iterable[str] | None = None) -> None:
        """Forget the cached file lists that ``paths`` (repo-relative, changed on disk) may
        alter: all of them when None, or when a path was added, removed or crossed the size
        limit. An edit to a listed file keeps the lists (rg reads files at search time)."""
        if paths is None or any(self._alters_lists(path) for path in paths):
            self._epoch += 1
            self._file_lists.clear()
            self._oversize.clear()
            self._listed.clear()

    def _alters_lists(self, path: str) -> bool:
        try:
            size = (self.repo / path).stat().st_size
        except OSError:
            return path in self._listed  # removed (or renamed away)
        if path not in self._listed:
            return True  # new, or never listed (a relist is then harmless)
        oversize = any(path in big for big in self._oversize.values())
        return (size > parse_size(self.max_filesize)) != oversize

    def _remember_files(self, lang: str | None, files: list[str]) -> _Listing:
        """Keep a language's file list, and which of its files are over the size limit;
        the listing kept."""
        limit = parse_size(self.max_filesize)
        big = []
        for path in files:
            try:
                if (self.repo / path).stat().st_size > limit:
                    big.append(path)
            except OSError:
                continue
        oversize = set(big)  # rg searches explicit paths whatever their size: leave them out
        kept = [f for f in files if f not in oversize]
        listing = self._file_lists[lang] = _Listing(time.monotonic(), kept, frozenset(kept))
        self._oversize[lang] = big
        lists = [listing.files for listing in self._file_lists.values()]
        self._listed = {f for listed in lists + list(self._oversize.values()) for f in listed}
        return listing

    def _oversize_files(self, langs: list[str | None]) -> tuple[str, ...]:
        """The languages' files over the size limit, as the listings know them."""
        return tuple(sorted({path for lang in langs for path in self._oversize.get(lang, ())}))

    def _start_oversize(self, langs: list[str | None], patterns: list[str]) -> _Probe | None:
        """rg -l with ``patterns`` over the languages' oversize files (rg searches explicit
        paths whatever their size, so they are left out of the search and probed alone);
        None when none is known."""
        big = self._oversize_files(langs)
        if not big or not patterns:
            return None
        argv = [str(self.rg), "--no-config", "--no-messages", "--no-unicode", "-l", "--null"]
        for pattern in patterns:
            argv += ["-e", pattern]
        return _Probe(big, tuple(patterns), self._popen([*argv, "--", *big]))

    def _oversize_skips(
        self, langs: list[str | None], patterns: list[str], probe: _Probe | None
    ) -> list[Skip]:
        """Oversize files that match ``patterns``: the answer of ``probe`` (started beside
        the search) when it ran them over the oversize files known now, else a new one's.
        A probe past the timeout reports none: the search's own answer stands."""
        known = (self._oversize_files(langs), tuple(patterns))
        if probe is None or (probe.files, probe.patterns) != known:
            if probe is not None:  # a pattern was rejected, or the listing changed
                probe.proc.kill()
                probe.proc.communicate()
            probe = self._start_oversize(langs, patterns)
            if probe is None:
                return []
        try:
            out, _ = wait_for(probe.proc, self.timeout, "rg -l")
        except SearchError:
            return []
        reason = f"too large (over {self.max_filesize})"
        return [Skip(path, reason) for path in sorted(set(parse_file_list(out)))]

    def _run(
        self,
        compiled: list[_Compiled],
        threads: int = 0,
        own: str | None = None,
        files: FileCache | None = None,
    ) -> tuple[list[_Search], list[Skip], dict[str, str]]:
        """The queries in one rg process per language, and the queries limited to some
        files in others, run over those files alone (a probe of every definition in one
        module would otherwise match in every file): each process's matches, the skips,
        and the patterns rg rejected with its reasons (the rest still ran). ``threads``:
        each process's (0: rg's default); ``own``: the cursor's file (see ``_limit``).
        Limited queries over a few plain files (``files``) are matched here, as rg would
        (``_here``), while the processes run: a process costs more than such a search."""
        groups: dict[tuple[str | None, str], list[_Compiled]] = defaultdict(list)
        for c in compiled:
            groups[(_group(c.query), _limit(c.query, own))].append(c)
        langs = list(dict.fromkeys(lang for lang, _ in groups))
        started: list[_Group] = []
        epoch = self._epoch
        refreshes: list[tuple[str | None, subprocess.Popen[bytes]]] = []
        for lang in langs:
            if self._listed_files(lang) is None:  # walk this time; list files for next time
                refreshes.append((lang, self._popen(files_argv(self.rg, (lang,) if lang else ()))))
        for (lang, limited), members in groups.items():
            wanted = sorted({p for c in members for p in c.query.paths}) if limited else None
            paths = self._searchable(lang, tuple(wanted)) if wanted is not None else None
            if paths == ():
                continue  # none of those files can be searched: nothing to match
            patterns = list(dict.fromkeys(rg_pattern(c.query) for c in members))
            cap = OWN_FILE_MAX_COUNT if limited == OWN_FILE else self.max_count_per_file
            here = self._here(members, paths, files)
            proc = (
                None if here else self._start(lang, patterns, paths, threads=threads, max_count=cap)
            )
            started.append(_Group(lang, paths, members, patterns, cap, proc, here))
        every = list(dict.fromkeys(p for group in started for p in group.patterns))
        probe = self._start_oversize(langs, every)  # beside the search, not after it
        # matched here while the processes run, before any of their output is read
        done_here = [_matched_here(g.members, g.here, g.cap) if g.here else [] for g in started]
        searches: list[_Search] = []
        skipped: dict[str, Skip] = {}
        rejected: dict[str, str] = {}
        for group, here_matches in zip(started, done_here, strict=True):
            lang, paths, members, patterns, cap, proc, _ = group
            if proc is None:
                searches.append(_Search(members, here_matches, limited=True))
                continue
            output = self._finish(lang, patterns, proc, rejected, paths, max_count=cap)
            binaries = set(output.binaries)
            matches = [m for m in output.matches if m.path not in binaries]
            matches.sort(key=lambda m: (m.path, m.line_number))  # rg's file order varies
            searches.append(_Search(members, matches, limited=paths is not None))
            for skip in [*output.skipped, *(Skip(p, "binary") for p in sorted(binaries))]:
                skipped.setdefault(skip.path, skip)
        for lang, proc in refreshes:
            try:
                out, _ = wait_for(proc, self.timeout, "rg --files")
            except SearchError:
                continue  # the listing only saves the next search a walk: it walks again
            if proc.returncode == 0 and epoch == self._epoch:
                self._remember_files(lang, parse_file_list(out))
        kept = [p for p in every if p not in rejected]
        oversize = self._oversize_skips(langs, kept, probe)
        return searches, [*skipped.values(), *oversize], rejected

    def _here(
        self, members: list[_Compiled], paths: tuple[str, ...] | None, files: FileCache | None
    ) -> dict[str, tuple[str, ...]] | None:
        """The lines of ``paths`` when ``members`` can be matched here exactly as rg
        would: a few files of plain text within the size limit (``FileCache.plain``), and
        GrepRAG's own ASCII templates (``matching.as_rg_reads``); else None (always for
        a search of every file, ``paths`` None)."""
        if files is None or not paths or len(paths) > MAX_FILES_HERE:
            return None
        if not all(c.trusted and as_rg_reads(rg_pattern(c.query)) for c in members):
            return None
        limit = parse_size(self.max_filesize)
        found = {}
        for path in paths:
            lines = files.plain(path, limit)
            if lines is None:
                return None
            found[path] = lines
        return found

    def _searchable(self, lang: str | None, paths: tuple[str, ...]) -> tuple[str, ...]:
        """Those of ``paths`` the language's search would read (a folder, ``dir/``: the
        files directly in it): listed files when the list is fresh, else existing files
        of the language within the size limit."""
        known = self.file_set(lang, list_now=False)
        folders = {p for p in paths if p.endswith("/")}
        if known is not None:
            inside = sorted(f for f in known if folder_entry(f) in folders) if folders else []
            return tuple(dict.fromkeys([*(p for p in paths if p in known), *inside]))
        language = get_language(lang) if lang else None
        limit = parse_size(self.max_filesize)
        found = []
        for path in [*(p for p in paths if p not in folders), *self._folder_files(folders)]:
            if language is not None and not path.endswith(language.extensions):
                continue
            try:
                if (self.repo / path).stat().st_size <= limit:
                    found.append(path)
            except OSError:
                continue
        return tuple(found)

    def _folder_files(self, folders: set[str]) -> list[str]:
        """The files directly in each of ``folders`` (``dir/``), in name order; a folder
        outside the repository (by its name, or a link out of it), or none, gives nothing."""
        found: list[str] = []
        for folder in sorted(folders):
            relative = posixpath.normpath(folder)
            where = self.repo if relative == "." else inside(self.repo, relative)
            if where is None:
                continue
            with contextlib.suppress(OSError):
                names = sorted(e.name for e in os.scandir(where) if e.is_file())
                found += [n if relative == "." else f"{relative}/{n}" for n in names]
        return found

    def _start(
        self,
        lang: str | None,
        patterns: list[str],
        paths: tuple[str, ...] | None = None,
        *,
        json_output: bool = False,
        threads: int = 0,
        max_count: int | None = None,
    ) -> subprocess.Popen[bytes]:
        """rg over ``paths``, or over the language's files (listed, or walked), at most
        ``max_count`` matching lines per file (default: the route's)."""
        spec = SearchSpec(
            patterns=tuple(patterns),
            langs=(lang,) if lang else (),
            max_count_per_file=max_count or self.max_count_per_file,
            max_filesize=self.max_filesize,
            threads=threads,
            paths=paths if paths is not None else tuple(self._listed_files(lang) or ()),
        )
        argv = build_argv(self.rg, spec, json_output=json_output)
        return self._popen(argv, stderr=subprocess.PIPE)

    def _finish(
        self,
        lang: str | None,
        patterns: list[str],
        proc: subprocess.Popen[bytes],
        rejected: dict[str, str],
        paths: tuple[str, ...] | None = None,
        *,
        json_output: bool = False,
        max_count: int | None = None,
    ) -> RgOutput:
        """One search's output. A plain search that reported errors runs again with
        ``--json`` (per-file errors become skips). When rg refused to run at all, each
        pattern is put to rg's own parser; the ones it rejects go into ``rejected`` and
        the rest run again (``max_count``: as the search ran)."""
        out, err = wait_for(proc, self.timeout)
        again_with = {"json_output": True, "max_count": max_count}
        if not json_output:
            if proc.returncode in (0, 1):
                return collect_plain(out)
            again = self._start(lang, patterns, paths, **again_with)
            return self._finish(lang, patterns, again, rejected, paths, **again_with)
        try:
            return collect(out, err, proc.returncode)
        except SearchError:
            bad = {p: reason for p in patterns if (reason := pattern_error(self.rg, p))}
            if not bad:
                raise
            rejected.update(bad)
            left = [p for p in patterns if p not in bad]
            if not left:
                return RgOutput()
            again = self._start(lang, left, paths, **again_with)
            return self._finish(lang, left, again, rejected, paths, **again_with)

    def _narrow(
        self, hits_by_query: dict[int, list[RgMatch]], stats: list[QueryStats], own: str | None
    ) -> dict[int, list[RgMatch]]:
        """Cap each query; a query hitting too many files keeps only co-hit files and the
        cursor's own (``own``)."""
        files_by_query = {i: {m.path for m in hits} for i, hits in hits_by_query.items()}
        focused: set[str] = {own} if own else set()
        for paths in files_by_query.values():
            if len(paths) <= self.flood_files:
                focused |= paths
        kept: dict[int, list[RgMatch]] = {}
        for i, hits in hits_by_query.items():
            stats[i].hits = len(hits)
            stats[i].files = len(files_by_query[i])
            if stats[i].files > self.flood_files:
                hits = [m for m in hits if m.path in focused]
                stats[
                    i
                ].note = f"flooded ({stats[i].files} files): narrowed to files other queries hit"
            if len(hits) > MAX_HITS_PER_QUERY:
                hits = hits[:MAX_HITS_PER_QUERY]
                stats[i].note = (stats[i].note + "; " if stats[i].note else "") + (
                    f"capped at {MAX_HITS_PER_QUERY} hits"
                )
            kept[i] = hits
            stats[i].kept = len(hits)
        return kept

    def _windows(
        self,
        plan: QueryPlan,
        kept: dict[int, list[RgMatch]],
        files: FileCache,
        current: CursorFile,
        unread: set[str] | None = None,
    ) -> list[Candidate]:
        """One candidate per matched line: the line with its context, best query first;
        the paths that gave no lines (outside the root, gone) go into ``unread``."""
        by_line: dict[tuple[str, int], list[int]] = defaultdict(list)
        for i in sorted(kept, key=lambda i: -plan.queries[i].weight):
            for m in kept[i]:
                by_line[(m.path, m.line_number)].append(i)
        ordered = sorted(
            by_line.items(), key=lambda kv: -max(plan.queries[i].weight for i in kv[1])
        )
        candidates: list[Candidate] = []
        for (path, line), indices in ordered[: self.max_candidates]:
            best = max(indices, key=lambda i: plan.queries[i].weight)
            radius = plan.queries[best].context_lines
            lines = files.get(path)
            if not lines and unread is not None:
                unread.add(path)
            start, end = current.clip(
                path, max(1, line - radius), min(len(lines), line + radius), line
            )
            if end < start:
                continue
            candidates.append(
                Candidate(
                    path=path,
                    start_line=start,
                    end_line=end,
                    text="\n".join(lines[start - 1 : end]),
                    route=self.name,
                    query_index=best,
                    match_lines=(line,),
                    queries=tuple(sorted(set(indices))),
                    prior=plan.queries[best].weight,
                )
            )
        return candidates


def _stand_ins(
    candidates: list[Candidate], request: RouteRequest, stats: list[QueryStats]
) -> list[Candidate]:
    """Usage standing in for a class the repository does not define (a library's, an
    SDK's): when a class's definition probe found nothing, not even in the cursor's own
    file, the usage probes of its name, and of a name declared with it as its type
    (``View mView;`` for ``mView.``), take its weight. How the type is used is then the
    best evidence of its members."""
    plan, ctx = request.plan, request.ctx
    missing: dict[str, float] = {}
    for st in stats:
        query = plan.queries[st.index]
        if query.purpose == "definition" and query.kind == "class" and not query.paths:
            if st.hits or not query.identifier or _defined_in(request, query):
                continue
            missing[query.identifier] = max(missing.get(query.identifier, 0.0), query.weight)
    if not missing:
        return candidates
    declared = {**ctx.assignments, **ctx.annotations}
    raised: dict[int, float] = {}
    for index, query in enumerate(plan.queries):
        if query.purpose != "usage" or not query.identifier:
            continue
        name = query.identifier
        kind = declared.get(name) or declared.get(f"self.{name}") or ""
        types = [name, *_TYPE_NAME.findall(kind.split("<", 1)[0])[-1:]]  # Outer.Inner<T>
        weight = max((missing.get(t, 0.0) for t in types), default=0.0)
        if weight > query.weight:
            raised[index] = weight
    if not raised:
        return candidates
    return [
        replace(c, prior=max(c.prior, max(raised.get(i, 0.0) for i in c.queries)))
        if not raised.keys().isdisjoint(c.queries)
        else c
        for c in candidates
    ]


def _defined_in(request: RouteRequest, query: Query) -> bool:
    """A line of the cursor's file matches the definition probe ``query`` (the search
    leaves that file's lines above the cursor out)."""
    path = request.ctx.path
    matcher = LineMatcher.compile(query.pattern, fixed=query.fixed, trusted=True)
    if path is None or matcher is None:
        return False
    name = query.identifier
    return any(name in line and matcher.search(line) for line in request.files.get(path))


_TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def _appended(hits: RouteHits, plan: QueryPlan, extra: list[Query], more: RouteHits) -> RouteHits:
    """``hits`` with ``more``, the hits of ``extra`` (queries appended to ``plan``: their
    indices shift past the plan's)."""
    offset = len(plan.queries)
    plan.queries += extra
    hits.candidates += [
        replace(c, query_index=c.query_index + offset, queries=tuple(i + offset for i in c.queries))
        for c in more.candidates
    ]
    hits.stats += [
        replace(st, index=st.index + offset, note=st.note or "second hop") for st in more.stats
    ]
    return hits


def _demote_bindings(
    candidates: list[Candidate], plan: QueryPlan, receiver: str | None
) -> list[Candidate]:
    """The receiver's bindings (``style = ...`` in every file) once the second hop read its
    type off them: their job is done, and the type's definition outranks them."""
    probes = binding_probes(plan, receiver)
    return [
        replace(c, prior=c.prior * BOUND_DEMOTION) if set(c.queries) <= probes else c
        for c in candidates
    ]
