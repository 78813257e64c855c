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

import math
import re
import threading
import time
from bisect import bisect_left, insort
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice

from greprag.context import LocalContext
from greprag.errors import SearchError
from greprag.languages import IDENTIFIER_RE, STRING_LITERAL_RE, get_language, is_generic, words
from greprag.models import SIMILAR_ROUTE, Candidate
from greprag.rg import FileWords, SearchSpec, run_words
from greprag.router.names import PY_BUILTINS, blank_docstrings
from greprag.routes import RouteHits, RouteRequest
from greprag.routes.grep import MAX_LISTED_FILES, GrepRoute

__all__ = ["SimilarRoute", "Term", "similar_terms"]

QUERY_LINES = 12  # lines before the cursor whose words are sought
MAX_TERMS = 16
MAX_LINES_PER_FILE = 60  # rg --max-count: matching lines read per file
REGION_LINES = 12  # a region spans at most this many lines of hits
MAX_REGIONS = 60
REGIONS_PER_FILE = 3
MIN_TERMS = 2  # fewer words than this say nothing about similarity
TF_SATURATION = 1.2  # BM25's k1: repeats of a word add less and less
MIN_SHARE = 0.02  # a region holding less of the sought words' value is left out
PROSE = 0.5  # a word only in a docstring or comment weighs this much
GENERIC = 0.5  # ``config``, ``data``, ``run``: shared by unrelated code
WRITING = 2.0  # the function whose empty body the cursor opens
SAME_PACKAGE = 1.25  # a region in the cursor file's own folder
PROXIMITY_DECAY = 0.15
NEXT_DOOR_LINES = 30  # lines of the cursor's file just below the code being written
NEXT_DOOR_PRIOR = 0.5  # longer or higher, it crowds out definitions (docs/benchmarks.md)
_BOUND_SLACK = 0.999  # room for float rounding when a file's bound is compared
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


@dataclass(frozen=True)
class Term:
    """A word sought, and how much sharing it says about similarity (before rarity)."""

    word: str
    weight: float


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


@dataclass
class _Region:
    path: str
    start: int
    end: int
    hit_lines: tuple[int, ...]
    score: float


_Round = tuple[list[_Region], bool]  # regions ranked so far, and whether they are all


class _Scores(dict[bytes, float]):
    """BM25-like scores of runs of the sought words, each run its words' term numbers in
    line order (bytes): each word's value times its saturated count, summed in the order the
    words first occur in the run (as a fresh ``Counter`` would: a float sum depends on its
    order). A run is scored once per query: runs of one word or two recur everywhere."""

    def __init__(self, values: Sequence[float]) -> None:
        super().__init__()
        self.values = values  # per term number

    def __missing__(self, run: bytes) -> float:
        k, score = TF_SATURATION, 0.0
        for term in dict.fromkeys(run):
            count = run.count(term)
            score += self.values[term] * count * (k + 1) / (count + k)
        self[run] = score
        return score


class SimilarRoute:
    """Regions of other files sharing the most (rare) words with the cursor's last lines.

    It shares the grep route's rg binary, limits and file list, so the repository is
    listed once for both.
    """

    name = SIMILAR_ROUTE

    def __init__(self, grep: GrepRoute, *, weight: float = 0.6, timeout: float = 20.0) -> None:
        self.grep = grep
        self.weight = weight
        self.timeout = timeout

    def search(self, request: RouteRequest) -> RouteHits:
        return self.start(request)()

    def start(self, request: RouteRequest) -> Callable[[], RouteHits]:
        """Begin the search and return what finishes it: the pipeline starts this route
        first so that, once the repository is listed, its rg pass runs in a background
        thread while the grep route works."""
        started = time.perf_counter()
        ctx = request.ctx
        terms = similar_terms(ctx)
        if len(terms) < MIN_TERMS or get_language(ctx.lang) is None:
            return lambda: self._finish(request, None, started)
        listed = self.grep.fresh_files(ctx.lang)
        if listed is None:  # cold: the grep route walks the repo (skips seen) and lists it
            return lambda: self._search_now(request, terms, started)
        found: list[Iterator[_Round] | Exception] = []
        thread = threading.Thread(
            target=self._occurrences, args=(request, terms, listed, found), daemon=True
        )
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
        found: list[Iterator[_Round] | Exception] = []
        self._occurrences(request, terms, listed, found)
        return self._finish(request, found[0], started)

    def _occurrences(
        self,
        request: RouteRequest,
        terms: list[Term],
        listed: list[str],
        out: list[Iterator[_Round] | Exception],
    ) -> None:
        """Every occurrence of the terms in the cursor language's files, ranked into
        regions, into ``out`` (or the error). The first round of ranking runs here: in the
        background thread it overlaps the grep route's wait for its own rg pass (rg's wide
        pipe lets that pass run on while this thread holds the interpreter)."""
        lang = request.ctx.lang
        spec = SearchSpec(
            patterns=tuple(t.word for t in terms),
            langs=(lang,) if lang else (),
            max_count_per_file=MAX_LINES_PER_FILE,
            max_filesize=self.grep.max_filesize,
            threads=request.rg_threads,
            paths=tuple(listed) if len(listed) <= MAX_LISTED_FILES else (),
        )
        try:
            found = run_words(self.grep.rg, self.grep.repo, spec, self.timeout)
            rounds = self._ranked(request, terms, found, max(len(listed), len(found), 1))
            first = list(islice(rounds, 1))
            out.append(chain(first, rounds))
        except Exception as exc:  # handed to the caller's thread, raised or noted there
            out.append(exc)

    def _finish(
        self, request: RouteRequest, rounds: Iterator[_Round] | Exception | None, started: float
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

    def _kept(self, request: RouteRequest, rounds: Iterator[_Round]) -> list[Candidate]:
        """The first ``MAX_REGIONS`` regions that may be shown: a round that leaves too
        few (outside the roots, clipped by the cursor) asks for the next."""
        for final, last in rounds:
            candidates = self._candidates(request, final)
            if last or len(candidates) >= MAX_REGIONS:
                return candidates
        return []

    def _ranked(
        self, request: RouteRequest, terms: list[Term], found: list[FileWords], searched: int
    ) -> Iterator[_Round]:
        """Rounds of regions, best first: each round ranks every region scoring above all
        files not yet scored, and says whether it was the last. Pure computation on what
        rg found, safe in the background thread."""
        document_frequency = [0] * len(terms)
        for file in found:
            for term in set(file.words):
                document_frequency[term] += 1
        values = [  # per term number; a term found nowhere is worth nothing
            t.weight * math.log(1 + searched / df) if df else 0.0
            for t, df in zip(terms, document_frequency, strict=True)
        ]
        total = sum(values) * (TF_SATURATION + 1) or 1.0
        scores = _Scores(values)
        folder = request.ctx.path.rsplit("/", 1)[0] if request.ctx.path else None
        files: list[tuple[float, str, list[int], bytes, float]] = []
        for file in found:
            path, lines, words = file.path, file.lines, file.words
            if path == request.current.path:
                shown = [i for i, n in enumerate(lines) if request.current.admits(path, n)]
                if not shown:
                    continue
                lines, words = [lines[i] for i in shown], [words[i] for i in shown]
            boost = SAME_PACKAGE if folder is not None and path.rsplit("/", 1)[0] == folder else 1
            run = bytes(words)  # term numbers: fewer than MAX_TERMS
            bound = scores[run] / total * boost  # no region of the file scores more
            if bound >= MIN_SHARE * _BOUND_SLACK:
                files.append((bound, path, lines, run, boost))
        files.sort(key=lambda f: -f[0])
        # best bound first: once MAX_REGIONS regions kept score above every later file's
        # bound, the later files cannot change the result and are not scored region by region
        regions: list[_Region] = []
        keys: list[float] = []  # the kept regions' negated scores, ascending
        for j, (_, path, lines, run, boost) in enumerate(files):
            for region in _best_regions(path, lines, run, scores, total, boost):
                if region.score >= MIN_SHARE:
                    insort(keys, -region.score)
                    regions.append(region)
            last = j + 1 == len(files)
            rest = 0.0 if last else files[j + 1][0] / _BOUND_SLACK
            if not last and bisect_left(keys, -rest) < MAX_REGIONS:
                continue
            final = sorted(
                (r for r in regions if r.score > rest), key=lambda r: (-r.score, r.path, r.start)
            )
            yield final, last

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

    def _candidates(self, request: RouteRequest, regions: list[_Region]) -> list[Candidate]:
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


def _best_regions(
    path: str,
    lines: list[int],
    run: bytes,
    scores: _Scores,
    total: float,
    boost: float,
) -> list[_Region]:
    """The file's best non-overlapping runs of hit lines (at most ``REGION_LINES`` long),
    each scored (``scores``) as a share of the best possible score ``total``. ``lines``
    holds each occurrence's line (ascending), ``run`` its term number, in rg's order."""
    ends = {first: i for i, first in enumerate(lines, 1)}  # a region starts at each hit line
    starts = [0, *ends.values()][:-1]
    stops = [
        bisect_left(lines, first + REGION_LINES, a) for first, a in zip(ends, starts, strict=True)
    ]
    scored = [  # -share, first line, first and end index: first lines differ, so sort plainly
        (-(scores[run[a:b]] / total * boost), first, a, b)
        for first, a, b in zip(ends, starts, stops, strict=True)
    ]
    scored.sort()
    chosen: list[_Region] = []
    for negative, first, i, stop in scored:
        if len(chosen) >= REGIONS_PER_FILE:
            break
        last = lines[stop - 1]
        if all(last < c.start or first > c.end for c in chosen):
            hit_lines = tuple(dict.fromkeys(lines[i:stop]))
            chosen.append(_Region(path, first, last, hit_lines, -negative))
    return chosen
