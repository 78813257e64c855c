"""What the local context reads off the text before the cursor."""

from __future__ import annotations

import pytest

from greprag.context import build_local_context, context_at, parse_imports
from greprag.errors import RetrievalError


@pytest.mark.parametrize(
    ("before", "lang", "empty"),
    [
        ('def f(a,\n      b):\n    """Doc.\n\n    More.\n    """\n\n    ', "python", True),
        ('class A:\n    def f(self) -> int:\n        """One line."""\n        ', "python", True),
        ("async def f(\n    a: int,\n) -> None:\n    ", "python", True),
        ("def f():\n    x = 1\n    ", "python", False),
        ("def f():\n    if x:\n        ", "python", False),
        ("def f():\n    return g(x)\nx = ", "python", False),
        ("class A {\n  void f(int a,\n      int b)\n  {\n    ", "java", True),
        ("class A {\n  /** doc */\n  public void f() {\n    ", "java", True),
        ("class A {\n  void f() throws IOException {\n    ", "java", True),
        ("class A {\n  void f() {\n    if (x) {\n      ", "java", False),
        ("class A {\n  Runnable r = new Runnable() {\n    ", "java", False),
        ("class A {\n  void f() {\n    run();\n    ", "java", False),
        (  # a parameter list of many lines, annotated parameters first on theirs
            "class A {\n  @Override\n  static Map<K, V> prepare(\n      Map<K, V> map,\n"
            "      boolean strict,\n      @Nullable String key,\n"
            "      @Nullable Integer value) {\n    ",
            "java",
            True,
        ),
    ],
)
def test_an_empty_body_is_recognised_after_any_signature_and_docstring(before, lang, empty):
    assert build_local_context(before, lang=lang).empty_body is empty


def test_a_java_method_whose_parameters_span_many_lines_is_the_enclosing_function() -> None:
    before = "\n".join(
        [
            "class Tests {",
            "  private static Multimap<String, Integer> prepare(",
            "      Multimap<String, Integer> multimap,",
            "      boolean permitsDuplicates,",
            "      @Nullable String nullKey,",
            "      @Nullable Integer nullValue) {",
            "    ",
        ]
    )
    ctx = build_local_context(before, lang="java")
    assert (ctx.enclosing_class, ctx.enclosing_function) == ("Tests", "prepare")
    assert ctx.function_signature is not None and "multimap," in ctx.function_signature


def test_a_python_function_whose_parameters_span_many_lines_is_the_enclosing_function():
    before = (
        "class Loader:\n"
        "    def load_rows(\n"
        "        self,\n"
        "        source: dict[str, list[int]],\n"
        "        limit=None,\n"
        "    ) -> list[int]:\n"
        '        """Load the rows."""\n'
        "        "
    )
    ctx = build_local_context(before, lang="python")
    assert ctx.empty_body
    assert (ctx.enclosing_function, ctx.enclosing_class) == ("load_rows", "Loader")
    assert ctx.function_signature is not None and "limit=None" in ctx.function_signature


def test_a_long_python_signature_or_a_plain_string_docstring_still_opens_an_empty_body():
    params = "".join(f"        p{i}=None,\n" for i in range(14))  # past the 12 lines looked at
    long = f"class C:\n    def post(\n        self,\n{params}    ) -> None:\n        "
    ctx = build_local_context(long, lang="python")
    assert ctx.empty_body and ctx.enclosing_function == "post"
    plain = 'class Feed:\n    def __init__(self, url):\n        "All args are strings"\n        '
    assert build_local_context(plain, lang="python").empty_body


def test_parameters_documented_in_long_strings_still_open_an_empty_body():
    """fastapi documents each parameter in its annotation, ``Doc(\"\"\"...\"\"\")`` over many
    lines with brackets in the prose: its signatures run to hundreds of lines."""
    doc = "".join(
        f"                Line {i} of the doc (with a bracket: [see below).\n" for i in range(40)
    )
    param = (
        "        prefix: Annotated[\n"
        "            str,\n"
        '            Doc(\n                """\n'
        f"{doc}"
        '                """\n            ),\n'
        "        ] = '',  # a comment with a bracket (\n"
    )
    before = f"class APIRouter:\n    def delete(\n        self,\n{param * 3}    ) -> None:\n"
    ctx = build_local_context(before + '        """Add a route."""\n        ', lang="python")
    assert ctx.empty_body and ctx.enclosing_function == "delete"
    assert ctx.enclosing_class == "APIRouter"
    # a linter's comment after the docstring's closing quotes
    noqa = 'def condecimal(gt=None) -> type:\n    """Make a type.\n\n    """  # noqa: D212\n    '
    assert build_local_context(noqa, lang="python").empty_body


def test_unbalanced_closing_brackets_bound_the_bracket_scans(monkeypatch):
    """Each closing-bracket line looks up for its opener; thousands of unbalanced ones
    (each scan failing after a thousand lines) once cost seconds. All the scans of one
    context now read a bounded number of lines."""
    import greprag.context

    read: list[str] = []
    strip = greprag.context._strip_strings
    monkeypatch.setattr(greprag.context, "_strip_strings", lambda s: read.append(s) or strip(s))
    ctx = build_local_context("def f():\n" + "    )\n" * 5000 + "    ", lang="python")
    assert ctx.enclosing_function == "f"
    assert len(read) <= greprag.context._MAX_SCANNED_LINES


def test_a_comment_above_a_java_method_names_no_class():
    comment = "    // allow it by default on a class\n"
    header = "    public void testDefault() throws Exception\n    {\n  "
    before = "class Tests {\n" + comment + header
    ctx = build_local_context(before, lang="java")
    assert (ctx.enclosing_class, ctx.enclosing_function) == ("Tests", "testDefault")


def test_java_bindings_and_scope_are_read_line_by_line() -> None:
    before = "\n".join(
        [
            "class Store extends Base<Item> {",
            "    private Map<String, Item> items = new HashMap<>();",
            '    String label = "{ not a brace }";  // nor this {',
            "    List<Item",  # a declaration cut by a line break is none
            "        > parts;",
            "    void load(Path path) {",
            "        Reader reader = new FileReader(path);",
            "        this.cache = new Cache(reader);",
            "        ",
        ]
    )
    ctx = build_local_context(before, lang="java")
    assert ctx.annotations == {
        "items": "Map<String, Item>",
        "label": "String",
        "path": "Path",
        "reader": "Reader",
    }
    assert ctx.assignments == {"items": "HashMap", "reader": "FileReader", "cache": "Cache"}
    assert (ctx.enclosing_class, ctx.enclosing_function) == ("Store", "load")
    assert ctx.class_bases == ["Base", "Item"]


def test_a_java_type_starts_at_a_word_boundary() -> None:
    before = "\n".join(
        [
            "class Box {",
            "    xFoo hidden;",  # the type is xFoo, not Foo: no binding
            "    $Gen made;",  # "$" is no word character: Gen starts a word
            "    éFoo odd;",  # a letter of any script is: no boundary before Foo
            "    int count = 0; Item item = new Item();",
            "    void f() {",
            "        ",
        ]
    )
    ctx = build_local_context(before, lang="java")
    assert ctx.annotations == {"made": "Gen", "item": "Item"}
    assert ctx.assignments == {"item": "Item"}


def test_a_generic_class_declares_type_parameters_that_are_no_bases() -> None:
    before = "\n".join(
        [
            "abstract class ReferencePipeline<P_IN, P_OUT extends Comparable<P_OUT>>",
            "        extends AbstractPipeline<P_IN, P_OUT, Stream<P_OUT>>",
            "        implements Stream<P_OUT> {",
            "    public List<P_OUT> toList() {",
            "        ",
        ]
    )
    ctx = build_local_context(before, lang="java")
    assert ctx.enclosing_class == "ReferencePipeline"
    assert ctx.class_bases == ["Comparable", "AbstractPipeline", "Stream"]


def test_a_python_with_item_binds_its_name_to_the_call():
    before = (
        "def t():\n"
        "    with make_bar(3, key=f(1)) as bar, open(p) as fh:\n"
        "        async with self.client.stream('GET') as resp:\n"
        "            with lock:\n"
        "                "
    )
    ctx = build_local_context(before, lang="python")
    assert ctx.assignments == {"bar": "make_bar", "fh": "open", "resp": "self.client.stream"}


def test_rust_use_trees_name_each_import_across_lines():
    """Groups, nested groups, ``self``, aliases, globs and a tree over several lines (as
    rustfmt writes one), each name with its module path."""
    lines = [
        "use std::io::{self, Write};",
        "pub(crate) use crate::x::Y as Z;",
        "use super::*;",
        "use crate::{",
        "    ast::{self, Ast as Tree},  // the syntax",
        "    hir::Hir,",
        "};",
        "fn main() {}",
    ]
    found = [(r.module, r.name, r.alias, r.line) for r in parse_imports(lines, "rust")]
    assert found == [
        ("std", "io", None, 1),
        ("std::io", "Write", None, 1),
        ("crate::x", "Y", "Z", 2),
        ("super", None, None, 3),
        ("crate", "ast", None, 4),
        ("crate::ast", "Ast", "Tree", 4),
        ("crate::hir", "Hir", None, 4),
    ]


def test_typescript_imports_over_several_lines_and_whole_modules_are_read():
    """An ``import {`` whose names go on below (as Prettier writes a long one), type-only
    names among them, ``* as core`` (the module itself under a name), and a destructured
    ``require`` over several lines, ``name: alias`` renaming."""
    lines = [
        "import {",
        "\tImmerState,",
        "\ttype Patch, // a type",
        "\tisMap as mapCheck",
        '} from "../internal"',
        'import * as core from "../core/index.js";',
        'import React, { useState } from "react";',
        "const {",
        "  readFile,",
        "  writeFile: write,",
        '} = require("./fsutil");',
        "const {",
        "  a,",
        "} = props;",
        "const x = 1",
    ]
    found = [(r.module, r.name, r.alias, r.line) for r in parse_imports(lines, "typescript")]
    assert found == [
        ("../internal", "ImmerState", None, 1),
        ("../internal", "Patch", None, 1),
        ("../internal", "isMap", "mapCheck", 1),
        ("../core/index.js", None, "core", 6),
        ("react", "React", None, 7),
        ("react", "useState", None, 7),
        ("./fsutil", "readFile", None, 8),
        ("./fsutil", "writeFile", "write", 8),
    ]


def test_a_position_before_the_start_is_named_as_such(tmp_path):
    (tmp_path / "a.py").write_text("def f(x):\n    return x\n")
    cases = {(0, None): "lines count from 1", (2, -1): "columns count from 0"}
    cases |= {(9, None): "past the end of a.py", (2, 40): "past the end of line 2"}
    for (line, column), message in cases.items():
        with pytest.raises(RetrievalError, match=message):
            context_at(tmp_path, "a.py", line, column)
