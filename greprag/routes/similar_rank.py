"""The similar route's ranking: short regions of the files rg found the sought words in,
scored by how much of that vocabulary they share (each word weighed by its rarity in the
repository and its closeness to the cursor). Pure computation on what rg found, so it runs
in a background thread or in the route's worker process alike.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from greprag.cursor_file import CursorFile
from greprag.rg import FileWords

__all__ = ["MAX_REGIONS", "Region", "Round", "Scores", "Term", "best_regions", "ranked_rounds"]

REGION_LINES = 12  # a region spans at most this many lines of hits
MAX_REGIONS = 60
REGIONS_PER_FILE = 3
TF_SATURATION = 1.2  # BM25's k1: repeats of a word add less and less
MIN_SHARE = 0.02  # a region holding less of the sought words' value is left out
SAME_PACKAGE = 1.25  # a region in the cursor file's own folder
_BOUND_SLACK = 0.999  # room for float rounding when a file's bound is compared


@dataclass(frozen=True)
class Term:
    """A word sought, and how much sharing it says about similarity (before rarity)."""

    word: str
    weight: float


@dataclass
class Region:
    path: str
    start: int
    end: int
    hit_lines: tuple[int, ...]
    score: float


Round = tuple[list[Region], bool]  # regions ranked so far, and whether they are all


class Scores(dict[bytes, float]):
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


def ranked_rounds(
    terms: list[Term],
    found: list[FileWords],
    searched: int,
    current: CursorFile,
    folder: str | None,
) -> Iterator[Round]:
    """Rounds of regions, best first: each round ranks every region scoring above all
    files not yet scored, and says whether it was the last. ``searched`` is how many
    files the pass read, ``current`` says which lines of the cursor's file may be shown,
    ``folder`` is the cursor file's own (its regions gain ``SAME_PACKAGE``)."""
    document_frequency = [0] * len(terms)
    for file in found:
        for term in set(file.words):
            document_frequency[term] += 1
    values = [  # per term number; a term found nowhere is worth nothing
        t.weight * math.log(1 + searched / df) if df else 0.0
        for t, df in zip(terms, document_frequency, strict=True)
    ]
    total = sum(values) * (TF_SATURATION + 1) or 1.0
    scores = Scores(values)
    files: list[tuple[float, str, list[int], bytes, float]] = []
    for file in found:
        path, lines, words = file.path, file.lines, file.words
        if path == current.path:
            shown = [i for i, n in enumerate(lines) if current.admits(path, n)]
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
    regions: list[Region] = []
    keys: list[float] = []  # the kept regions' negated scores, ascending
    for j, (_, path, lines, run, boost) in enumerate(files):
        for region in best_regions(path, lines, run, scores, total, boost):
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


def best_regions(
    path: str,
    lines: list[int],
    run: bytes,
    scores: Scores,
    total: float,
    boost: float,
) -> list[Region]:
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
    chosen: list[Region] = []
    for negative, first, i, stop in scored:
        if len(chosen) >= REGIONS_PER_FILE:
            break
        last = lines[stop - 1]
        if all(last < c.start or first > c.end for c in chosen):
            hit_lines = tuple(dict.fromkeys(lines[i:stop]))
            chosen.append(Region(path, first, last, hit_lines, -negative))
    return chosen
