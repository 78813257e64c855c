"""The final score: BM25 against the window, normalized by the probes' best, plus priors."""

from __future__ import annotations

from dataclasses import replace

import pytest

from greprag.fusion.score import ScoreWeights, score_candidates
from greprag.models import SIMILAR_ROUTE, Candidate, QueryPlan

WINDOW = "rows = self.loader.load_batch(index)\nfor step in self.transforms:"


def _score(candidates: list[Candidate]) -> dict[str, float]:
    ranked = score_candidates(
        candidates,
        window=WINDOW,
        plan=QueryPlan(queries=[]),
        imported={},
        method="bm25",
        weights=ScoreWeights(),
    )
    return {c.path: c.score for c in ranked}


def test_code_offered_without_a_match_does_not_rescale_the_ranking():
    weights = ScoreWeights()
    hits = [
        Candidate(
            "loader.py",
            1,
            2,
            "def load_batch(self, index):\n    return rows",
            prior=0.9,
            match_lines=(1,),
        ),
        *(
            Candidate(
                f"other{i}.py", 1, 1, f"def unrelated{i}(): pass", prior=1.0, match_lines=(1,)
            )
            for i in range(4)
        ),
    ]
    # the current file's next door: 30 lines much like the window, offered for nearness
    next_door = Candidate(
        "current.py", 40, 70, "\n".join([WINDOW] * 15), route=SIMILAR_ROUTE, prior=0.5
    )
    alone, joined = _score(hits), _score([*hits, next_door])
    best = weights.bm25 + weights.prior * 0.9  # the best match's BM25 takes the full weight
    assert alone["loader.py"] == pytest.approx(best)
    assert joined["loader.py"] == pytest.approx(best)
    assert joined["current.py"] == pytest.approx(weights.bm25 + weights.prior * 0.5)
    # a similar region that matched sets the scale like any hit
    region = replace(next_door, match_lines=(40,))
    assert _score([*hits, region])["loader.py"] < best


def test_the_receiver_types_definition_ranks_with_the_imported_definitions():
    """A second hop probes the class a receiver is declared as (``self.json: JSONProvider
    = ...`` for ``self.json.``): where it points is as sure as where an import points, so
    it takes the same bonus, and outranks imported names the line does not use."""
    from greprag.models import Query

    plan = QueryPlan(
        queries=[
            Query(
                r"^\s*class\s+AppContext\b",
                "class",
                purpose="import",
                weight=0.75,
                identifier="AppContext",
            ),
            Query(
                r"^\s*class\s+JSONProvider\b",
                "class",
                purpose="second hop",
                weight=0.9,
                identifier="JSONProvider",
            ),
        ]
    )
    hits = [
        Candidate(
            "ctx.py",
            1,
            2,
            "class AppContext:\n    pass",
            query_index=0,
            prior=0.75,
            match_lines=(1,),
        ),
        Candidate(
            "json/provider.py",
            1,
            2,
            "class JSONProvider:\n    pass",
            query_index=1,
            prior=0.9,
            match_lines=(1,),
        ),
    ]
    ranked = score_candidates(
        hits,
        window=WINDOW,
        plan=plan,
        imported={"AppContext": "ctx.py"},
        method="bm25",
        weights=ScoreWeights(),
    )
    assert [c.path for c in ranked] == ["json/provider.py", "ctx.py"]
    weights = ScoreWeights()
    assert ranked[0].score == pytest.approx(weights.prior * 0.9 + weights.import_bonus)


def test_a_java_files_package_scope_holds_its_and_star_imported_classes_unless_shadowed():
    from greprag.context import build_local_context
    from greprag.imports import PackageScope

    head = "/* license */\npackage com.acme.shop;\n\nimport java.util.List;\nimport org.y.*;\n\n"
    scope = PackageScope.of(build_local_context(head + "class Cart {\n    ", lang="java"))
    assert scope is not None and scope.folders == ("com/acme/shop", "org/y")
    assert scope.defines("core/src/com/acme/shop/Widget.java", ["Item", "Widget"])
    assert not scope.defines("core/src/com/acme/shop/sub/Widget.java", ["Widget"])
    assert not scope.defines("core/src/xcom/acme/shop/Widget.java", ["Widget"])
    assert not scope.defines("core/src/com/acme/shop/List.java", ["List"])  # imported
    assert scope.defines("lib/org/y/Tool.java", ["Tool"])  # imported with its package
    assert PackageScope.of(build_local_context("class Cart {\n    ", lang="java")) is None
    assert PackageScope.of(build_local_context("import os\n", lang="python")) is None


def test_a_rescored_candidate_keeps_every_other_field():
    """``Candidate.rescored`` names each field itself (``replace`` is slow on the hot
    path): a field added to ``Candidate`` must be added there, or this fails."""
    from dataclasses import fields

    values = {
        "path": "pkg/a.py",
        "start_line": 3,
        "end_line": 9,
        "text": "def a():\n    return 1",
        "route": SIMILAR_ROUTE,
        "query_index": 2,
        "match_lines": (4, 5),
        "score": 0.25,
        "queries": (2, 7),
        "prior": 0.6,
    }
    assert set(values) == {f.name for f in fields(Candidate)}
    candidate = Candidate(**values)
    assert candidate.rescored(0.75) == replace(candidate, score=0.75)


def test_a_languages_own_mix_lets_code_like_the_cursors_outrank_a_stronger_prior():
    """Java mixes BM25 and the probes' prior half and half (``Language.bm25_share``): a
    candidate reading like the window overtakes one only its probe's prior favours."""
    from greprag.languages import get_language

    probed = Candidate("probed.java", 1, 1, "int unrelated;", prior=0.9, match_lines=(1,))
    alike = Candidate("alike.java", 1, 2, WINDOW, prior=0.5, match_lines=(1,))
    others = [  # so that the window's words are rare, as in a repository
        Candidate(f"other{i}.java", 1, 1, f"int other{i};", prior=0.1, match_lines=(1,))
        for i in range(4)
    ]
    java = get_language("java")
    assert java is not None and java.bm25_share is not None

    def order(weights: ScoreWeights) -> list[str]:
        ranked = score_candidates(
            [probed, alike, *others],
            window=WINDOW,
            plan=QueryPlan(queries=[]),
            imported={},
            method="bm25",
            weights=weights,
        )
        return [c.path for c in ranked][:2]

    default = ScoreWeights()
    mixed = default.mixed(java.bm25_share)
    assert mixed.bm25 + mixed.prior == pytest.approx(default.bm25 + default.prior)
    assert mixed.import_bonus == default.import_bonus
    assert default.mixed(None) is default
    assert order(default) == ["probed.java", "alike.java"]
    assert order(mixed) == ["alike.java", "probed.java"]


def test_a_use_written_like_the_cursor_line_outranks_other_uses_of_a_name_not_yet_written():
    """At ``async with `` before the first use of an imported name, a use elsewhere that
    opens the same way shows how the statement goes on; once the window has written the
    name, the line's shape says nothing about it."""
    from greprag.models import Query

    probe = Query(
        r"\bcreate_task_group\s*[.(]",
        "method",
        purpose="usage",
        weight=0.5,
        identifier="create_task_group",
    )
    same = Candidate(
        "a.py",
        10,
        11,
        "    async with create_task_group() as group:\n        group.start_soon(run)",
        query_index=0,
        prior=0.5,
        match_lines=(10,),
    )
    other = Candidate(
        "b.py", 3, 3, "group = create_task_group()", query_index=0, prior=0.5, match_lines=(3,)
    )

    def scores(window: str, prefix: str) -> dict[str, float]:
        ranked = score_candidates(
            [other, same],
            window=window,
            plan=QueryPlan(queries=[probe]),
            imported={},
            method="none",
            weights=ScoreWeights(),
            prefix=prefix,
        )
        return {c.path: c.score for c in ranked}

    fresh = scores("body = await receive()\n        async with ", "        async with ")
    assert fresh["a.py"] == pytest.approx(fresh["b.py"] + ScoreWeights().shape_bonus)
    written = scores("create_task_group()\nasync with ", "async with ")
    assert written["a.py"] == pytest.approx(written["b.py"])
    assert scores("x = 1\n", "")["a.py"] == pytest.approx(fresh["b.py"])  # nothing typed
    glued = replace(same, text=same.text.replace("async with", "notasync  with"))
    ranked = score_candidates(
        [other, glued],
        window="x = 1\n",
        plan=QueryPlan(queries=[probe]),
        imported={},
        method="none",
        weights=ScoreWeights(),
        prefix="    async with ",
    )
    assert ranked[0].score == pytest.approx(ranked[1].score)  # the code ends another word


def test_a_probe_limited_to_a_folder_gives_its_files_the_import_bonus():
    """A Go package probe names its folder (``cart/``): hits in files directly in it are
    where the import points; a subfolder's file is another package."""
    from greprag.models import Query

    probe = Query(r"^func\s+([A-Z]\w*)", "method", False, "go", "*", "import", 1.0, 4, ("cart/",))
    hits = [
        Candidate(path, 1, 1, "func Add() {}", prior=1.0, match_lines=(1,), query_index=0)
        for path in ("cart/cart.go", "cart/sub/x.go")
    ]
    ranked = score_candidates(
        hits,
        window="cart.",
        plan=QueryPlan(queries=[probe]),
        imported={},
        method="bm25",
        weights=ScoreWeights(),
    )
    scores = {c.path: c.score for c in ranked}
    bonus = ScoreWeights().import_bonus
    assert scores["cart/cart.go"] == pytest.approx(scores["cart/sub/x.go"] + bonus)
