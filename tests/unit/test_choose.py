import pytest

from greprag.context import ImportRef, LocalContext
from greprag.models import Candidate, Query
from greprag.routes.choose import choose_routes


def ctx(
    prefix: str = "x = ", lang: str | None = "python", window: str | None = None, **kw
) -> LocalContext:
    return LocalContext(
        before=window or prefix, window=window or prefix, prefix=prefix, lang=lang, **kw
    )


def hits(n: int) -> list[Candidate]:
    return [Candidate(path=f"f{i}.py", start_line=1, end_line=2, text="") for i in range(n)]


QUERIES = [Query(pattern="def load_store", identifier="load_store")]


def route(mode="auto", grep=5, queries=QUERIES, context=None, installed=True):
    return choose_routes(
        mode,
        grep_candidates=hits(grep),
        queries=queries,
        ctx=context or ctx(),
        dense_installed=installed,
    )


def test_strong_grep_evidence_keeps_grep_only():
    routes, reason = route()
    assert routes == ["grep"] and "strong" in reason


def test_explicit_modes_and_missing_extra():
    assert route("grep", grep=0)[0] == ["grep"]
    assert route("dense")[0] == ["dense"]
    routes, reason = route("auto", grep=0, installed=False)
    assert routes == ["grep"] and "not installed" in reason
    with pytest.raises(ValueError):
        route("everything")


def test_no_hits_and_few_hits():
    assert route(grep=0) == (["grep", "dense"], "grep found nothing")
    routes, reason = route(grep=2)
    assert routes == ["grep", "dense"] and "only 2 hit" in reason


def test_only_generic_identifiers():
    queries = [Query(pattern="config", identifier="config"), Query(pattern="run", identifier="run")]
    routes, reason = route(queries=queries)
    assert routes == ["grep", "dense"] and "generic identifiers (config, run)" in reason


def test_member_access_on_untyped_receiver():
    routes, reason = route(context=ctx("        self.store."))
    assert routes == ["grep", "dense"] and "`store`" in reason


@pytest.mark.parametrize(
    "context",
    [
        ctx("        self.store.", annotations={"store": "Store"}),
        ctx("    store.", assignments={"store": "Store"}),
        ctx("    for mark in item.get_markers()."),
    ],
)
def test_member_access_on_typed_receiver_may_be_inherited(context):
    routes, reason = route(context=context)
    assert routes == ["grep", "dense"] and "inherited" in reason


@pytest.mark.parametrize(
    "context",
    [
        ctx("    np.", imports=[ImportRef(module="numpy", alias="np")]),
        ctx("    self."),
        ctx("    Store."),
        ctx("    x = 3."),
        ctx("    store = "),
    ],
)
def test_no_member_access_on_an_object_is_not_weak(context):
    assert route(context=context)[0] == ["grep"]


def test_prose_question():
    text = "how do I retry a failed upload to the storage server?"
    routes, reason = route(context=ctx(text, lang=None))
    assert routes == ["grep", "dense"] and "prose" in reason
    assert route(context=ctx("foo(bar[0]) = {x: y}", lang=None))[0] == ["grep"]
