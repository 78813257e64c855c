"""Router gaps of issue 8, each on a small repository written here and searched by real rg:
an open call whose import is traced is always probed, ``self.`` / ``this.`` reach the base
classes and their members, and a local method does not mask an imported function; the
cursor's own file below the cursor, which the prompt does not show; and a Java class of
the file's own package, found where an import would point."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from greprag import Retriever
from tests.conftest import (
    check_invariants,
    covering,
    cursor,
    describe,
    line_of,
    written_repo,
)
from tests.stubs.openai_stub import OpenAIStub


def _retrieved(repo: Path, file: str, line_contains: str, prefix: str, **settings):
    """The retrieval at the cursor just after ``prefix`` on the first line of ``file``
    holding ``line_contains``, under ``settings``, its invariants checked."""
    at = cursor(repo, file, line_contains, prefix)
    res = Retriever(repo, **settings).retrieve(**at.kwargs())
    check_invariants(repo, res, at.file, 4096, at.line)
    return res


def _reached_by_one_hop(repo: Path, res, name: str, path: str, definition: str) -> None:
    """The plan's one second hop is class ``name`` in ``path``, and the context covers
    the first line of ``path`` matching ``definition``."""
    hop = [q for q in res.queries if q.purpose == "second hop"]
    assert [(q.identifier, q.paths) for q in hop] == [(name, (path,))]
    wanted = line_of(repo, path, definition)
    assert covering(res, path, wanted), describe(res)


PY = {
    "layout/__init__.py": "",
    "layout/grid.py": (
        "def arrange(rows, key=None, gap=0):\n"
        '    """Lay ``rows`` out on a grid, sorted by ``key``."""\n'
        "    return sorted(rows, key=key)\n"
    ),
    "layout/cells.py": "".join(f"class Cell{i}:\n    width = {i}\n\n\n" for i in range(40)),
    "view.py": (
        "from layout.grid import arrange\n"
        "from layout.cells import " + ", ".join(f"Cell{i}" for i in range(40)) + "\n"
        "\n"
        "\n"
        "class View:\n"
        "    def arrange(self, items):\n"
        "        return list(items)\n"
        "\n"
        "    def render(self, rows):\n"
        "        cells = [Cell1(), Cell2(), Cell3(), Cell4(), Cell5(), Cell6()]\n"
        "        more = [Cell7(), Cell8(), Cell9(), Cell10(), Cell11(), Cell12()]\n"
        "        placed = arrange(rows, key=len(cells), gap=len(more))\n"
    ),
    "shapes/__init__.py": "",
    "shapes/base.py": (
        "class Shape:\n"
        "    def area_of_outline(self):\n"
        "        return 0\n"
        "\n"
        "    def scale_by(self, factor):\n"
        "        return self\n"
    ),
    "shapes/square.py": (
        "from shapes.base import Shape\n"
        "\n"
        "\n"
        "class Square(Shape):\n"
        "    def describe(self):\n"
        "        return self.area_of_outline()\n"
    ),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return written_repo(tmp_path_factory.mktemp("gaps") / "repo", PY)


def test_a_traced_open_call_is_probed_even_with_a_local_method_of_its_name(repo):
    res = _retrieved(repo, "view.py", "placed = arrange(", "gap=len(more)")
    probes = [q for q in res.queries if q.identifier == "arrange" and q.purpose == "definition"]
    assert probes, [q.identifier for q in res.queries]
    grid = line_of(repo, "layout/grid.py", r"def arrange")
    hit = [b for b in res.blocks if b.path == "layout/grid.py" and b.start_line <= grid]
    assert hit and hit[0] == max(res.blocks, key=lambda b: b.score), describe(res)


def test_the_traced_call_survives_a_full_plan_in_the_file_its_import_names(repo):
    at = cursor(repo, "view.py", "placed = arrange(", "gap=len(more)")
    plan = Retriever(repo, max_queries=2).plan(**at.kwargs())
    assert len(plan.queries) == 2
    arrange = [q for q in plan.queries if q.identifier == "arrange"]
    assert arrange and arrange[0].purpose == "definition"
    assert arrange[0].paths in ((), ("layout/grid.py",))


def test_self_reaches_the_imported_base_and_its_members(repo):
    res = _retrieved(repo, "shapes/square.py", "return self.area_of", "return self.area_")
    member = [q for q in res.queries if q.paths == ("shapes/base.py",)]
    assert member and member[0].identifier == "area_", [q.to_dict() for q in res.queries]
    assert any(q.identifier == "Shape" for q in res.queries)
    definition = line_of(repo, "shapes/base.py", r"def area_of_outline")
    assert any(
        b.path == "shapes/base.py" and b.start_line <= definition <= b.end_line for b in res.blocks
    ), describe(res)


JAVA = {
    "src/zoo/Animal.java": (
        "package zoo;\n"
        "\n"
        "public abstract class Animal {\n"
        "    protected int legs;\n"
        "\n"
        "    public String greetVisitor(String name) {\n"
        '        return "hello " + name;\n'
        "    }\n"
        "}\n"
    ),
    "src/zoo/Cat.java": (
        "package zoo;\n"
        "\n"
        "public class Cat extends Animal {\n"
        "    public String welcome(String who) {\n"
        "        Noise1 first = new Noise1();\n"
        "        Noise2 second = new Noise2();\n"
        "        return this.greetVisitor(who);\n"
        "    }\n"
        "}\n"
    ),
    **{
        f"src/zoo/Noise{i}.java": (
            f"package zoo;\n\npublic class Noise{i} {{\n    String who() {{ return null; }}\n}}\n"
        )
        for i in range(12)
    },
}


def test_this_in_a_subclass_reaches_the_base_in_the_same_package(tmp_path):
    repo = written_repo(tmp_path / "zoo", JAVA)
    res = _retrieved(repo, "src/zoo/Cat.java", "return this.", "return this.")
    base = line_of(repo, "src/zoo/Animal.java", r"class Animal")
    blocks = [b for b in res.blocks if b.path == "src/zoo/Animal.java"]
    assert blocks and blocks[0].start_line <= base <= blocks[0].end_line, describe(res)
    assert "greetVisitor" in blocks[0].text
    assert res.queries[0].identifier == "Animal", [q.identifier for q in res.queries]


def _methods(prefix: str, count: int) -> str:
    """``count`` one-line methods named ``prefix_0`` ... at a class's indentation."""
    return "".join(f"    def {prefix}_{i}(self):\n        return {i}\n\n" for i in range(count))


MODULE = {
    "kit/__init__.py": "",
    "kit/typing_extra.py": (
        "class Namespace:\n"
        + _methods("method", 40)
        + "\n"
        + "def eval_type(value, globalns=None):\n"
        + '    """Evaluate ``value`` as a type."""\n'
        + "    return value\n"
    ),
    "kit/schema.py": (
        "from kit import typing_extra\n\n\ndef generate(obj):\n    return typing_extra.\n"
    ),
}


def test_a_module_at_the_cursor_shows_its_own_names_past_a_long_class(tmp_path):
    """The module probe matches top-level definitions only: 40 methods of a class above do
    not use up rg's matches per file before the module's functions."""
    repo = written_repo(tmp_path / "kit", MODULE)
    res = _retrieved(repo, "kit/schema.py", "return typing_extra.", "return typing_extra.")
    assert any(q.paths == ("kit/typing_extra.py",) for q in res.queries), describe(res)
    assert "def eval_type(value, globalns=None):" in res.context, describe(res)


SIGNATURES = {
    "kit/__init__.py": "",
    "kit/signatures.py": "".join(f"def check_{i}(sig):\n    return sig\n\n\n" for i in range(12))
    + "def has_varargs(func):\n    return None\n",
    "kit/tests/test_signatures.py": (
        "import kit.signatures as sigs\n"
        "\n"
        "\n"
        "def test_for_coverage():\n"
        "    assert sigs.check_3(1)\n"
        "    assert sigs.check_4(None) is None\n"
        "    assert sigs.has_varargs(None) is None\n"
    ),
}


def test_a_module_just_used_above_a_line_start_shows_its_other_names(tmp_path):
    """``import kit.signatures as sigs``, then ``sigs.check_4(...)`` on the lines just above
    a line start: the module's other names (``has_varargs``, used nowhere yet) join."""
    repo = written_repo(tmp_path / "kit", SIGNATURES)
    res = _retrieved(repo, "kit/tests/test_signatures.py", "assert sigs.has_varargs", "    ")
    assert "def has_varargs(func):" in res.context, describe(res)


def _own(receiver: str) -> dict[str, str]:
    """A class whose method ``run`` is being written on ``receiver.``: 40 methods above
    it, the one it needs 30 lines below."""
    decorator = "    @classmethod\n" if receiver == "cls" else ""
    return {
        "jobs/__init__.py": "",
        "jobs/runner.py": (
            "class Runner:\n"
            + _methods("step", 40)
            + f"{decorator}    def run({receiver}):\n"
            + f"        {receiver}.\n"
            + "\n"
            + _methods("tidy", 10)
            + "    def finish_up(self, code, *, quiet=False):\n"
            + '        """Close the run with ``code``."""\n'
            + "        return code\n"
        ),
    }


@pytest.mark.parametrize("receiver", ["self", "cls"])
def test_self_reaches_the_members_of_its_own_class_below_the_cursor(tmp_path, receiver):
    """The prompt holds the members above the cursor; the ones below it are shown, even
    past 40 methods above, which would use up rg's usual matches per file, and past the
    30 lines next door."""
    repo = written_repo(tmp_path / "jobs", _own(receiver))
    res = _retrieved(
        repo, "jobs/runner.py", f"        {receiver}.", f"        {receiver}.", similar=False
    )  # the probe's doing alone
    own = [q for q in res.queries if q.paths == ("jobs/runner.py",)]
    assert own and own[0].purpose == "wildcard", [q.to_dict() for q in res.queries]
    assert "def finish_up(self, code, *, quiet=False):" in res.context, describe(res)
    assert "def step_3(self):" not in res.context  # above the cursor: the prompt has it


FLOOD = {
    **{f"pkg/mod{i}.py": f"def must_go_{i}(x):\n    return x\n" for i in range(50)},
    "pkg/checks.py": (
        "def check(obj):\n"
        "    return must_\n"
        "\n"
        + "".join(f"def unrelated_{i}(x):\n    return x\n\n" for i in range(12))
        + "def must_be(kind, option, obj):\n"
        + '    """The error for ``option`` not being a ``kind``."""\n'
        + "    return kind\n"
    ),
}


def test_a_flooded_probe_keeps_the_definition_below_the_cursor_in_its_own_file(tmp_path):
    """``must_`` is defined in 51 files, past the flood limit (40): the probe keeps only
    files other probes hit, and always the cursor's own, below the cursor."""
    repo = written_repo(tmp_path / "pkg", FLOOD)
    res = _retrieved(
        repo, "pkg/checks.py", "return must_", "return must_", similar=False, flood_files=40
    )
    assert "def must_be(kind, option, obj):" in res.context, describe(res)


def test_a_query_keeps_only_its_nearest_lines_below_the_cursor_in_its_own_file():
    """Every probe keeps at most ``OWN_FILE_HITS`` lines of the cursor's own file (the
    first admitted are the nearest below the cursor), in order, and all of other files'."""
    from greprag.rg import RgMatch
    from greprag.routes.grep import OWN_FILE_HITS, _nearest_own

    hits = [RgMatch("a.py", 3, "x"), *(RgMatch("own.py", n, "x") for n in range(100, 130))]
    hits += [RgMatch("z.py", 1, "x")]
    kept = _nearest_own(hits, "own.py")
    own = [m.line_number for m in kept if m.path == "own.py"]
    assert own == list(range(100, 100 + OWN_FILE_HITS))
    assert [m.path for m in kept if m.path != "own.py"] == ["a.py", "z.py"]
    assert _nearest_own(hits, None) == hits


HIERARCHY = {
    "web/__init__.py": "from web.blueprints import Blueprint\n",
    "web/scaffold.py": (
        "class Scaffold:\n"
        "    def register_error_handler(self, code, handler):\n"
        "        self.handlers[code] = handler\n"
    ),
    "web/sansio/__init__.py": "",
    "web/sansio/blueprints.py": (
        "from ..scaffold import Scaffold\n"
        "\n"
        "\n"
        "class Blueprint(Scaffold):\n"
        "    def record(self, func):\n"
        "        self.deferred.append(func)\n"
    ),
    "web/blueprints.py": (
        "from .sansio.blueprints import Blueprint as SansioBlueprint\n"
        "\n"
        "\n"
        "class Blueprint(SansioBlueprint):\n"
        "    def send_static_file(self, filename):\n"
        "        return filename\n"
    ),
    "tests/test_handlers.py": (
        "import web\n"
        "\n"
        "\n"
        "def test_handler():\n"
        '    blue = web.Blueprint("blue", __name__)\n'
        "    blue.register_error_handler(404, str)\n"
    ),
}


def test_a_member_access_reaches_the_base_of_the_base_of_its_class(tmp_path):
    """``blue.`` on a Blueprint: the member is inherited from the base of its base,
    named there by an import alias; similar code off, so only the bases' probe finds it."""
    repo = written_repo(tmp_path / "web", HIERARCHY)
    res = _retrieved(repo, "tests/test_handlers.py", "blue.register", "blue.", similar=False)
    _reached_by_one_hop(repo, res, "Scaffold", "web/scaffold.py", r"def register_error_handler")


def test_a_java_member_access_reaches_the_base_in_the_same_package(tmp_path):
    files = {
        **JAVA,
        "src/zoo/Keeper.java": (
            "package zoo;\n"
            "\n"
            "public class Keeper {\n"
            "    String feed() {\n"
            "        Cat cat = new Cat();\n"
            "        return cat.greetVisitor(null);\n"
            "    }\n"
            "}\n"
        ),
    }
    repo = written_repo(tmp_path / "zoo", files)
    res = _retrieved(repo, "src/zoo/Keeper.java", "cat.greet", "cat.", similar=False)
    _reached_by_one_hop(repo, res, "Animal", "src/zoo/Animal.java", r"greetVisitor")


FACTORY = {
    "tags/__init__.py": "",
    "tags/structures/__init__.py": "from .etag import ETags\n",
    "tags/structures/etag.py": (
        "class ETags:\n    def contains_weak(self, etag):\n        return etag in self._weak\n"
    ),
    "tags/http.py": (
        "from __future__ import annotations\n"
        "\n"
        "from . import structures as ds\n"
        "\n"
        "\n"
        "def parse_etags(\n"
        "    value: str | None,\n"
        ") -> ds.ETags:\n"
        "    return ds.ETags(value)\n"
    ),
    "tests/test_tags.py": (
        "from tags import http\n"
        "\n"
        "\n"
        "def test_etags():\n"
        '    es = http.parse_etags(\'"foo", W/"baz"\')\n'
        '    assert es.contains_weak("baz")\n'
    ),
}


@pytest.mark.parametrize(
    "binding",
    ["    es = http.parse_etags('\"foo\"')\n", "    with http.parse_etags('\"foo\"') as es:\n"],
    ids=["assigned", "with-as"],
)
def test_a_receiver_from_a_factory_reaches_the_class_the_factory_returns(tmp_path, binding):
    """``es = http.parse_etags(...)`` or ``with http.parse_etags(...) as es:``: the
    factory's return annotation names the class, re-exported by a package aliased at
    import; similar code off."""
    test = FACTORY["tests/test_tags.py"].replace(
        '    es = http.parse_etags(\'"foo", W/"baz"\')\n', binding
    )
    assert test != FACTORY["tests/test_tags.py"]
    repo = written_repo(tmp_path / "tags", {**FACTORY, "tests/test_tags.py": test})
    res = _retrieved(repo, "tests/test_tags.py", "es.contains", "es.", similar=False)
    assert any(q.identifier == "parse_etags" and q.kind == "method" for q in res.queries)
    _reached_by_one_hop(repo, res, "ETags", "tags/structures/etag.py", r"def contains_weak")


LOWER_CASE_CLASS = {
    "dates/__init__.py": "",
    "dates/rrule.py": (
        "class rrulebase(object):\n"
        "    def between(self, after, before, inc=False):\n"
        "        return [d for d in self if after <= d <= before]\n"
        "\n"
        "\n"
        "class rrule(rrulebase):\n"
        "    def __init__(self, freq, dtstart=None):\n"
        "        self.freq = freq\n"
        "\n"
        "\n"
        "YEARLY = 0\n"
    ),
    "holidays.py": (
        "from dates import rrule\n"
        "\n"
        "MLK_DAY = rrule.rrule(freq=rrule.YEARLY)\n"
        "\n"
        "\n"
        "def test_mlk_day():\n"
        "    assert MLK_DAY.between(1, 2) == []\n"
    ),
}


def test_a_constant_built_by_a_lower_case_class_reaches_its_base(tmp_path):
    """``MLK_DAY = rrule.rrule(...)`` then ``MLK_DAY.``: ``rrule`` is a class called like
    a function, found by the module's import probe; its base defines the member."""
    repo = written_repo(tmp_path / "dates", LOWER_CASE_CLASS)
    res = _retrieved(repo, "holidays.py", "MLK_DAY.between", "MLK_DAY.", similar=False)
    hops = [(q.identifier, q.purpose) for q in res.queries]
    assert ("rrule", "second hop") in hops and ("rrulebase", "second hop") in hops, hops
    wanted = line_of(repo, "dates/rrule.py", r"def between")
    assert covering(res, "dates/rrule.py", wanted), describe(res)


FLUENT = {
    "src/main/java/org/csv/Format.java": (
        "package org.csv;\n"
        "\n"
        "public final class Format {\n"
        "    public static Builder builder() {\n"
        "        return new Builder();\n"
        "    }\n"
        + "".join(
            f"    public int option{i}() {{\n        return {i};\n    }}\n" for i in range(60)
        )
        + "\n"
        "    public static class Builder {\n"
        "        public Builder setQuote(char quote) {\n"
        "            return this;\n"
        "        }\n"
        "\n"
        "        public Builder setTrimEverything(boolean trim) {\n"
        "            return this;\n"
        "        }\n"
        "    }\n"
        "}\n"
    ),
    # lines the probe of ``setQuote`` matches that declare nothing, in a file read first
    "src/main/java/org/csv/Aliases.java": (
        "package org.csv;\n"
        "\n"
        "final class Aliases {\n"
        "    static Object single(Format.Builder b) {\n"
        "        return setQuote(b, 'a');\n"
        "    }\n"
        "\n"
        "    static Object twice(Format.Builder b) {\n"
        "        return setQuote(b.setQuote('b'));\n"
        "    }\n"
        "}\n"
    ),
    "src/test/java/org/csv/FormatTest.java": (
        "package org.csv;\n"
        "\n"
        "public class FormatTest {\n"
        "    public void quoted() {\n"
        "        Object format = Format.builder()\n"
        "            .setQuote('x')\n"
        "            .setTrimEverything(true);\n"
        "    }\n"
        "}\n"
    ),
}


def test_a_java_call_chain_reaches_the_class_its_last_call_returns(tmp_path):
    """``Format.builder().setQuote('x').``: the probe of ``setQuote`` finds ``public
    Builder setQuote(...)`` (past the lines it matches that declare nothing), a class
    nested in another file's class, which joins as a second hop."""
    repo = written_repo(tmp_path / "fluent", FLUENT)
    res = _retrieved(
        repo, "src/test/java/org/csv/FormatTest.java", ".setTrimEverything", ".", similar=False
    )
    hop = [q for q in res.queries if q.purpose == "second hop"]
    assert [(q.identifier, q.paths) for q in hop] == [
        ("Builder", ("src/main/java/org/csv/Format.java",))
    ]
    wanted = line_of(repo, "src/main/java/org/csv/Format.java", r"class Builder")
    assert covering(res, "src/main/java/org/csv/Format.java", wanted), describe(res)


def test_a_java_call_returning_a_qualified_nested_class_reaches_it(tmp_path):
    """``Formats.excelDefaults().``, returning ``Format.Builder``: Format is beside the
    caller in its package (no import), and Builder is found inside it."""
    files = {
        **FLUENT,
        "src/main/java/org/csv/Formats.java": (
            "package org.csv;\n"
            "\n"
            "public final class Formats {\n"
            "    public static Format.Builder excelDefaults() {\n"
            "        return Format.builder();\n"
            "    }\n"
            "}\n"
        ),
        "src/test/java/org/csv/FormatsTest.java": (
            "package org.csv;\n"
            "\n"
            "public class FormatsTest {\n"
            "    public void copied() {\n"
            "        Object format = Formats.excelDefaults().setTrimEverything(true);\n"
            "    }\n"
            "}\n"
        ),
    }
    repo = written_repo(tmp_path / "fluent", files)
    res = _retrieved(
        repo,
        "src/test/java/org/csv/FormatsTest.java",
        ".setTrimEverything",
        "excelDefaults().",
        similar=False,
    )
    hop = [q for q in res.queries if q.purpose == "second hop"]
    assert [(q.identifier, q.paths) for q in hop] == [
        ("Builder", ("src/main/java/org/csv/Format.java",))
    ]


GRANDPARENT = {
    "kit/__init__.py": "",
    "kit/core.py": "class Core:\n    def describe_everything(self):\n        return repr(self)\n",
    "kit/middle.py": (
        "from kit.core import Core\n"
        "\n"
        "\n"
        "class Middle(Core):\n"
        "    def step(self):\n"
        "        return 1\n"
    ),
    "kit/leaf.py": (
        "from kit.middle import Middle\n"
        "\n"
        "\n"
        "class Leaf(Middle):\n"
        "    def run(self):\n"
        "        return self.describe_everything()\n"
    ),
}


def test_self_reaches_the_base_of_its_base(tmp_path):
    repo = written_repo(tmp_path / "kit", GRANDPARENT)
    res = _retrieved(repo, "kit/leaf.py", "self.describe", "self.", similar=False)
    _reached_by_one_hop(repo, res, "Core", "kit/core.py", r"def describe_everything")


def test_a_base_imported_under_its_subclass_name_is_found_where_the_import_points(tmp_path):
    """``class Model(Model)``: the header names the class its import points to, not itself
    (``Article`` derives from the local ``Model``, which derives from ``orm``'s)."""
    files = {
        "orm/__init__.py": "",
        "orm/base.py": "class Model:\n    def save_everything(self):\n        return 1\n",
        "app/__init__.py": "",
        "app/models.py": (
            "from orm.base import Model\n"
            "\n"
            "\n"
            "class Model(Model):\n"
            "    label = 'app'\n"
            "\n"
            "\n"
            "class Article(Model):\n"
            "    title = ''\n"
        ),
        "app/views.py": (
            "from app.models import Article\n"
            "\n"
            "\n"
            "def view():\n"
            "    item = Article()\n"
            "    return item.save_everything()\n"
        ),
    }
    repo = written_repo(tmp_path / "orm", files)
    res = _retrieved(repo, "app/views.py", "item.save", "item.", similar=False)
    hop = [(q.identifier, q.paths) for q in res.queries if q.purpose == "second hop"]
    assert hop == [("Model", ("app/models.py",)), ("Model", ("orm/base.py",))], describe(res)


FIRST_USE = {
    "net/__init__.py": "",
    "net/hosts.py": (
        "def parse_host(header):\n"
        '    """Split a Host header into name and port."""\n'
        "    name, _, port = (header or '').partition(':')\n"
        "    return name, port\n"
    ),
    "net/routing.py": (
        "from net.hosts import parse_host\n"
        "\n"
        "\n"
        "def host_matches(scope, pattern):\n"
        "    parsed_host = parse_host(scope.get('host'))\n"
        "    return parsed_host[0] == pattern\n"
    ),
    "net/url.py": (
        "from net.hosts import parse_host\n"
        "\n"
        "\n"
        "def build_url(scope):\n"
        "    host_header = None\n"
        "    for key, value in scope['headers']:\n"
        "        if key == b'host':\n"
        "            host_header = value.decode('latin-1')\n"
        "\n"
        "    return host_header\n"
    ),
}


def test_an_imported_name_not_used_yet_shows_its_uses_elsewhere(tmp_path):
    """``parse_host`` is imported and not used yet: its next use is likely the line being
    written, and other files' uses of it show how it is called (``parsed_host = ...``)."""
    repo = written_repo(tmp_path / "net", FIRST_USE)
    res = _retrieved(repo, "net/url.py", "    return host_header", "    ", similar=False)
    uses = [q for q in res.queries if q.purpose == "usage" and q.identifier == "parse_host"]
    assert uses and re.search(uses[0].pattern, "    parsed_host = parse_host(x)"), describe(res)
    wanted = line_of(repo, "net/routing.py", r"parsed_host = parse_host")
    assert covering(res, "net/routing.py", wanted), describe(res)


BARS = {
    "term/__init__.py": "",
    "term/bars.py": "".join(
        f"class Bar{i}:\n    def format_{name}(self):\n        return {i}\n\n\n"
        for i, name in enumerate(["eta", "pct", "pos", "line"])
    ),
    "tests/test_bars.py": (
        "from helpers import make_bar\n"
        "\n"
        "\n"
        "def test_progressbar_format_pos(runner):\n"
        "    with make_bar(3) as progress:\n"
        "        result = progress.format_pos()\n"
    ),
}


def test_a_tests_name_leads_to_the_function_under_test(tmp_path):
    """``progress.`` in ``test_progressbar_format_pos``: the receiver comes from a helper
    that says nothing of its type, but the test's name names the method; similar code
    off, so only the test-subject probe finds it."""
    repo = written_repo(tmp_path / "term", BARS)
    res = _retrieved(repo, "tests/test_bars.py", "result = progress", "progress.", similar=False)
    wanted = line_of(repo, "term/bars.py", r"def format_pos")
    assert covering(res, "term/bars.py", wanted), describe(res)
    assert not covering(res, "term/bars.py", line_of(repo, "term/bars.py", r"def format_eta"))


SEEN_WITH = {
    "cache/__init__.py": "",
    "cache/buckets.py": (
        "class Bucket:\n"
        "    def reset(self):\n"
        "        self.code = None\n"
        "\n"
        "\n"
        "class BytecodeCache:\n"
        "    def fetch_bucket(self, name):\n"
        "        return Bucket()\n"
        "\n"
        "    def store_bucket(self, bucket):\n"
        "        raise NotImplementedError()\n"
    ),
    "cache/loader.py": (
        "def load(environment, name):\n"
        "    bcc = environment.bytecode_cache\n"
        "    bucket = bcc.fetch_bucket(name)\n"
        "    if bucket.code is None:\n"
        "        bcc.store_bucket(bucket)\n"
    ),
}


def test_a_receiver_of_unnamed_type_reaches_the_class_of_the_methods_called_on_it(tmp_path):
    """``bcc.`` with ``bcc = environment.bytecode_cache``: nothing names its type, but
    ``bcc.fetch_bucket(...)`` above is defined in one class, whose other members show;
    similar code off."""
    repo = written_repo(tmp_path / "cache", SEEN_WITH)
    res = _retrieved(repo, "cache/loader.py", "bcc.store", "bcc.", similar=False)
    _reached_by_one_hop(repo, res, "BytecodeCache", "cache/buckets.py", r"def store_bucket")


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


@pytest.mark.parametrize(
    ("file", "line_contains", "prefix", "wanted_file", "wanted"),
    [
        ("view.py", "placed = arrange(", "gap=len(more)", "layout/grid.py", r"def arrange"),
        (
            "shapes/square.py",
            "return self.area_of",
            "return self.area_",
            "shapes/base.py",
            r"def area_of_outline",
        ),
        ("tests/test_bars.py", "result = progress", "progress.", "term/bars.py", r"def format_pos"),
    ],
)
def test_the_gaps_stay_closed_when_a_model_plans(
    tmp_path, repo, stub, monkeypatch, file, line_contains, prefix, wanted_file, wanted
):
    """A model that plans nothing useful (a real HTTP stub): the traced open call, the
    base's member and the test's subject are still probed, after the model's query."""
    monkeypatch.setenv("GREPRAG_API_BASE", stub.api_base)
    monkeypatch.setenv("GREPRAG_API_KEY", "sk-test")
    useless = {"pattern": r"class\s+Unrelated\b", "kind": "class", "regex": True}
    stub.reply(json.dumps({"queries": [useless]}))
    where = repo if file != "tests/test_bars.py" else written_repo(tmp_path / "term", BARS)
    res = _retrieved(
        where,
        file,
        line_contains,
        prefix,
        router="llm",
        model="openai/stub-model",
        similar=False,
    )
    assert res.router == "llm" and res.queries[0].pattern == useless["pattern"], res.fallbacks
    assert len(res.queries) > 1
    assert covering(res, wanted_file, line_of(where, wanted_file, wanted)), describe(res)


def _widget(package: str) -> str:
    return f"package {package};\n\npublic class Widget {{\n    int price() {{ return 2; }}\n}}\n"


SHOP = {
    "core/src/com/acme/shop/Widget.java": _widget("com.acme.shop"),
    # another module's Widget, as good a match, listed first: it stays first unless the
    # cursor's package counts
    "app/src/org/old/Widget.java": _widget("org.old"),
    "core/test/com/acme/shop/CartTest.java": (
        "package com.acme.shop;\n"
        "\n"
        "{import}"
        "public class CartTest {\n"
        "    int cartTotal(int basket) {\n"
        "        Widget widget = new Widget();\n"
        "        return widget.price() * basket;\n"
        "    }\n"
        "}\n"
    ),
}


@pytest.mark.parametrize(
    ("imported", "first"),
    [("", "core/src/com/acme/shop/Widget.java"), ("javax.swing", "app/src/org/old/Widget.java")],
)
def test_a_java_class_of_the_files_own_package_ranks_as_found_where_its_package_is(
    tmp_path, imported, first
):
    """``Widget`` needs no import in its own package, in another source root; a
    single-type import of another ``Widget`` (outside the repository) shadows it."""
    files = dict(SHOP)
    test = "core/test/com/acme/shop/CartTest.java"
    header = f"import {imported}.Widget;\n\n" if imported else ""
    files[test] = files[test].replace("{import}", header)
    repo = written_repo(tmp_path / "shop", files)
    res = _retrieved(repo, test, "widget.price", "widget.", similar=False)
    order = [b.path for b in res.blocks if b.path.endswith("/Widget.java")]
    assert order[0] == first and len(order) == 2


CRATE = {
    "Cargo.toml": '[package]\nname = "shapes"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub mod geometry;\npub mod render;\n",
    "src/geometry/mod.rs": "pub mod circle;\n",
    "src/geometry/circle.rs": (
        "pub struct Circle {\n"
        "    pub radius: f64,\n"
        "}\n"
        "\n"
        "impl Circle {\n"
        "    pub fn with_radius(radius: f64) -> Circle {\n"
        "        Circle { radius }\n"
        "    }\n"
        "}\n"
    ),
    "src/render.rs": (
        "use std::fmt::Write;\n"
        "use crate::geometry::circle::Circle;\n"
        "\n"
        "pub fn unit_disc() -> String {\n"
        "    let mut out = String::new();\n"
        "    let shape = Circle::with_radius(1.0);\n"
        '    write!(out, "{}", shape.radius).unwrap();\n'
        "    out\n"
        "}\n"
    ),
}


def test_a_rust_name_imported_from_the_crate_is_probed_where_its_path_points(tmp_path):
    """``use crate::geometry::circle::Circle`` is the crate's own: at the name's first use
    its definition is probed, and found where the path points, first (before, every
    imported name counted as another crate's and none was sought; ``Write`` of ``std``
    still is not). Similar code off: the probe alone."""
    repo = written_repo(tmp_path / "shapes", CRATE)
    res = _retrieved(repo, "src/render.rs", "let shape = Circle", "let shape = ", similar=False)
    probes = [q.identifier for q in res.queries if q.purpose == "import"]
    assert probes == ["Circle"], describe(res)
    first = res.blocks[0]
    assert (first.path, first.start_line) == ("src/geometry/circle.rs", 1), describe(res)
    assert "pub struct Circle {" in res.context, describe(res)


INHERITED_FIELD = {
    "src/bands/meta/Header.java": (
        "package bands.meta;\n"
        "\n"
        "public class Header {\n"
        "    public int getFloatCount() {\n"
        "        return 3;\n"
        "    }\n"
        "}\n"
    ),
    "src/bands/BandSet.java": (
        "package bands;\n"
        "\n"
        "import bands.meta.Header;\n"
        "\n"
        "public abstract class BandSet {\n"
        "    protected BandSet(Header header) {\n"
        "        this.header = header;\n"
        "    }\n"
        "\n"
        "    Header header() {\n"
        "        return header;\n"
        "    }\n"
        "\n"
        "    protected final Header header;\n"
        "}\n"
    ),
    **{
        f"src/other/Entry{i}.java": (
            f"package other;\n\npublic class Entry{i} {{\n    private Record{i} header;\n}}\n"
        )
        for i in range(6)
    },
    **{
        f"src/other/Record{i}.java": f"package other;\n\npublic class Record{i} {{\n}}\n"
        for i in range(6)
    },
    "src/bands/CpBands.java": (
        "package bands;\n"
        "\n"
        "public class CpBands extends BandSet {\n"
        "    void parseFloats() {\n"
        "        final int count = header.getFloatCount();\n"
        "    }\n"
        "}\n"
    ),
}


def test_a_field_the_enclosing_class_inherits_reaches_the_class_its_base_declares(tmp_path):
    """``header.`` in a subclass whose base declares ``protected final Header header;``
    (below a getter's ``return header;``): Header, imported into the base's file, joins as
    the one second hop, not the classes of other files' own ``header`` fields."""
    repo = written_repo(tmp_path / "bands", INHERITED_FIELD)
    res = _retrieved(repo, "src/bands/CpBands.java", "header.get", "header.", similar=False)
    _reached_by_one_hop(repo, res, "Header", "src/bands/meta/Header.java", r"getFloatCount")


INHERITED_ATTRIBUTE = {
    "shop/__init__.py": "",
    "shop/store.py": "class Store:\n    def reserve(self, item):\n        return item\n",
    "shop/base.py": (
        "from shop.store import Store\n"
        "\n"
        "\n"
        "class Service:\n"
        "    def __init__(self):\n"
        "        self.store = Store()\n"
    ),
    "shop/orders.py": (
        "from shop.base import Service\n"
        "\n"
        "\n"
        "class Orders(Service):\n"
        "    def place(self, item):\n"
        "        return self.store.reserve(item)\n"
    ),
}


def test_an_attribute_a_python_base_sets_reaches_its_class(tmp_path):
    repo = written_repo(tmp_path / "shop", INHERITED_ATTRIBUTE)
    res = _retrieved(repo, "shop/orders.py", "self.store.", "self.store.", similar=False)
    _reached_by_one_hop(repo, res, "Store", "shop/store.py", r"def reserve")
