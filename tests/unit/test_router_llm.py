"""LLMRouter over real HTTP to a local OpenAI-compatible stub, and query validation."""

from __future__ import annotations

import json
import os
import time

import pytest

from greprag.config import load_settings
from greprag.context import ImportRef, LocalContext
from greprag.errors import QueryRejected, RouterError
from greprag.models import Query
from greprag.router.llm import LLMRouter, main_identifier, parse_answer
from greprag.router.validate import validate_plan, validate_query
from tests.stubs.openai_stub import OpenAIStub

MODEL = "openai/stub-model"


@pytest.fixture(scope="session")
def stub():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # noqa: F401  (slow: once per session, outside any timed test)

    with OpenAIStub() as server:
        yield server


def router(stub: OpenAIStub, timeout: float = 8.0) -> LLMRouter:
    return LLMRouter(MODEL, timeout=timeout, api_base=stub.api_base, api_key="sk-test")


@pytest.fixture
def ctx() -> LocalContext:
    window = (
        "class SettingsLoader(BaseLoader):\n"
        "    def load_settings(self, source):\n"
        "        registry = self.plugin_registry\n"
        "        model = ConfigModel."
    )
    return LocalContext(
        before="from app.config import ConfigModel\n\n" + window,
        window=window,
        prefix="        model = ConfigModel.",
        path="app/loader.py",
        lang="python",
        line=7,
        column=28,
        imports=[ImportRef(module="app.config", name="ConfigModel", line=1)],
        enclosing_class="SettingsLoader",
        class_bases=["BaseLoader"],
        enclosing_function="load_settings",
        function_signature="def load_settings(self, source):",
    )


GOOD_PLAN = {
    "queries": [
        {"pattern": r"class\s+ConfigModel\b", "kind": "class", "regex": True},
        {"pattern": r"def\s+load_settings\s*\(", "kind": "method", "regex": True},
        {"pattern": "plugin_registry", "kind": "variable", "regex": False},
        {"pattern": "class.*ConfigModel", "kind": "class", "regex": True},
        {"pattern": r"ConfigModel\.from_dict\(", "kind": "other", "lang": "python"},
        {"pattern": r"class\s+ConfigModel\b", "kind": "class", "regex": True},
    ],
    "synonyms": {"settings": ["config", "options"], "loader": ["reader"]},
}


def test_good_plan_is_parsed_into_queries(stub, ctx):
    stub.reply("Sure! Here is the plan:\n```json\n" + json.dumps(GOOD_PLAN) + "\n```\n")
    plan = router(stub).plan(ctx)

    assert plan.router == "llm"
    assert [(q.pattern, q.kind, q.fixed) for q in plan.queries] == [
        (r"class\s+ConfigModel\b", "class", False),
        (r"def\s+load_settings\s*\(", "method", False),
        ("plugin_registry", "variable", True),
        ("class.*ConfigModel", "class", False),
        (r"ConfigModel\.from_dict\(", "other", False),
    ]
    assert {q.purpose for q in plan.queries} == {"llm"}
    assert {q.lang for q in plan.queries} == {"python"}
    assert [q.identifier for q in plan.queries] == [
        "ConfigModel",
        "load_settings",
        "plugin_registry",
        "ConfigModel",
        "ConfigModel",
    ]
    assert plan.synonyms == {"settings": ["config", "options"], "loader": ["reader"]}
    assert plan.fallbacks == []

    [request] = stub.requests
    assert request["model"] == "stub-model"
    prompt = "\n".join(m["content"] for m in request["messages"])
    for name in (
        "ConfigModel",
        "SettingsLoader",
        "load_settings",
        "plugin_registry",
        "app/loader.py",
        "app.config",
    ):
        assert name in prompt
    assert "STRICT JSON" in prompt
    assert stub.headers[0]["authorization"] == "Bearer sk-test"


HOSTILE = [
    {"pattern": "ConfigModel", "kind": "class", "command": "rg --pre sh ConfigModel"},
    {"pattern": "-–pre=sh", "kind": "other"},
    {"pattern": "passwd", "glob": "../../etc/passwd"},
    {"pattern": "root", "paths": ["/etc"]},
    {"pattern": "secret", "regex": False, "command": "rg -z secret"},
    {"pattern": r"(?<=def )load", "kind": "method"},
]


def test_hostile_queries_are_refused_and_siblings_survive(stub, ctx):
    valid = [
        {"pattern": r"class\s+SettingsLoader\b", "kind": "class"},
        {"pattern": "load_settings(", "kind": "method", "fixed": True, "glob": "src/**/*.py"},
    ]
    stub.reply(json.dumps({"queries": HOSTILE[:3] + valid + HOSTILE[3:]}))
    plan = router(stub).plan(ctx)

    assert [q.pattern for q in plan.queries] == [r"class\s+SettingsLoader\b", "load_settings("]
    assert len(plan.fallbacks) == len(HOSTILE)
    text = "\n".join(plan.fallbacks)
    for reason in (
        "dangerous rg flags",
        "starts with '-'",
        "escapes the repository",
        "look-around",
    ):
        assert reason in text
    for query in plan.queries:
        assert "pre" not in query.pattern and not query.pattern.startswith("-")


def test_all_hostile_plan_raises(stub, ctx):
    stub.reply(json.dumps({"queries": HOSTILE}))
    with pytest.raises(RouterError, match="no valid query"):
        router(stub).plan(ctx)


@pytest.mark.parametrize("content", ["I cannot help with that.", "{not json at all", "42", "[]"])
def test_garbage_answer_raises(stub, ctx, content):
    stub.reply(content)
    with pytest.raises(RouterError):
        router(stub).plan(ctx)


def test_timeout_falls_back_fast(stub, ctx):
    stub.reply(json.dumps(GOOD_PLAN), delay=10.0)
    started = time.monotonic()
    with pytest.raises(RouterError, match="timed out"):
        router(stub, timeout=1.0).plan(ctx)
    elapsed = time.monotonic() - started
    assert elapsed < 1.0 + 2.0, elapsed


def test_http_500_raises_without_retry(stub, ctx):
    stub.reply(json.dumps(GOOD_PLAN), status=500)
    with pytest.raises(RouterError, match="500"):
        router(stub).plan(ctx)
    assert len(stub.requests) == 1


def test_settings_come_from_the_environment(stub, ctx, monkeypatch):
    monkeypatch.setenv("GREPRAG_MODEL", MODEL)
    monkeypatch.setenv("GREPRAG_API_BASE", stub.api_base)
    monkeypatch.setenv("GREPRAG_API_KEY", "sk-env")
    stub.reply(json.dumps(GOOD_PLAN["queries"]))  # a bare list is a plan too
    plan = LLMRouter.from_settings(load_settings(None, llm_timeout=5.0)).plan(ctx)
    assert len(plan.queries) == 5
    assert stub.headers[0]["authorization"] == "Bearer sk-env"


def test_no_model_configured_raises(ctx, monkeypatch):
    monkeypatch.delenv("GREPRAG_MODEL", raising=False)
    with pytest.raises(RouterError, match="GREPRAG_MODEL"):
        LLMRouter.from_settings(load_settings(None)).plan(ctx)


# --- parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"queries": [{"pattern": "Foo"}]}',
        '```json\n{"queries": [{"pattern": "Foo"}]}\n```',
        '<think>maybe {"x": 1}?</think>Plan: {"queries": [{"pattern": "Foo"}]} done.',
        'I found [2] ideas: {"queries": [{"pattern": "Foo"}]}',
    ],
)
def test_parse_answer_finds_the_object(text):
    assert parse_answer(text) == {"queries": [{"pattern": "Foo"}]}


def test_parse_answer_accepts_a_bare_list_and_refuses_huge_answers():
    assert parse_answer('[{"pattern": "Foo"}]') == [{"pattern": "Foo"}]
    with pytest.raises(RouterError, match="longer"):
        parse_answer("[" * 50_000)


@pytest.mark.parametrize(
    ("pattern", "fixed", "lang", "expected"),
    [
        (r"class\s+ConfigModel\b", False, "python", "ConfigModel"),
        (r"function\s+getX\s*\(", False, "javascript", "getX"),
        (r"\$scope\.apply\(", False, "javascript", "$scope"),
        ("plugin_registry =", True, None, "plugin_registry"),
        (r"^end$", False, None, "end"),
    ],
)
def test_main_identifier(pattern, fixed, lang, expected):
    assert main_identifier(Query(pattern=pattern, fixed=fixed, lang=lang)) == expected


# --- validate_query: each rejection rule -----------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"pattern": 42}, "not a string"),
        ({}, "not a string"),
        ({"pattern": "   "}, "empty pattern"),
        ({"pattern": "x" * 201}, "longer than 200"),
        ({"pattern": "foo\x00bar"}, "NUL or newline"),
        ({"pattern": "foo\nbar"}, "NUL or newline"),
        ({"pattern": "foo\rbar"}, "NUL or newline"),
        ({"pattern": "--pre=sh"}, "starts with '-'"),
        ({"pattern": "-e", "fixed": True}, "starts with '-'"),
        ({"pattern": "foo --pre-glob *.gz"}, "embeds an rg flag"),
        ({"pattern": "foo --search-zip"}, "embeds an rg flag"),
        ({"pattern": "foo -z", "fixed": True}, "embeds an rg flag"),
        ({"pattern": "Foo", "command": "rg --pre=/bin/sh Foo"}, "dangerous rg flags"),
        ({"pattern": "Foo", "cmd": "rg -z Foo"}, "dangerous rg flags"),
        ({"pattern": "Foo", "args": ["--search-zip"]}, "dangerous rg flags"),
        ({"pattern": "Foo", "command": "grep Foo; rm -rf ~"}, "not allowed"),
        ({"pattern": "Foo", "glob": "../secrets/*"}, "escapes the repository"),
        ({"pattern": "Foo", "glob": "src/../../x"}, "escapes the repository"),
        ({"pattern": "Foo", "glob": "/etc/*"}, "escapes the repository"),
        ({"pattern": "Foo", "glob": "~/.ssh/*"}, "escapes the repository"),
        ({"pattern": "Foo", "glob": "!*.py"}, "escapes the repository"),
        ({"pattern": "Foo", "glob": "C:\\Windows\\*"}, "escapes the repository"),
        ({"pattern": "Foo", "path": "..\\..\\x"}, "escapes the repository"),
        ({"pattern": "Foo", "paths": ["src", "/root"]}, "escapes the repository"),
        ({"pattern": "Foo", "globs": 3}, "not a string or list"),
        ({"pattern": "foo("}, "invalid regex"),
        ({"pattern": "(?=foo)bar"}, "look-around"),
        ({"pattern": "(?!foo)bar"}, "look-around"),
        ({"pattern": "(?<=def )foo"}, "look-around"),
        ({"pattern": "(?<!x)foo"}, "look-around"),
        ({"pattern": r"(\w+)=\1"}, "backreference"),
        ({"pattern": r"(?P<n>\w+)=(?P=n)"}, "backreference"),
        ({"pattern": r"(?P<n>\w+)=\k<n>"}, "backreference"),
        ({"pattern": "(?>foo)"}, "atomic group"),
        ({"pattern": "foo|"}, "matches the empty string"),
        ({"pattern": ".*"}, "matches the empty string"),
        ({"pattern": "Foo", "fixed": "yes"}, "not a boolean"),
        ({"pattern": "Foo", "fixed": True, "regex": True}, "contradict"),
        ({"pattern": "Foo", "context_lines": 11}, "outside 0..10"),
        ({"pattern": "Foo", "context_lines": -1}, "outside 0..10"),
        ({"pattern": "Foo", "context_lines": "3"}, "not an integer"),
        ({"pattern": "Foo", "context_lines": True}, "not an integer"),
    ],
)
def test_validate_query_rejects(raw, reason):
    with pytest.raises(QueryRejected, match=reason.replace("(", r"\(").replace(".", r"\.")):
        validate_query(raw, default_lang="python")


def test_validate_query_rejects_non_dict():
    with pytest.raises(QueryRejected, match="not a JSON object"):
        validate_query(["Foo"], default_lang=None)  # type: ignore[arg-type]


def test_validate_query_accepts_and_normalises():
    query = validate_query(
        {"pattern": r"[a-z]+Config\b", "kind": "widget", "lang": "Rust", "context_lines": 0},
        default_lang="python",
    )
    assert query == Query(pattern=r"[a-z]+Config\b", kind="other", lang="rust", context_lines=0)
    assert validate_query({"pattern": "a(b", "fixed": True}, default_lang=None).fixed
    assert validate_query({"pattern": "Foo", "regex": False}, default_lang=None).fixed
    assert validate_query({"pattern": "Foo", "lang": "cobol"}, default_lang="go").lang == "go"
    assert validate_query({"pattern": r"\\1x"}, default_lang=None).pattern == r"\\1x"
    assert validate_query({"pattern": "Foo", "glob": "src/**/*.py"}, default_lang=None)
    assert validate_query({"pattern": "a-z", "fixed": True}, default_lang=None).pattern == "a-z"


# --- validate_plan ---------------------------------------------------------------------


def test_validate_plan_caps_dedupes_and_cleans_synonyms():
    raw = {
        "queries": [{"pattern": f"Name{i}"} for i in range(4)]
        + [{"pattern": "Name0"}, {"pattern": "-x"}]
        + [{"pattern": f"Extra{i}"} for i in range(10)],
        "synonyms": {"cfg": ["config", "", "--pre", 7, "cfg"], "bad": "nope", "x": []},
    }
    queries, synonyms, rejections = validate_plan(raw, default_lang="java", max_queries=6)
    assert [q.pattern for q in queries] == [
        "Name0",
        "Name1",
        "Name2",
        "Name3",
        "Extra0",
        "Extra1",
    ]
    assert {q.lang for q in queries} == {"java"}
    assert synonyms == {"cfg": ["config"]}
    assert any("starts with '-'" in r for r in rejections)
    assert any("first 6 valid" in r for r in rejections)
    assert any("'bad'" in r for r in rejections)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("queries", "not a JSON object or list"),
        ({"plan": []}, "no 'queries' list"),
        ({"queries": []}, "no valid query"),
        ([{"pattern": "-rf"}, "Foo"], "no valid query"),
    ],
)
def test_validate_plan_without_valid_queries_raises(raw, reason):
    with pytest.raises(QueryRejected, match=reason):
        validate_plan(raw, default_lang=None)
