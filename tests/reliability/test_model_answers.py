"""What a model answers is hostile data: over real HTTP to a local stub, every bad answer
is refused or bounded, and the retrieval still answers (offline router or the valid rest)."""

from __future__ import annotations

import json
import time

import pytest

from greprag import Retriever
from tests.conftest import check_invariants
from tests.reliability.cases import case, cases
from tests.reliability.conftest import LOADER_REPO, Proposed, make_repo
from tests.stubs.openai_stub import OpenAIStub

AREA = "model output"
GOOD = {"pattern": r"^class\s+DataLoader\b", "kind": "class", "regex": True}


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return make_repo(tmp_path_factory.mktemp("llm") / "repo", LOADER_REPO)


@pytest.fixture
def ask(stub, repo, monkeypatch):
    """Retrieve at the cursor with the LLM router, the stub answering ``content``."""
    monkeypatch.setenv("GREPRAG_API_BASE", stub.api_base)
    monkeypatch.setenv("GREPRAG_API_KEY", "sk-test")

    def run(content: str, *, status: int = 200, delay: float = 0.0, **settings):
        stub.reply(content, status=status, delay=delay)
        retriever = Retriever(
            repo, router="llm", model="openai/stub-model", routes="grep", **settings
        )
        res = retriever.retrieve(file="app.py", line=4)
        check_invariants(repo, res, "app.py", retriever.settings.budget, 4)
        return res

    return run


def _plan(*queries: dict, **extra) -> str:
    return json.dumps({"queries": list(queries), **extra})


REFUSED = [
    ("rg-flag", "a pattern that is an rg flag (--pre=/bin/sh)", {"pattern": "--pre=/bin/sh"}),
    ("embedded-flag", "a pattern embedding -z / --search-zip", {"pattern": "x --search-zip"}),
    (
        "command",
        "a 'command' field (rg --pre=sh DataLoader)",
        {"pattern": "DataLoader", "command": "rg --pre=sh x"},
    ),
    (
        "glob-escape",
        "a glob escaping the repo (../../etc/passwd)",
        {"pattern": "DataLoader", "glob": "../../etc/passwd"},
    ),
    (
        "absolute-path",
        "an absolute path field (/etc)",
        {"pattern": "DataLoader", "paths": ["/etc"]},
    ),
    ("nul", "a pattern with a NUL byte", {"pattern": "Data\x00Loader"}),
    ("newline", "a pattern with a newline", {"pattern": "Data\nLoader"}),
    ("empty-match", "a regex matching every line (a*)", {"pattern": "a*"}),
    ("lookaround", "a look-ahead (rg has none)", {"pattern": "Data(?=Loader)"}),
    ("backreference", "a backreference", {"pattern": r"(Data)\1"}),
    ("context-lines", "context_lines = 100000", {"pattern": "DataLoader", "context_lines": 100000}),
    ("long", "a 5,000-character pattern", {"pattern": "D" * 5000}),
    ("not-a-string", "a pattern that is a number", {"pattern": 42}),
]


@cases(
    AREA,
    [
        (
            ident,
            f"a plan whose only query has {hostile}",
            "refused; offline router answers, note says why",
            raw,
        )
        for ident, hostile, raw in REFUSED
    ],
    "raw",
)
def test_a_hostile_query_is_refused(ask, raw):
    res = ask(_plan(raw))
    assert res.router == "offline" and any(b.path == "pkg/loader.py" for b in res.blocks)
    assert any("llm router failed" in note for note in res.fallbacks), res.fallbacks


@cases(
    AREA,
    [
        (
            "prose",
            "an answer in prose, not JSON",
            "offline router; note 'not JSON'",
            "I would grep.",
            200,
            "not JSON",
        ),
        (
            "huge",
            "a 30,000-character answer",
            "offline router; note 'longer than'",
            "[" + " " * 30000 + "]",
            200,
            "longer than",
        ),
        (
            "deep",
            "JSON nested 15,000 deep",
            "offline router; note 'not JSON'",
            "[" * 15_000,
            200,
            "not JSON",
        ),
        ("http-500", "HTTP 500", "offline router; note 'HTTP 500'", "{}", 500, "HTTP 500"),
        (
            "http-429",
            "HTTP 429 (rate limited)",
            "offline router; note 'HTTP 429'",
            "{}",
            429,
            "HTTP 429",
        ),
        (
            "no-queries",
            "valid JSON without queries",
            "offline router; note 'no ... queries'",
            '{"plan": 1}',
            200,
            "queries",
        ),
    ],
    "content, status, said",
)
def test_a_broken_answer_falls_back(ask, content, status, said):
    res = ask(content, status=status)
    assert res.router == "offline" and any(b.path == "pkg/loader.py" for b in res.blocks)
    assert any(said in note for note in res.fallbacks), res.fallbacks


@case(
    AREA,
    "an answer slower than llm_timeout (5 s against 1 s)",
    "offline router within 3 s; note 'timed out'",
)
def test_a_slow_answer_falls_back_in_time(ask):
    ask(_plan(GOOD), delay=5.0, llm_timeout=1.0)  # the first call also pays litellm's import
    started = time.perf_counter()
    res = ask(_plan(GOOD), delay=5.0, llm_timeout=1.0)
    assert time.perf_counter() - started < 3.0
    assert res.router == "offline" and any("timed out" in n for n in res.fallbacks)


@cases(
    AREA,
    [
        (
            "rg-rejects",
            r"a plan with a valid query and one rg rejects (DataLoader\Z)",
            "the valid query's result; note 'rejected by rg'",
            r"DataLoader\Z",
            "rejected by rg",
        ),
        (
            "backtracking",
            "a plan with a valid query and a backtracking one ((x|xx)+$)",
            "the valid query's result within the bound",
            "(x|xx)+$",
            None,
        ),
    ],
    "bad, said",
)
def test_a_bad_regex_beside_a_good_one(ask, bad, said):
    started = time.perf_counter()
    res = ask(_plan({"pattern": bad, "regex": True}, GOOD))
    assert time.perf_counter() - started < 20
    assert res.router == "llm" and any(b.path == "pkg/loader.py" for b in res.blocks)
    if said:
        assert any(said in note for note in res.fallbacks), res.fallbacks


@case(
    AREA,
    "a plan of 200 queries",
    "the first max_queries (10) valid ones kept; note says the rest were dropped",
)
def test_too_many_queries_are_capped(ask):
    queries = [GOOD] + [{"pattern": f"N{i}", "fixed": True} for i in range(199)]
    res = ask(_plan(*queries))
    assert res.router == "llm" and len(res.queries) == 10
    assert any("dropped" in note for note in res.fallbacks)


@case(AREA, "synonyms that are not strings, flags or 10 KB long", "dropped; the queries still used")
def test_malformed_synonyms_are_dropped(ask):
    synonyms = {"loader": [1, "--pre", "x" * 10_000, "reader"], "-x": ["y"], "k": "not a list"}
    res = ask(_plan(GOOD, synonyms=synonyms))
    assert res.router == "llm" and any(b.path == "pkg/loader.py" for b in res.blocks)
    assert any("synonyms" in note for note in res.fallbacks)


@case(
    AREA,
    "a query whose every hit is punctuation only (no token to score: ZeroDivisionError before)",
    "a result, scores 0, no exception",
)
def test_hits_without_tokens_are_scored(tmp_path):
    repo = make_repo(tmp_path / "repo", {"pkg/a.py": "x = (\n    1\n))\n", "app.py": "y = 1\n"})
    res = Retriever(repo, router=Proposed(r"^\)+$", context_lines=0)).retrieve(
        file="app.py", line=1
    )
    assert res.blocks and all(b.path == "pkg/a.py" for b in res.blocks)
