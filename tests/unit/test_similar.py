"""The similar-code route's query words and region scoring (no rg needed)."""

from __future__ import annotations

import math
from itertools import chain

from greprag.context import build_local_context
from greprag.files import FileCache
from greprag.models import QueryPlan
from greprag.routes.similar import (
    SAME_PACKAGE,
    TF_SATURATION,
    WRITING,
    _best_regions,
    similar_terms,
)


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


def test_java_terms_skip_the_language_keywords():
    weights = _weights(
        "package com.shop;\nimport com.shop.Order;\nclass A {\n  void ship(Order order) {\n    ",
        "java",
    )
    assert {"ship", "Order", "order"} <= set(weights)
    assert not {"void", "class", "com", "shop", "package"} & set(weights)


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
    regions = _best_regions("a.py", lines, value, total=sum(value.values()) * 2.2, boost=1.0)
    assert [(r.start, r.end) for r in regions] == [(10, 14), (80, 81), (40, 40)]
    assert regions[0].score > regions[1].score > regions[2].score
    assert regions[0].hits == {
        10: ["snapshot"],
        12: ["snapshot", "cache_dir"],
        14: ["take_snapshot"],
    }


def test_files_past_the_best_bounds_are_not_needed_for_the_same_regions(tmp_path):
    """Scoring files best bound first and stopping early keeps exactly the regions that
    scoring every file, filtering and sorting them all would keep."""
    import random

    from greprag.config import load_settings
    from greprag.routes import RouteRequest
    from greprag.routes.grep import GrepRoute
    from greprag.routes.similar import (
        MAX_REGIONS,
        MIN_SHARE,
        SimilarRoute,
        Term,
        _best_regions,
    )

    rng = random.Random(7)
    vocabulary = ["alpha", "beta", "gamma", "delta", "omega"]
    occurrences: dict[str, dict[int, list[str]]] = {}
    for n in range(120):  # far more regions than MAX_REGIONS
        path = f"pkg{n % 3}/m{n}.py"
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text("\n".join(f"x = {i}" for i in range(200)) + "\n")
        numbers = sorted(rng.sample(range(1, 200), rng.randint(1, 30)))
        occurrences[path] = {i: rng.sample(vocabulary, rng.randint(1, 2)) for i in numbers}
    terms = [Term(w, 1.0 - 0.1 * i) for i, w in enumerate(vocabulary)]
    route = SimilarRoute(GrepRoute.from_settings(tmp_path, load_settings(tmp_path)))
    ctx = build_local_context("alpha = beta\n", lang="python", path="pkg0/cursor.py")
    request = RouteRequest(QueryPlan(queries=[]), ctx, FileCache(tmp_path))
    got = route._regions(request, terms, occurrences, len(occurrences))
    assert len(got) == MAX_REGIONS

    # the reference: every file scored region by region
    files_with = {
        w: sum(w in set(chain(*f.values())) for f in occurrences.values()) for w in vocabulary
    }
    values = {t.word: t.weight * math.log(1 + 120 / files_with[t.word]) for t in terms}
    total = sum(values.values()) * (TF_SATURATION + 1)
    everything = [
        r
        for path, lines in occurrences.items()
        for r in _best_regions(
            path, lines, values, total, SAME_PACKAGE if path.startswith("pkg0/") else 1
        )
        if r.score >= MIN_SHARE
    ]
    everything.sort(key=lambda r: (-r.score, r.path, r.start))
    assert [(c.path, c.start_line, c.end_line) for c in got] == [
        (r.path, r.start, r.end) for r in everything[:MAX_REGIONS]
    ]
