"""The classes a receiver of unnamed type is seen with (``routes.members``)."""

from __future__ import annotations

from greprag.context import build_local_context
from greprag.models import Candidate, Query, QueryPlan
from greprag.routes.bases import ClassSite
from greprag.routes.members import classes_of_members

FILES = {
    "a.py": [
        "class Cache:",
        "    def fetch(self, key):",
        "        return key",
        "",
        "    # a comment at the class's indentation",
        "    def store(self, key, value):",
        "        pass",
        "",
        "def fetch_all(keys):",
        "    return keys",
    ],
    "b.py": [f"class Other{i}:\n    def close(self):\n        pass" for i in range(3)],
}
FILES["b.py"] = "\n".join(FILES["b.py"]).split("\n")


def _hit(path: str, line: int, query: int) -> Candidate:
    text = FILES[path][line - 1]
    return Candidate(path, line, line, text, "grep", match_lines=(line,), queries=(query,))


def _plan(*names: str) -> QueryPlan:
    return QueryPlan([Query(rf"def\s+{n}\b", "method", identifier=n) for n in names])


def test_the_class_defining_a_method_called_on_the_receiver_is_its_type():
    ctx = build_local_context(
        "def f(env):\n    c = env.cache\n    c.fetch(1)\n    c.", lang="python"
    )
    found = classes_of_members(ctx, _plan("fetch"), [_hit("a.py", 2, 0)], FILES.__getitem__)
    assert found == [ClassSite("Cache", "a.py", 1)]


def test_a_method_of_many_classes_a_module_function_or_an_annotation_says_nothing():
    before = "def f(env):\n    c = env.cache\n    c.close()\n    c.fetch_all(2)\n    c."
    ctx = build_local_context(before, lang="python")
    hits = [_hit("b.py", 2 + 3 * i, 0) for i in range(3)] + [_hit("a.py", 9, 1)]
    assert classes_of_members(ctx, _plan("close", "fetch_all"), hits, FILES.__getitem__) == []
    typed = build_local_context("def f(c: Cache):\n    c.fetch(1)\n    c.", lang="python")
    assert classes_of_members(typed, _plan("fetch"), [_hit("a.py", 2, 0)], FILES.__getitem__) == []
    store = build_local_context(
        "def f(env):\n    c = env.cache\n    c.store(1, 2)\n    c.", lang="python"
    )
    assert classes_of_members(store, _plan("store"), [_hit("a.py", 6, 0)], FILES.__getitem__) == [
        ClassSite("Cache", "a.py", 1)
    ]  # a comment between the header and the method is no header
