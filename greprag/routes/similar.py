"""The similar-code route: code elsewhere in the repository that resembles the cursor's.

A completion copies from code like the one being written more than from definitions: the
sibling that does nearly the same thing, the callers of the function being written, the
code next door in the same package. Without an index, this route takes the identifiers
of the last lines before the cursor (the function being written first, when the cursor
opens its empty body), finds every whole-word occurrence of them in one rg pass, and
ranks short regions of the hit files by how much of that vocabulary they share, each word
weighed by its rarity in the repository (its document frequency, from the same pass) and
its closeness to the cursor. The best regions come back as candidates, with the first
lines of the cursor's own file below the code being written (its next sibling, which the
rg pass may not reach); fusion ranks them against everything else and widens them to
whole blocks.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from itertools import chain, islice

from greprag.context import LocalContext
from greprag.errors import SearchError
from greprag.languages import IDENTIFIER_RE, STRING_LITERAL_RE, get_language, is_generic, words
from greprag.models import SIMILAR_ROUTE, Candidate
from greprag.rg import SearchSpec
from greprag.router.names import PY_BUILTINS, blank_docstrings
from greprag.routes import RouteHits, RouteRequest
from greprag.routes.grep import MAX_LISTED_FILES, GrepRoute
from greprag.routes.similar_rank import MAX_REGIONS, Region, Round, Term
from greprag.routes.similar_worker import (
    RemoteSearch,
    WordsJob,
    WorkerGone,
    job_rounds,
    shared_worker,
)

__all__ = ["SimilarRoute", "Term", "similar_terms"]

QUERY_LINES = 12  # lines before the cursor whose words are sought
MAX_TERMS = 16
# per file, each word's first 60 occurrences: one common word's lines (the package's name
# on every line of a long test module) leave room for the rare words further down, which
# is where the code most like the cursor's is (docs/benchmarks.md); rg's --max-count
# only bounds what a huge file costs
MAX_PER_WORD = 60
MAX_LINES_PER_FILE = 1000
MIN_TERMS = 2  # fewer words than this say nothing about similarity
PROSE = 0.5  # a word only in a docstring or comment weighs this much
GENERIC = 0.5  # ``config``, ``data``, ``run``: shared by unrelated code
WRITING = 2.0  # the function whose empty body the cursor opens
PROXIMITY_DECAY = 0.15
NEXT_DOOR_LINES = 30  # lines of the cursor's file just below the code being written
NEXT_DOOR_PRIOR = 0.5  # longer or higher, it crowds out definitions (docs/benchmarks.md)
_STOP = words(
    "the this that these those with from into onto for and not are was were will would "
    "can could should have has had been being its their there then than when where which "
    "what who how all any each every some such only also just more most other same both "
    "use used uses using see todo note example returns return given new must may one two"
)
_IMPORT_LINE = re.compile(r"\s*(from\s+\S+\s+import|import|package|using|use)\b")
# in prose, markup rather than words: a tag (``@param``, ``{@link``, ``:class:``) and a
# qualified name's qualifiers (``java.nio`` of ``java.nio.Charset``): the same in every
# doc comment of a package, they cost the rg pass most and say nothing about similarity
_PROSE_MARKUP = re.compile(r"(?:@|(?<![\w:]):)([\w$]+)|((?:[^\W\d]|\$)[\w$]*)(?=\.[^\W\d])")
# a link (``see https://github.com/org/repo/issues/12``): its words name a site, not code
_URL = re.compile(r"\b[A-Za-z][\w+.-]*://\S+")


def similar_terms(ctx: LocalContext, max_terms: int = MAX_TERMS) -> list[Term]:
    """The words of the cursor's last lines, heaviest first: nearer ones weigh more, words
    of docstrings and comments (but the docstring of the function being written) and
    generic names less, keywords, builtins, short names and import lines not at all; an
    empty body's function name weighs most."""
    lang = get_language(ctx.lang)
    skip = (lang.keywords if lang else frozenset()) | _STOP
    if ctx.lang in (None, "python"):
        skip |= PY_BUILTINS
    raw = ctx.window.split("\n")[-QUERY_LINES:]
    # blanked from the file's start: a window that opens inside a docstring would read
    # its closing quotes as an opening and take the code below for prose
    code = blank_docstrings(ctx.before, ctx.lang).rsplit("\n", len(raw))[-len(raw) :]
    found: dict[str, float] = {}
    own_doc = _below_header(ctx, raw)
    for offset, (line, code_line) in enumerate(zip(reversed(raw), reversed(code), strict=True)):
        if _IMPORT_LINE.match(code_line):
            continue  # module paths: every file of the package shares them
        proximity = 1.0 / (1.0 + PROXIMITY_DECAY * offset)
        line = _URL.sub(" ", line)
        code_part = STRING_LITERAL_RE.sub(" ", _without_comment(code_line, lang))
        in_code = set(IDENTIFIER_RE.findall(code_part))
        markup = {m[1] or m[2] for m in _PROSE_MARKUP.finditer(line)} - in_code
        for word in IDENTIFIER_RE.findall(line):
            if len(word) < 3 or word in skip or word in markup or not word.isascii():
                continue
            weight = proximity * (1.0 if word in in_code or offset < own_doc else PROSE)
            if is_generic(word):
                weight *= GENERIC
            found[word] = max(found.get(word, 0.0), weight)
    if ctx.empty_body and ctx.enclosing_function:
        found[ctx.enclosing_function] = WRITING
    ranked = sorted(found.items(), key=lambda item: (-item[1], item[0]))
    return [Term(word, weight) for word, weight in ranked[:max_terms]]


def _below_header(ctx: LocalContext, raw: list[str]) -> int:
    """How many of the last lines ``raw`` lie below the header of the function whose
    empty body the cursor opens (its docstring: what the body is to do, no mere prose);
    0 elsewhere."""
    if not (ctx.empty_body and ctx.enclosing_function):
        return 0
    header = re.compile(rf"\b{re.escape(ctx.enclosing_function)}\s*\(")
    return next((offset for offset, text in enumerate(reversed(raw)) if header.search(text)), 0)


def _without_comment(line: str, lang) -> str:
    marker = lang.line_comment if lang else "#"
    return line.split(marker, 1)[0] if marker in line else line


class SimilarRoute:
    """Regions of other files sharing the most (rare) words with the cursor's last lines.

    It shares the grep route's rg binary, limits and file list, so the repository is
    listed once for both.
    """

    name = SIMILAR_ROUTE

    def __init__(
        self,
        grep: GrepRoute,
        *,
        weight: float = 0.6,
        timeout: float = 20.0,
        worker: bool = True,
    ) -> None:
        self.grep = grep
        self.weight = weight
        self.timeout = timeout
        self.worker = worker  # the warm pass and ranking in the shared worker process
        self._searched = False  # a one-shot caller (the CLI) never starts the worker

    def search(self, request: RouteRequest) -> RouteHits:
        return self.start(request)()

    def reads_alongside(self, lang: str | None) -> bool:
        """Whether the next search runs an rg pass while the grep route's runs: the
        repository is listed (the warm case), and the worker's word index did not answer
        its last search here (it answers without rg from then on)."""
        if self.grep.fresh_files(lang) is None:
            return False
        worker = shared_worker() if self.worker and self._searched else None
        return worker is None or not worker.indexed.get(str(self.grep.repo), False)

    def start(self, request: RouteRequest) -> Callable[[], RouteHits]:
        """Begin the search and return what finishes it: the pipeline starts this route
        first so that, once the repository is listed, its rg pass and ranking run in the
        worker process (else a background thread) while the grep route works."""
        started = time.perf_counter()
        searched, self._searched = self._searched, True
        ctx = request.ctx
        terms = similar_terms(ctx)
        if len(terms) < MIN_TERMS or get_language(ctx.lang) is None:
            return lambda: self._finish(request, None, started)
        listed = self.grep.fresh_files(ctx.lang)
        if listed is None:  # cold: the grep route walks the repo (skips seen) and lists it
            return lambda: self._search_now(request, terms, started)
        job = self._job(request, terms, listed)
        remote = self._submit(job, listed) if self.worker and searched else None
        if remote is not None:
            return lambda: self._finish_remote(request, job, remote, started)
        found: list[Iterator[Round] | Exception] = []
        thread = threading.Thread(target=self._occurrences, args=(job, found), daemon=True)
        thread.start()

        def finish() -> RouteHits:
            thread.join()
            return self._finish(request, found[0], started)

        return finish

    def _search_now(self, request: RouteRequest, terms: list[Term], started: float) -> RouteHits:
        try:
            listed = self.grep.files(request.ctx.lang)
        except SearchError as exc:  # a listing past the timeout: no similar code this time
            return self._finish(request, exc, started)
        found: list[Iterator[Round] | Exception] = []
        self._occurrences(self._job(request, terms, listed), found)
        return self._finish(request, found[0], started)

    def _job(self, request: RouteRequest, terms: list[Term], listed: list[str]) -> WordsJob:
        """The words pass (every occurrence of the terms in the cursor language's files)
        and what its ranking needs."""
        lang = request.ctx.lang
        spec = SearchSpec(
            patterns=tuple(t.word for t in terms),
            langs=(lang,) if lang else (),
            max_count_per_file=MAX_LINES_PER_FILE,
            max_per_word=MAX_PER_WORD,
            max_filesize=self.grep.max_filesize,
            threads=request.rg_threads,
            paths=tuple(listed) if len(listed) <= MAX_LISTED_FILES else (),
        )
        return WordsJob(
            rg=str(self.grep.rg),
            repo=str(self.grep.repo),
            spec=spec,
            listing=0,
            searched=len(listed),
            terms=tuple(terms),
            current=request.current,
            folder=request.ctx.path.rsplit("/", 1)[0] if request.ctx.path else None,
            timeout=self.timeout,
        )

    def _occurrences(self, job: WordsJob, out: list[Iterator[Round] | Exception]) -> None:
        """The job's rounds of regions into ``out`` (or the error). The first round of
        ranking runs here: in the background thread it overlaps the grep route's wait for
        its own rg pass (rg's wide pipe lets that pass run on while this thread holds the
        interpreter)."""
        try:
            rounds = job_rounds(job)
            first = list(islice(rounds, 1))
            out.append(chain(first, rounds))
        except Exception as exc:  # handed to the caller's thread, raised or noted there
            out.append(exc)

    def _submit(self, job: WordsJob, listed: list[str]) -> RemoteSearch | None:
        """``job`` sent to the shared worker process (its file list once per listing);
        None when the worker cannot take it."""
        worker = shared_worker()
        if worker is None:
            return None
        sent = replace(job, spec=replace(job.spec, paths=()))
        return worker.submit(sent, listed if job.spec.paths else None)

    def _finish_remote(
        self, request: RouteRequest, job: WordsJob, remote: RemoteSearch, started: float
    ) -> RouteHits:
        """The worker's rounds, or the search run here when the worker could not do it."""
        rounds = remote.rounds()
        try:
            first = next(rounds)
        except SearchError as exc:
            return self._finish(request, exc, started)
        except WorkerGone:
            found: list[Iterator[Round] | Exception] = []
            self._occurrences(job, found)
            return self._finish(request, found[0], started)
        try:
            return self._finish(request, chain([first], rounds), started)
        finally:
            rounds.close()

    def _finish(
        self, request: RouteRequest, rounds: Iterator[Round] | Exception | None, started: float
    ) -> RouteHits:
        hits = RouteHits(self.name, [])
        if isinstance(rounds, SearchError):  # similar code is extra evidence: go on
            hits.notes.append(f"similar: {rounds}")
        elif isinstance(rounds, Exception):
            raise rounds
        elif rounds is not None:
            hits.candidates = self._kept(request, rounds)
        hits.candidates += self._next_door(request)
        hits.timings[self.name] = (time.perf_counter() - started) * 1000
        return hits

    def _kept(self, request: RouteRequest, rounds: Iterator[Round]) -> list[Candidate]:
        """The first ``MAX_REGIONS`` regions that may be shown: a round that leaves too
        few (outside the roots, clipped by the cursor) asks for the next."""
        for final, last in rounds:
            candidates = self._candidates(request, final)
            if last or len(candidates) >= MAX_REGIONS:
                return candidates
        return []

    def _next_door(self, request: RouteRequest) -> list[Candidate]:
        """The first lines of the cursor's file that may be shown below the cursor: the
        code right after the one being written (its next sibling, the helpers it calls)."""
        current, line = request.current, request.ctx.line
        run = next(((lo, hi) for lo, hi in current.runs if line is not None and lo > line), None)
        if current.path is None or run is None:
            return []
        lines = request.files.get(current.path)
        low, end = run[0], min(run[1], len(lines), run[0] + NEXT_DOOR_LINES - 1)
        while low < end and not lines[low - 1].strip():
            low += 1
        shown = lines[low - 1 : end]
        if not any(IDENTIFIER_RE.search(text) for text in shown):
            return []  # a lone closing brace says nothing
        candidate = self._candidate(current.path, low, shown, NEXT_DOOR_PRIOR)
        return [candidate] if candidate else []

    def _candidates(self, request: RouteRequest, regions: list[Region]) -> list[Candidate]:
        """The first ``MAX_REGIONS`` of ``regions`` (best first) that may be shown."""
        lang = get_language(request.ctx.lang)
        weight = self.weight * (lang.similar_scale if lang else 1.0)
        candidates: list[Candidate] = []
        for region in regions:  # read only what is kept: a read is checked to stay inside
            if len(candidates) >= MAX_REGIONS:
                break
            text = request.files.get(region.path)  # nothing when outside the root
            start, end = request.current.clip(
                region.path, region.start, min(region.end, len(text)), region.start
            )
            if end < start:
                continue
            # at most a definition probe's weight: by its prior alone, similar code never
            # outranks the definition the cursor needs
            prior = min(1.0, weight * region.score)
            candidate = self._candidate(
                region.path, start, text[start - 1 : end], prior, region.hit_lines
            )
            if candidate:
                candidates.append(candidate)
        return candidates

    def _candidate(
        self,
        path: str,
        start: int,
        lines: Sequence[str],
        prior: float,
        match_lines: tuple[int, ...] = (),
    ) -> Candidate | None:
        """``lines`` of ``path`` from line ``start`` as this route's candidate; None for
        minified code (the grep route reports the file as a skip)."""
        if any(len(line) > self.grep.max_line_chars for line in lines):
            return None
        return Candidate(
            path=path,
            start_line=start,
            end_line=start + len(lines) - 1,
            text="\n".join(lines),
            route=self.name,
            match_lines=match_lines,
            prior=prior,
        )
