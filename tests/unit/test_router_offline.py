"""The offline router's plans for typical cursors."""

from __future__ import annotations

import re
from dataclasses import replace

from greprag.context import build_local_context
from greprag.models import Query, QueryPlan
from greprag.router import OfflineRouter
from greprag.router.names import blank_docstrings
from greprag.router.offline import RouterWeights
from greprag.router.probes import expected_names, subject_names


def _plan(src: str, lang: str, imported: dict[str, str] | None = None):
    ctx = build_local_context(src, lang=lang)
    return ctx, OfflineRouter().plan(ctx, imported or {})


def _subject_probe(plan, first_name: str):
    """The one probe of the names under test that ``first_name`` leads."""
    found = [q for q in plan.queries if q.identifier.startswith(first_name + ",")]
    assert len(found) == 1, found
    return found[0]


def test_router_targets_the_receiver_type_first():
    src = (
        "from data.loader import DataLoader\n\nclass P:\n"
        "    def __init__(self, config):\n        self.loader = DataLoader(config.path)\n\n"
        "    def go(self, i):\n        data = self.loader."
    )
    _, plan = _plan(src, "python", {"DataLoader": "data/loader.py"})
    first = plan.queries[0]
    assert first.identifier == "DataLoader" and first.kind == "class"
    assert len(plan.queries) <= 10
    assert any(q.purpose == "usage" and q.identifier == "loader" for q in plan.queries)


def test_router_for_an_empty_body_asks_for_bases_and_siblings():
    src = (
        "from transforms.base import BaseTransform\n\n"
        "class NormalizeTransform(BaseTransform):\n    def transform(self, data):\n        "
    )
    ctx, plan = _plan(src, "python", {"BaseTransform": "transforms/base.py"})
    assert ctx.empty_body
    ids = {(q.identifier, q.purpose) for q in plan.queries}
    assert ("BaseTransform", "definition") in ids and ("transform", "definition") in ids
    assert any(q.purpose == "wildcard" and q.identifier == "BaseTransform" for q in plan.queries)


def test_an_empty_body_wants_the_members_of_its_parameters_types():
    src = (
        "package com.shop;\n\npublic class CartTest {\n"
        "  private static Cart filled(\n      Cart cart,\n      @Nullable Label label) {\n    "
    )
    ctx, plan = _plan(src, "java")
    assert ctx.empty_body
    hops = {q.identifier for q in plan.queries if q.purpose == "second hop"}
    assert hops == {"Cart", "Label"}  # the parameters' types; not Nullable, an annotation
    _, elsewhere = _plan(src.replace("{\n    ", "{\n    cart.add(label);\n    "), "java")
    assert not any(q.purpose == "second hop" for q in elsewhere.queries)


def test_an_empty_body_looks_for_the_helpers_its_name_starts_in_its_own_file():
    """``remove`` opened empty: ``removeMapping``-like definitions of the cursor's own file
    (its lines below are not in the prompt), not its overloads; none once the body has
    code, none for a generic name or a test."""
    src = "public class HashedMap {\n    public Object remove(Object key) {\n        "
    path = "src/HashedMap.java"

    def helpers(text: str) -> list[Query]:
        ctx = build_local_context(text, lang="java", path=path)
        plan = OfflineRouter().plan(ctx, {})
        return [q for q in plan.queries if q.paths == (path,) and q.purpose == "wildcard"]

    [probe] = helpers(src)
    assert probe.identifier == "remove" and probe.weight == RouterWeights().own_helpers
    assert re.search(probe.pattern, "    protected void removeMapping(Entry e, int i) {")
    assert not re.search(probe.pattern, "    public Object remove(Object key, Object v) {")
    assert helpers(src + "key = convertKey(key);\n        ") == []
    assert helpers(src.replace("remove(", "get(")) == []
    assert helpers(src.replace("remove(", "testRemove(")) == []  # its siblings are tests


def test_router_uses_the_declared_java_type():
    src = (
        "import com.shop.orders.OrderStatus;\n"
        "public class OrderHandler implements RequestHandler<OrderRequest> {\n"
        "    public Response handle(OrderRequest request) {\n        OrderStatus status = "
    )
    _, plan = _plan(src, "java", {"OrderStatus": "orders/OrderStatus.java"})
    assert plan.queries[0].identifier == "OrderStatus"
    assert any(q.identifier == "RequestHandler" for q in plan.queries)


def test_router_does_not_probe_generic_names_on_their_own():
    src = "def main(config):\n    init()\n    config.run()\n    x = run(config)\n    "
    _, plan = _plan(src, "python")
    assert not any(q.identifier in ("init", "config", "run") for q in plan.queries)


def test_router_probes_members_of_an_imported_module_in_its_file_only():
    src = (
        "from . import errors\n\ndef check(v):\n    if v is None:\n"
        "        raise errors.NoneError()\n    raise errors."
    )
    ctx = build_local_context(src, lang="python", path="pkg/validators.py")
    plan = OfflineRouter().plan(ctx, {"errors": "pkg/errors.py"})
    module_probes = [q for q in plan.queries if q.paths == ("pkg/errors.py",)]
    assert module_probes and module_probes[0].weight == 1.0  # every top-level name, 'errors.'
    ctx = build_local_context(src.rsplit("\n", 1)[0] + "\n    ", lang="python", path="pkg/v.py")
    plan = OfflineRouter().plan(ctx, {"errors": "pkg/errors.py"})
    assert any("NoneError" in q.pattern and q.paths == ("pkg/errors.py",) for q in plan.queries)


def test_router_probes_every_name_of_an_imported_module_not_yet_used():
    src = "from . import _config\n\ndef validate(value):\n    if "
    ctx = build_local_context(src, lang="python", path="pkg/setters.py")
    plan = OfflineRouter().plan(ctx, {"_config": "pkg/_config.py"})
    every_name = [q for q in plan.queries if q.paths == ("pkg/_config.py",) and q.identifier == "*"]
    assert [q.weight for q in every_name] == [RouterWeights().module_unused]
    used = src + "_config.x:\n        return value\n    "
    plan = OfflineRouter().plan(
        build_local_context(used, lang="python"), {"_config": "pkg/_config.py"}
    )
    # used just above a line start: every name still, as the next line may take another
    every_name = [q for q in plan.queries if q.identifier == "*"]
    assert [q.weight for q in every_name] == [RouterWeights().module_just_used]
    used_earlier = used + "a = 1\n    b = 2\n    c = 3\n    "
    plan = OfflineRouter().plan(
        build_local_context(used_earlier, lang="python"), {"_config": "pkg/_config.py"}
    )
    assert not any(q.identifier == "*" for q in plan.queries)


def test_router_spends_no_probe_on_a_module_name_and_keeps_the_unused_module_in_a_full_plan():
    src = (
        "from tornado import httputil, iostream, netutil\n"
        "from tornado.escape import native_str\n\n"
        "class Context:\n"
        "    def apply(self, headers: httputil.HTTPHeaders, stream: iostream.IOStream):\n"
        "        ip = headers.get('X-Forwarded-For', self.remote_ip)\n"
        "        for ip in (cand.strip() for cand in reversed(ip.split(','))):\n"
        "            if ip not in self.trusted_downstream:\n"
        "                break\n"
        "        ip = native_str(headers.get('X-Real-Ip', ip))\n"
        "        if "
    )
    modules = {m: f"tornado/{m}.py" for m in ("httputil", "iostream", "netutil")}
    _, plan = _plan(src, "python", {**modules, "native_str": "tornado/escape.py"})
    assert len(plan.queries) == 10  # a full plan
    assert not any(
        q.identifier in modules and q.purpose in ("definition", "import") for q in plan.queries
    )
    assert not any(
        q.purpose == "import" and any(m in q.identifier.split(",") for m in modules)
        for q in plan.queries
    )
    assert any(q.paths == ("tornado/netutil.py",) and q.identifier == "*" for q in plan.queries)


def test_a_getters_result_as_receiver_leads_to_the_type_its_name_gives():
    src = (
        "class Module {\n  View resolveView(int tag) {\n    return mImplementation\n"
        "        .getViewOperationQueue()\n        ."
    )
    _, plan = _plan(src, "java")
    first = plan.queries[0]
    assert (first.identifier, first.kind, first.purpose) == (
        "ViewOperationQueue",
        "class",
        "definition",
    )
    assert any(q.identifier == "getViewOperationQueue" for q in plan.queries)
    _, one_word = _plan("class A {\n  boolean p = FileSystems.getDefault().", "java")
    assert not any(q.identifier == "Default" for q in one_word.queries)


_HOSTS_IMPORT = "from net.hosts import parse_host, split_port, HostName, quote_host\n"
_HOSTS = {n: "net/hosts.py" for n in ("parse_host", "split_port", "HostName", "quote_host")}
_BUILD = "\ndef build(scope):\n    name = quote_host(scope)\n    "


def test_router_probes_uses_of_the_latest_imports_not_used_yet():
    src = _HOSTS_IMPORT + _BUILD
    _, plan = _plan(src, "python", _HOSTS)
    uses = [q for q in plan.queries if q.purpose == "usage" and "," in q.identifier]
    assert [q.identifier for q in uses] == ["parse_host,split_port,HostName"]
    assert [q.weight for q in uses] == [RouterWeights().import_unused_usage]
    pattern = uses[0].pattern
    assert re.search(pattern, "x = HostName.parse(h)") and re.search(pattern, "split_port(h)")
    assert not re.search(pattern, "quote_host(h)")
    _, at_member = _plan(src + "name.", "python", _HOSTS)  # the member comes next
    assert not any(q.purpose == "usage" and "," in q.identifier for q in at_member.queries)


def test_a_comment_opener_in_a_string_hides_no_code_from_the_plan():
    src = _HOSTS_IMPORT + 'ACCEPT = "*/*"\n' + _BUILD
    _, plan = _plan(src, "python", _HOSTS)
    uses = [q.identifier for q in plan.queries if q.purpose == "usage" and "," in q.identifier]
    assert uses == ["parse_host,split_port,HostName"]  # quote_host is used below "*/*"


def test_blank_docstrings_empties_only_the_languages_own_doc_blocks():
    python = 'x = "*/*"  # """ not a docstring\n"""Doc\nmore."""\ny = 2'
    assert blank_docstrings(python, "python") == 'x = "*/*"  # """ not a docstring\n\n\ny = 2'
    java = 'String all = "/*";\n/** Doc\n * more. */\nint y; // /* no comment\nint z;'
    blanked = 'String all = "/*";\n\n\nint y; // /* no comment\nint z;'
    assert blank_docstrings(java, "java") == blanked


def test_a_tests_name_gives_the_names_under_test():
    assert subject_names("progressbar_format_pos") == [
        "progressbar_format_pos",
        "progressbar_format",
        "format_pos",
    ]
    assert subject_names("ReadSwappedLong") == ["readSwappedLong", "readSwapped", "swappedLong"]
    assert subject_names("Copy_readerToWriter_IO84") == []  # ``copy``: one short word
    assert subject_names("validator") == ["validator"]
    assert "with_empty" not in subject_names("parse_with_empty")  # a condition, not a name


def test_router_probes_the_function_a_test_names_without_displacing_a_probe():
    body = (
        "def test_progressbar_format_pos(runner):\n"
        "    with make(3) as progress:\n"
        "        result = progress."
    )
    ctx, plan = _plan(body, "python")
    subject = _subject_probe(plan, "progressbar_format_pos")
    assert subject.weight == RouterWeights().test_subject
    assert re.search(subject.pattern, "    def format_pos(self) -> str:")
    assert not re.search(subject.pattern, "    def format(self) -> str:")
    plain = OfflineRouter().plan(replace(ctx, enclosing_function="progressbar_format_pos"))
    assert [q for q in plan.queries if q is not subject] == plain.queries
    _, java = _plan("class T {\n  @Test\n  void testReadSwappedLong() {\n    long v = ", "java")
    assert any(q.identifier.startswith("readSwappedLong,") for q in java.queries)


def test_a_tests_expectations_give_the_names_they_expect_of():
    signature = "def test_flags(opt_decls, expect_is_flag, expect_is_bool_flag, expected_size):"
    assert expected_names(signature) == ["is_flag", "is_bool_flag"]  # ``size``: one short word
    assert expected_names("void testX(int expectedStatusCode, int expect_100)") == ["statusCode"]
    body = (
        "def test_flag_auto_detection(opt_decls, expect_is_bool_flag):\n"
        "    option = Option([opt_decls])\n"
        "    "
    )
    _, plan = _plan(body, "python")
    subject = _subject_probe(plan, "is_bool_flag")
    assert re.search(subject.pattern, "    def is_bool_flag(self) -> bool:")
    _, plain = _plan(body.replace("expect_is_bool_flag", "flag"), "python")
    assert not any("is_bool_flag" in q.identifier for q in plain.queries)


def test_router_probes_the_class_a_test_class_names():
    python = "class TestProgressBar:\n    def test_render(self):\n        bar = make()\n        "
    _, plan = _plan(python, "python")
    subject = [q for q in plan.queries if q.identifier == "ProgressBar,progress_bar"]
    assert [(q.kind, q.purpose, q.weight) for q in subject] == [
        ("class", "definition", RouterWeights().test_subject)
    ]
    assert re.search(subject[0].pattern, "class ProgressBar(t.Generic[V]):")
    assert re.search(subject[0].pattern, "def progress_bar(iterable, length=None):")
    assert not re.search(subject[0].pattern, "    bar = progress_bar(items)")
    _, per_function = _plan(python.replace("TestProgressBar", "InterleaveLongestTests"), "python")
    probe = next(q for q in per_function.queries if q.identifier.endswith(",interleave_longest"))
    assert re.search(probe.pattern, "def interleave_longest(*iterables):")
    java = "class StringUtilsTest {\n  @Test\n  void blanks() {\n    int n = "
    _, plan = _plan(java, "java")
    assert any(q.identifier == "StringUtils" and q.kind == "class" for q in plan.queries)
    _, feature = _plan(java.replace("StringUtilsTest", "ArrayUtilsInsertTest"), "java")
    probe = next(q for q in feature.queries if q.identifier == "ArrayUtilsInsert,ArrayUtils")
    assert re.search(probe.pattern, "public class ArrayUtils {")
    assert not re.search(probe.pattern, "public class Array {")  # one word names too much
    ctx, tester = _plan("class Tester:\n    def run(self):\n        x = 1\n        ", "python")
    assert tester.queries == OfflineRouter().plan(replace(ctx, enclosing_class="Runner")).queries


def test_a_models_full_plan_keeps_every_query_and_gains_the_traced_call():
    """``complete`` adds what the offline router never plans without after another
    router's queries, displacing none: a model ranks by order, its weights are all 1."""
    src = "from layout.grid import arrange\n\ndef render(rows):\n    placed = arrange(rows, "
    ctx = build_local_context(src, lang="python")
    model = [Query(rf"class\s+Unrelated{i}\b", "class", lang="python") for i in range(10)]
    plan = OfflineRouter().complete(
        QueryPlan(queries=model, router="llm"), ctx, {"arrange": "layout/grid.py"}
    )
    assert plan.router == "llm" and plan.queries[:10] == model
    traced = plan.queries[10:]
    assert [(q.identifier, q.purpose, q.paths) for q in traced] == [
        ("arrange", "definition", ("layout/grid.py",))
    ]
    assert OfflineRouter().complete(plan, ctx, {"arrange": "layout/grid.py"}).queries == (
        plan.queries
    )


def test_import_statements_leave_no_names_in_the_code_anywhere_in_the_file():
    from greprag.languages import IDENTIFIER_RE
    from greprag.router.probes import code_without_imports

    text = (
        "import alpha\n"
        "\n\n  from beta import (gamma,\n    delta)\n"
        "from eps.zeta import eta  # why\n"
        "def run():\n"
        "    import theta\n"
        "    return kappa.lam(gamma)\n"
        "ximport = iota\n"
    )
    code = code_without_imports(text)
    assert set(IDENTIFIER_RE.findall(code)) == {
        "def",
        "run",
        "return",
        "kappa",
        "lam",
        "gamma",
        "ximport",
        "iota",
    }
    assert code.count("\n") <= text.count("\n")


def test_type_definitions_of_a_braced_file_are_whole_words():
    from greprag.router.names import _local_definitions

    before = (
        "class Outer extends subclass {\n"
        "  xinterface Bogus;\n"
        "  subclass interface Inner {}\n"
        "  enum E {}\n"
    )
    ctx = build_local_context(before, lang="java")
    assert _local_definitions(ctx) == {"Outer", "Inner", "E"}
