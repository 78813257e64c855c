"""The similar-code route's query words and region scoring (no rg needed)."""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import chain

from greprag.context import build_local_context
from greprag.files import FileCache
from greprag.languages import get_language
from greprag.models import QueryPlan
from greprag.rg import FileWords
from greprag.routes.similar import MAX_TERMS, WRITING, similar_terms
from greprag.routes.similar_rank import SAME_PACKAGE, TF_SATURATION, Scores, best_regions


def _weights(text: str, lang: str = "python") -> dict[str, float]:
    return {t.word: t.weight for t in similar_terms(build_local_context(text, lang=lang))}


def test_nearer_code_words_weigh_more_than_far_or_prose_ones():
    weights = _weights(
        "from pkg.io import reader\n"
        "total = compute_total(rows)\n"
        "# the cache keeps snapshot copies\n"
        "snapshot = take_snapshot(cache_dir)\n"
        "result = "
    )
    assert weights["take_snapshot"] > weights["compute_total"]  # nearer the cursor
    assert weights["snapshot"] > weights["copies"]  # code beats a comment's word
    assert "reader" not in weights and "pkg" not in weights  # import lines are left out
    assert "the" not in weights and "import" not in weights  # stop words and keywords
    assert weights["result"] < weights["compute_total"]  # a generic name weighs less


def test_an_empty_body_seeks_its_own_function_name_first():
    text = (
        "class Csv:\n"
        "    def write_rows(self, rows, dialect):\n"
        '        """Write every row."""\n'
        "        "
    )
    terms = similar_terms(build_local_context(text, lang="python"))
    assert terms[0].word == "write_rows" and terms[0].weight == WRITING
    assert {"rows", "dialect"} <= {t.word for t in terms}
    assert "self" not in {t.word for t in terms}


def test_the_docstring_of_the_function_being_written_weighs_as_code():
    text = (
        "def load(path):\n"
        '    """Read the ledger rows."""\n'
        "    return read(path)\n"
        "\n"
        "def totals(rows):\n"
        '    """Sum the invoice amounts."""\n'
        "    "
    )
    weights = _weights(text)
    assert weights["invoice"] > weights["rows"]  # as code, and nearer
    assert weights["ledger"] < weights["read"]  # another function's docstring: prose


def test_java_terms_skip_the_language_keywords():
    weights = _weights(
        "package com.shop;\nimport com.shop.Order;\nclass A {\n  void ship(Order order) {\n    ",
        "java",
    )
    assert {"ship", "Order", "order"} <= set(weights)
    assert not {"void", "class", "com", "shop", "package"} & set(weights)


def test_doc_comment_markup_is_no_term_but_the_same_words_in_code_are():
    weights = _weights(
        "class Streams {\n"
        "  /**\n"
        "   * Encodes with the given {@link java.nio.charset.Charset}.\n"
        "   * @param encoder the encoder, shared\n"
        "   */\n"
        "  void write(Encoder encoder) {\n"
        "    param = link.java(encoder);\n"
        "    ",
        "java",
    )
    assert {"Charset", "encoder", "shared", "Encodes"} <= set(weights)  # words of the prose
    assert not {"nio", "charset"} & set(weights)  # a qualified name's package
    assert {"param", "link", "java"} <= set(weights)  # in code, not markup
    python = _weights('def load(path):\n    """:param path: a :class:`pkg.io.Reader`."""\n    ')
    assert "Reader" in python and not {"pkg", "param"} & set(python)


def test_a_link_in_a_comment_gives_no_terms():
    weights = _weights(
        "try:\n"
        "    # a typed dict without config takes its parent's config\n"
        "    # see https://github.com/acme/widgets/issues/10917\n"
        "    config = "
    )
    assert {"typed", "parent", "config"} <= set(weights)
    assert not {"https", "github", "com", "acme", "widgets", "issues"} & set(weights)


def test_a_window_opening_inside_a_docstring_still_tells_code_from_prose():
    text = (
        "def join(items):\n"
        '    """Join the items.\n'
        "    >>> join(['a'])\n"
        "    'a'\n"
        '    """\n'
        "    return sep_pattern.join(items)\n"
        "\n"
        "class Splitter:\n"
        '    """Split the text."""\n'
        "    "
    )
    ctx = build_local_context(text, lang="python", window_lines=7)
    assert ctx.window.startswith("    'a'")  # the window opens inside the docstring
    weights = {t.word: t.weight for t in similar_terms(ctx)}
    assert weights["sep_pattern"] > weights["Split"]  # code, farther; the docstring's word


def _fresh_score(words: list[str], value: dict[str, float]) -> float:
    """A region's score as first written: a fresh ``Counter`` of its words, summed in the
    order they first occur. The route's scores must equal it to the last bit."""
    k = TF_SATURATION
    return sum(value.get(w, 0.0) * c * (k + 1) / (c + k) for w, c in Counter(words).items())


def _runs(lines: dict[int, list[str]], vocabulary: list[str]) -> tuple[list[int], bytes]:
    numbers = [n for n in sorted(lines) for _ in lines[n]]
    return numbers, bytes(vocabulary.index(w) for n in sorted(lines) for w in lines[n])


def test_scores_are_a_fresh_counts_score_to_the_last_bit():
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(MAX_TERMS)]
    value = {w: rng.uniform(0.01, 3.0) for w in vocabulary}
    scores = Scores([value[w] for w in vocabulary])
    for _ in range(2000):
        words = rng.choices(vocabulary[: rng.randint(1, MAX_TERMS)], k=rng.randint(1, 40))
        run = bytes(vocabulary.index(w) for w in words)
        assert scores[run] == _fresh_score(words, value)


def test_regions_rank_by_the_value_of_the_words_they_share_and_do_not_overlap():
    lines = {
        10: ["snapshot"],
        12: ["snapshot", "cache_dir"],
        14: ["take_snapshot"],
        40: ["rows"],
        80: ["snapshot"],
        81: ["snapshot"],
    }
    value = {"snapshot": 1.0, "cache_dir": 2.0, "take_snapshot": 3.0, "rows": 0.5}
    vocabulary = list(value)
    numbers, run = _runs(lines, vocabulary)
    scores = Scores(list(value.values()))
    total = sum(value.values()) * 2.2
    regions = best_regions("a.py", numbers, run, scores, total, boost=1.0)
    assert [(r.start, r.end) for r in regions] == [(10, 14), (80, 81), (40, 40)]
    assert regions[0].score > regions[1].score > regions[2].score
    assert regions[0].hit_lines == (10, 12, 14)
    assert (
        regions[0].score
        == _fresh_score(["snapshot", "snapshot", "cache_dir", "take_snapshot"], value) / total
    )


def test_the_route_keeps_the_regions_a_fresh_scoring_of_every_file_keeps(tmp_path):
    """Scoring files best bound first, stopping early, and scoring each region from
    shared runs keeps exactly the regions (and scores) that scoring every region of every
    file afresh, filtering and sorting them all keeps."""
    from greprag.config import load_settings
    from greprag.routes import RouteRequest
    from greprag.routes.grep import GrepRoute
    from greprag.routes.similar import SimilarRoute
    from greprag.routes.similar_rank import (
        MAX_REGIONS,
        MIN_SHARE,
        REGION_LINES,
        REGIONS_PER_FILE,
        Term,
        ranked_rounds,
    )

    rng = random.Random(7)
    vocabulary = ["alpha", "beta", "gamma", "delta", "omega"]
    occurrences: dict[str, dict[int, list[str]]] = {}
    for n in range(120):  # far more regions than MAX_REGIONS
        path = f"pkg{n % 3}/m{n}.py"
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text("\n".join(f"x = {i}" for i in range(200)) + "\n")
        numbers = sorted(rng.sample(range(1, 80), rng.randint(1, 30)))  # regions touch
        occurrences[path] = {i: rng.choices(vocabulary, k=rng.randint(1, 3)) for i in numbers}
    found = [
        FileWords(path, *(list(part) for part in _runs(lines, vocabulary)))
        for path, lines in occurrences.items()
    ]
    terms = [Term(w, 1.0 - 0.1 * i) for i, w in enumerate(vocabulary)]
    route = SimilarRoute(GrepRoute.from_settings(tmp_path, load_settings(tmp_path)))
    ctx = build_local_context("alpha = beta\n", lang="python", path="pkg0/cursor.py")
    request = RouteRequest(QueryPlan(queries=[]), ctx, FileCache(tmp_path))
    rounds = ranked_rounds(terms, found, len(found), request.current, "pkg0")
    got = route._kept(request, rounds)
    assert len(got) == MAX_REGIONS

    # the reference: every region of every file scored afresh
    files_with = {
        w: sum(w in set(chain(*f.values())) for f in occurrences.values()) for w in vocabulary
    }
    values = {t.word: t.weight * math.log(1 + 120 / files_with[t.word]) for t in terms}
    total = sum(values.values()) * (TF_SATURATION + 1)
    everything = []
    for path, lines in occurrences.items():
        boost = SAME_PACKAGE if path.startswith("pkg0/") else 1
        numbers = sorted(lines)
        scored = []
        for i, first in enumerate(numbers):
            inside = [n for n in numbers[i:] if n < first + REGION_LINES]
            words = list(chain(*(lines[n] for n in inside)))
            scored.append((-(_fresh_score(words, values) / total * boost), first, inside))
        chosen: list[tuple[float, int, list[int]]] = []
        for negative, first, inside in sorted(scored, key=lambda r: (r[0], r[1])):
            if len(chosen) < REGIONS_PER_FILE and all(
                inside[-1] < c[2][0] or first > c[2][-1] for c in chosen
            ):
                chosen.append((negative, first, inside))
        everything += [(-neg, path, inside) for neg, _, inside in chosen if -neg >= MIN_SHARE]
    everything.sort(key=lambda r: (-r[0], r[1], r[2][0]))
    scale = get_language("python").similar_scale
    assert [(c.path, c.start_line, c.end_line, c.match_lines, c.prior) for c in got] == [
        (path, inside[0], inside[-1], tuple(inside), min(1.0, route.weight * scale * score))
        for score, path, inside in everything[:MAX_REGIONS]
    ]
