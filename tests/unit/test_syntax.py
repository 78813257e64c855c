"""Block boundaries and outlines per language (tree-sitter) and the line-based fallbacks,
the widening policy, and what the syntax layer may import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import greprag
from greprag.cursor_file import CursorFile
from greprag.syntax import (
    BlockWidener,
    Span,
    class_outlined,
    definition_spans,
    expand_range,
    file_spans,
)
from greprag.syntax.members import class_analysis
from greprag.syntax.scan import LocalExpander, class_skeleton, enclosing_class
from tests.conftest import outline

PYTHON = '''\
import os
from typing import (
    Any,
    Optional,
)

LIMITS = {
    "a": 1,
    "b": 2,
}


class Store:
    """Key-value store.

    Longer description.
    """

    kind = "memory"

    @staticmethod
    @cached(size=3)
    def make(name: str) -> "Store":
        value = compute(name)
        return Store()

    def get(self, key):
        def helper(k):
            return k.upper()

        return helper(key)


def main():
    print(LIMITS)
'''


def _span(spans: list[Span], name: str) -> Span:
    return next(s for s in spans if s.name == name)


def test_python_spans_include_decorators_and_nesting() -> None:
    spans = definition_spans(PYTHON, "python")
    assert [(s.name, s.kind, s.start_line, s.end_line, s.header_end_line) for s in spans] == [
        ("Store", "class", 13, 31, 13),
        ("make", "function", 21, 25, 23),
        ("get", "function", 27, 31, 27),
        ("helper", "function", 28, 29, 28),
        ("main", "function", 34, 35, 34),
    ]


def test_python_expand_range() -> None:
    assert expand_range(PYTHON, "python", 24, 24) == (21, 25)  # method body -> with decorators
    assert expand_range(PYTHON, "python", 22, 22) == (21, 25)  # decorator line -> the method
    assert expand_range(PYTHON, "python", 13, 13) == (13, 31)  # class line -> whole class
    assert expand_range(PYTHON, "python", 29, 29) == (28, 29)  # nested function
    assert expand_range(PYTHON, "python", 31, 31) == (27, 31)  # method body around nested def
    assert expand_range(PYTHON, "python", 8, 8) == (7, 10)  # multi-line assignment
    assert expand_range(PYTHON, "python", 3, 3) == (2, 5)  # multi-line import
    assert expand_range(PYTHON, "python", 19, 19) == (19, 19)  # class attribute
    assert expand_range(PYTHON, "python", 24, 28) == (21, 31)  # crosses two sibling methods
    assert expand_range(PYTHON, "python", 9, 13) == (7, 31)  # statement + class it touches
    assert expand_range(PYTHON, "python", 11, 12) == (11, 12)  # blank lines stay themselves


def test_expand_range_never_enters_an_untouched_neighbour() -> None:
    low, high = expand_range(PYTHON, "python", 34, 35)
    assert (low, high) == (34, 35)
    assert expand_range(PYTHON, "python", 35, 200) == (34, 36)  # clamped to the file


def test_python_outline_of_class() -> None:
    text = outline(PYTHON, "python", 13, 31)
    assert text.splitlines() == [
        "class Store:",
        '    """Key-value store."""',
        '    kind = "memory"',
        "    @staticmethod",
        "    @cached(size=3)",
        '    def make(name: str) -> "Store": ...',
        "    def get(self, key): ...",
    ]


def test_a_docstrings_backslashes_and_tabs_leave_a_class_to_the_scan() -> None:
    lines = [
        "class Beta(Function):",
        '    r"""The beta integral: \\\\',  # LaTeX line breaks inside the docstring
        "    B(x, y) = \\int_0^1 t^{x-1} dt \\\\",
        "\tan example indented with a tab",
        '    """',
        "",
        "    def fdiff(self, argindex):",
        "        x, y = self.args",
        "        return x",
        "",
        "    def eval(cls, x, y=None):",
        "        return None",
    ]
    text = "\n".join(lines)
    assert class_analysis(lines, 1, len(lines)) not in (None, False)  # no parse needed
    alone = class_outlined("beta.py", lines, 1, 1, len(lines)).text
    assert alone == outline(text, "python", 1, len(lines)) and "def eval" in alone
    deeper = [*lines[:8], "        return x + \\", "            y", *lines[9:]]
    assert class_analysis(deeper, 1, len(deeper)) not in (None, False)  # a deeper line goes on
    assert class_outlined("b.py", deeper, 1, 1, len(deeper)).text == outline(
        "\n".join(deeper), "python", 1, len(deeper)
    )
    shallow = [*lines[:8], "        return x + \\", "    y", *lines[9:]]
    assert class_analysis(shallow, 1, len(shallow)) is None  # the parser decides


def test_a_class_needs_no_parse_for_a_long_signature_or_a_string_below_it() -> None:
    parameters = [f"        p{n}: int = {n}," for n in range(50)]
    lines = ["class A:", "    def __init__(", "        self,", *parameters, "    ):"]
    lines += ["        self.p0 = p0", "", '"""A note below the class', "that runs on.", '"""']
    text = "\n".join(lines)
    end = len(lines) - 4  # the class's last line
    assert class_analysis(lines, 1, end) not in (None, False)  # a 53-line signature
    assert class_outlined("a.py", lines, 1, 1, end).text == outline(text, "python", 1, end)
    # the class, then a string running on past the lines: surely no class ends there
    assert class_analysis(lines, 1, len(lines) - 1) is False
    assert class_outlined("a.py", lines, 1, 1, len(lines) - 1).text == ""


def test_the_scan_tells_triple_quotes_of_each_kind_and_in_one_line_strings_apart() -> None:
    lines = [
        "def f():",
        '    """Shows \'\'\' inside."""',  # the other kind inside a docstring is text
        "    return 1",
        "",
        "",
        "def g(s):",
        "    quotes = [\"'''\" in s, '\"\"\"' in s]  # both kinds, each in a one-line string",
        "    return quotes",
        "",
        "",
        "def h():",
        "    return 2",
    ]
    text = "\n".join(lines)
    scan = LocalExpander()
    for line, block in ((3, (1, 3)), (8, (6, 8)), (12, (11, 12))):
        assert scan.expand("q.py", lines, "python", line, line) == block
        assert expand_range(text, "python", line, line) == block


def test_python_class_outline_shows_the_attributes_init_sets() -> None:
    """``config.invocation_params``: an instance attribute is a member a caller reads, so
    the outline lists each ``self.x = ...`` of ``__init__`` (first line, once per name)."""
    text = (
        "class Config:\n"
        "    def __init__(self, params, manager=None) -> None:\n"
        "        self.invocation_params = params\n"
        "        if manager is None:\n"
        "            self.manager = Manager(\n"
        "                params,\n"
        "            )\n"
        "        else:\n"
        "            self.manager = manager\n"
        "        local = 3\n"
        "        self.hook: Hook = self.manager.hook\n"
        "\n"
        "    def parse(self, args):\n"
        "        self.parsed = args\n"
    )
    assert outline(text, "python", 1, 14).splitlines() == [
        "class Config:",
        "    def __init__(self, params, manager=None) -> None:",
        "        self.invocation_params = params",
        "        self.manager = Manager( ...",
        "        self.hook: Hook = self.manager.hook",
        "        ...",
        "    def parse(self, args): ...",
    ]


def _long_class() -> str:
    methods = []
    for index in range(8):
        methods.append(
            f"    def method_{index}(self, value: int) -> int:\n"
            f'        """Return value plus {index}."""\n'
            f"        total = value\n"
            f"        for step in range({index}):\n"
            f"            total += step\n"
            f"        return total + {index}\n"
        )
    return (
        "class Calculator:\n"
        '    """Adds numbers in many ways.\n\n    More text here.\n    """\n\n'
        "    PRECISION = 3\n\n" + "\n".join(methods)
    )


def test_outline_of_sixty_line_class_keeps_signatures_only() -> None:
    text = _long_class()
    lines = text.count("\n")
    assert lines >= 60
    spans = definition_spans(text, "python")
    whole = spans[0]
    assert (whole.name, whole.start_line, whole.end_line) == ("Calculator", 1, lines)
    result = outline(text, "python", whole.start_line, whole.end_line, spans)
    assert result.startswith('class Calculator:\n    """Adds numbers in many ways."""\n')
    assert "    PRECISION = 3" in result
    for index in range(8):
        assert f"    def method_{index}(self, value: int) -> int: ..." in result
    assert "total +=" not in result and "return" not in result and "More text" not in result
    assert len(result.splitlines()) == 11
    assert len(result) < len(text) / 3


def test_outline_of_function_keeps_docstring_first_line() -> None:
    text = 'def f(a,\n      b):\n    """\n    Summary here.\n\n    More.\n    """\n    return a\n'
    assert outline(text, "python", 8, 8) == (
        'def f(a,\n      b):\n    """Summary here."""\n    ...'
    )


JAVA = """\
package demo;

import java.util.List;

/**
 * A shop.
 * Sells things.
 */
@Entity
public class Shop implements Store {
    private final List<String> items = List.of(
        "a", "b");

    /** Creates a shop. */
    public Shop() {
        super();
    }

    @Override
    @Deprecated
    public int count(String kind) {
        int total = 0;
        return total;
    }

    enum Size {
        SMALL("s"),
        LARGE("l");

        private final String code;

        Size(String code) {
            this.code = code;
        }
    }
}

interface Store {
    /** How many. */
    int count(String kind);
}
"""


def test_java_spans_include_annotations_and_javadoc() -> None:
    spans = definition_spans(JAVA, "java")
    assert [(s.name, s.kind, s.start_line, s.end_line, s.header_end_line) for s in spans] == [
        ("Shop", "class", 5, 36, 10),
        ("Shop", "function", 14, 17, 15),
        ("count", "function", 19, 24, 21),
        ("Size", "class", 26, 35, 26),
        ("Size", "function", 32, 34, 32),
        ("Store", "class", 38, 41, 38),
        ("count", "function", 39, 40, 40),
    ]


def test_java_expand_range() -> None:
    assert expand_range(JAVA, "java", 22, 22) == (19, 24)  # body -> method with annotations
    assert expand_range(JAVA, "java", 10, 10) == (5, 36)  # class line -> whole class
    assert expand_range(JAVA, "java", 12, 12) == (11, 12)  # multi-line field
    assert expand_range(JAVA, "java", 27, 27) == (27, 27)  # one enum constant
    assert expand_range(JAVA, "java", 3, 3) == (3, 3)  # import


def test_java_outlines() -> None:
    assert outline(JAVA, "java", 5, 36).splitlines() == [
        "/** A shop. */",
        "@Entity",
        "public class Shop implements Store {",
        "    private final List<String> items = List.of( ...",
        "    public Shop() { ... }",
        "    @Override",
        "    @Deprecated",
        "    public int count(String kind) { ... }",
        "    enum Size {",
        '        SMALL("s"),',
        '        LARGE("l");',
        "        private final String code;",
        "    }",
        "}",
    ]
    assert outline(JAVA, "java", 26, 35).splitlines() == [
        "    enum Size {",
        '        SMALL("s"),',
        '        LARGE("l");',
        "        private final String code;",
        "        Size(String code) { ... }",
        "    }",
    ]
    assert outline(JAVA, "java", 27, 27) == '        SMALL("s"),'
    assert outline(JAVA, "java", 38, 41) == ("interface Store {\n    int count(String kind);\n}")


def test_a_java_class_skeleton_empties_code_blocks_and_comments_but_keeps_its_members() -> None:
    lines = JAVA.split("\n")
    shell = class_skeleton(lines, "java", 5, 36)
    blank = {n for n, line in enumerate(shell, 5) if not line and lines[n - 1].strip()}
    # a Javadoc's inner line, the constructor's and the methods' bodies (not their braces)
    assert blank == {6, 7, 16, 22, 23, 33}
    assert shell[28 - 5] == lines[27]  # the enum body, a class's, stays whole
    assert class_outlined("Shop.java", lines, 5, 10, 36).text == outline(JAVA, "java", 5, 36)
    # the file store hands out tuples: the skeleton is a copy, the lines stay as they are
    stored = tuple(lines)
    assert class_skeleton(stored, "java", 5, 36) == shell and stored == tuple(lines)
    assert class_outlined("Shop.java", stored, 5, 10, 36).text == outline(JAVA, "java", 5, 36)
    annotated = ['@SuppressWarnings("x") class Box {', "    int size() {", "        return 1;"]
    annotated += ["    }", "}"]
    assert class_skeleton(annotated, "java", 1, 5) == [*annotated[:2], "", *annotated[3:]]


TYPESCRIPT = """\
/** A user. */
export interface User {
  id: number;
  greet(other: User): string;
}

export class Service<T> {
  private cache = new Map<string, T>();

  constructor(private readonly url: string) {}

  async load(id: string): Promise<T> {
    const hit = this.cache.get(id);
    return hit as T;
  }
}

export const fetchAll = async (ids: string[]): Promise<void> => {
  await Promise.all(ids);
};

const LIMIT = 10;
"""


def test_typescript_spans_and_expansion() -> None:
    spans = definition_spans(TYPESCRIPT, "typescript")
    assert [(s.name, s.kind, s.start_line, s.end_line, s.header_end_line) for s in spans] == [
        ("User", "class", 1, 5, 2),
        ("greet", "function", 4, 4, 4),
        ("Service", "class", 7, 16, 7),
        ("constructor", "function", 10, 10, 10),
        ("load", "function", 12, 15, 12),
        ("fetchAll", "function", 18, 20, 18),
    ]
    assert expand_range(TYPESCRIPT, "typescript", 13, 13) == (12, 15)
    assert expand_range(TYPESCRIPT, "typescript", 19, 19) == (18, 20)
    assert expand_range(TYPESCRIPT, "typescript", 22, 22) == (22, 22)
    assert outline(TYPESCRIPT, "typescript", 7, 16).splitlines() == [
        "export class Service<T> {",
        "  private cache = new Map<string, T>();",
        "  constructor(private readonly url: string) {}",
        "  async load(id: string): Promise<T> { ... }",
        "}",
    ]


def test_tsx_is_parsed_through_the_path() -> None:
    text = "export function App(props: Props) {\n  return <div>{props.name}</div>;\n}\n"
    spans = file_spans("src/App.tsx", text, "typescript")
    assert [(s.name, s.start_line, s.end_line) for s in spans] == [("App", 1, 3)]
    assert [(s.name, s.start_line) for s in definition_spans(text, "typescript")] == [("App", 1)]


GO = """\
package shop

// Item is sold.
type Item struct {
\tName  string
\tPrice int
}

// Total sums prices.
func Total(items []Item) int {
\tsum := 0
\treturn sum
}

func (i *Item) Discount(p int) {
\ti.Price -= p
}
"""


def test_go_spans_and_outline() -> None:
    spans = definition_spans(GO, "go")
    assert [(s.name, s.kind, s.start_line, s.end_line, s.header_end_line) for s in spans] == [
        ("Item", "class", 3, 7, 4),
        ("Total", "function", 9, 13, 10),
        ("Discount", "function", 15, 17, 15),
    ]
    assert expand_range(GO, "go", 16, 16) == (15, 17)
    assert expand_range(GO, "go", 1, 1) == (1, 1)
    assert outline(GO, "go", 9, 13) == "// Total sums prices.\nfunc Total(items []Item) int { ... }"
    assert (
        outline(GO, "go", 3, 7) == "// Item is sold.\ntype Item struct {\n\tName  string\n"
        "\tPrice int\n}"
    )


RUST = """\
use std::fmt;

/// A point.
#[derive(Debug)]
pub struct Point {
    x: i32,
    y: i32,
}

impl Point {
    /// Makes one.
    pub fn new(x: i32, y: i32) -> Self {
        Point { x, y }
    }

    fn norm(&self) -> i32 {
        self.x * self.x
    }
}

fn main() {
    let p = Point::new(1, 2);
}
"""


def test_rust_spans_and_outline() -> None:
    spans = definition_spans(RUST, "rust")
    assert [(s.name, s.kind, s.start_line, s.end_line, s.header_end_line) for s in spans] == [
        ("Point", "class", 3, 8, 5),
        ("Point", "class", 10, 19, 10),
        ("new", "function", 11, 14, 12),
        ("norm", "function", 16, 18, 16),
        ("main", "function", 21, 23, 21),
    ]
    assert expand_range(RUST, "rust", 13, 13) == (11, 14)
    assert expand_range(RUST, "rust", 10, 10) == (10, 19)
    assert outline(RUST, "rust", 10, 19).splitlines() == [
        "impl Point {",
        "    pub fn new(x: i32, y: i32) -> Self { ... }",
        "    fn norm(&self) -> i32 { ... }",
        "}",
    ]


CSHARP = """\
using System;

namespace Shop
{
    /// <summary>An order.</summary>
    [Serializable]
    public class Order
    {
        public int Id { get; set; }

        public decimal Total(decimal tax)
        {
            return tax;
        }
    }
}
"""


def test_csharp_spans_and_outline() -> None:
    spans = definition_spans(CSHARP, "csharp")
    assert [(s.name, s.kind, s.start_line, s.end_line, s.header_end_line) for s in spans] == [
        ("Order", "class", 5, 15, 8),
        ("Total", "function", 11, 14, 12),
    ]
    assert expand_range(CSHARP, "csharp", 13, 13) == (11, 14)
    assert expand_range(CSHARP, "csharp", 1, 1) == (1, 1)
    assert outline(CSHARP, "csharp", 5, 15).splitlines() == [
        "    /// <summary>An order.</summary>",
        "    [Serializable]",
        "    public class Order",
        "    {",
        "        public int Id { get; set; }",
        "        public decimal Total(decimal tax) { ... }",
        "    }",
    ]


# ------------------------------------------------------------------------- fallbacks

BROKEN_PYTHON = '''\
import sys


@register
def first(a):
    """Doc."""
    return a


class Half:
    def ok(self):
        return 1

    def cut(self, value,
'''


def test_broken_python_uses_indentation_blocks() -> None:
    spans = definition_spans(BROKEN_PYTHON, "python")
    assert [(s.name, s.kind, s.start_line, s.end_line) for s in spans] == [
        ("first", "function", 4, 7),
        ("Half", "class", 10, 15),
        ("ok", "function", 11, 12),
        ("cut", "function", 14, 15),
    ]
    assert expand_range(BROKEN_PYTHON, "python", 6, 6) == (4, 7)
    assert expand_range(BROKEN_PYTHON, "python", 12, 12) == (11, 12)


def test_python_cut_off_mid_function_body() -> None:
    text = "def a():\n    return 1\n\ndef b(x):\n    if x:\n        return foo(x,\n"
    spans = definition_spans(text, "python")
    assert [(s.name, s.start_line, s.end_line) for s in spans] == [("a", 1, 2), ("b", 4, 7)]
    assert expand_range(text, "python", 6, 6) == (4, 7)


def test_unknown_indented_language() -> None:
    text = (
        "module Shop\n  def total(items)\n    items.sum\n  end\n\n  def empty\n    0\n  end\nend\n"
    )
    spans = definition_spans(text, "ruby")
    assert [(s.name, s.kind, s.start_line, s.end_line) for s in spans] == [
        ("Shop", "class", 1, 9),
        ("total", "function", 2, 4),
        ("empty", "function", 6, 8),
    ]
    assert expand_range(text, "ruby", 3, 3) == (2, 4)
    assert expand_range(text, None, 7, 7) == (6, 8)


def test_unknown_brace_language() -> None:
    text = (
        "#include <stdio.h>\n"
        "\n"
        "/** Adds. */\n"
        "int add(int a, int b) {\n"
        "    return a + b;\n"
        "}\n"
        "\n"
        "struct point {\n"
        "    int x;\n"
        "    int y;\n"
        "};\n"
        "\n"
        "static int table[] = {\n"
        "    1, 2,\n"
        "};\n"
    )
    spans = definition_spans(text, "c")
    assert [(s.name, s.kind, s.start_line, s.end_line, s.header_end_line) for s in spans] == [
        ("add", "function", 3, 6, 4),
        ("point", "class", 8, 11, 8),
    ]
    assert expand_range(text, "c", 5, 5) == (3, 6)
    assert expand_range(text, "c", 14, 14) == (13, 15)
    assert outline(text, "c", 8, 11) == "struct point {\n    int x;\n    int y;\n};"


def test_broken_java_uses_brace_matching() -> None:
    garbage = " ))) ]]] ::: === !!! %%% ^^^ ))) ]]] ::: === !!! %%%"
    text = JAVA.replace("        int total = 0;", f"        int total = 0{garbage};")
    spans = definition_spans(text, "java")
    assert [(s.name, s.kind, s.start_line, s.end_line, s.header_end_line) for s in spans] == [
        ("Shop", "class", 5, 36, 10),
        ("Shop", "function", 14, 17, 15),
        ("count", "function", 19, 24, 21),
        ("Size", "class", 26, 35, 26),
        ("Size", "function", 32, 34, 32),
        ("Store", "class", 38, 41, 38),
    ]
    assert expand_range(text, "java", 22, 22) == (19, 24)
    assert expand_range(text, "java", 12, 12) == (11, 12)
    assert outline(text, "java", 5, 36) == outline(JAVA, "java", 5, 36)


def test_brace_fallback_for_broken_rust() -> None:
    text = RUST.replace("self.x * self.x", "self.x * * )) ((( self.x")
    spans = definition_spans(text, "rust")
    assert ("norm", 16, 18) in [(s.name, s.start_line, s.end_line) for s in spans]
    assert expand_range(text, "rust", 12, 12) == (11, 14)


# ---------------------------------------------------------------------------- caching


def test_file_spans_caches_per_path_and_text() -> None:
    first = file_spans("pkg/store.py", PYTHON, "python")
    again = file_spans("pkg/store.py", PYTHON, "python")
    assert first == again == definition_spans(PYTHON, "python")
    first.clear()  # callers get their own list
    assert file_spans("pkg/store.py", PYTHON, "python") == again
    changed = PYTHON.replace("def main():", "def run():")
    assert _span(file_spans("pkg/store.py", changed, "python"), "run").start_line == 34
    assert file_spans("pkg/store.py", PYTHON, None) == again  # language from the extension


def test_spans_argument_is_used() -> None:
    spans = [Span(1, 3, "function", "x", 1)]
    text = "a = 1\nb = 2\nc = 3\nd = 4\n"
    assert expand_range(text, "python", 2, 2, spans) == (1, 3)


@pytest.mark.parametrize("lang", [None, "python", "java", "go", "klingon"])
def test_empty_text(lang: str | None) -> None:
    assert definition_spans("", lang) == []
    assert expand_range("", lang, 1, 1) == (1, 1)
    assert outline("", lang, 1, 1) == ""


def test_import_is_cheap() -> None:
    code = "import sys, greprag.syntax; print('tree_sitter' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_outline_collapses_nested_classes_and_long_member_signatures() -> None:
    params = "".join(f"        p{index}: int = {index},\n" for index in range(10))
    text = (
        "class Form:\n"
        "    class Meta:\n"
        "        model = User\n"
        "        fields = ['a']\n\n"
        f"    def build(\n        self,\n{params}    ) -> None:\n"
        "        return None\n"
    )
    assert outline(text, "python", 1, text.count("\n")).splitlines() == [
        "class Form:",
        "    class Meta: ...",
        "    def build(",
        "        ...",
        "    ) -> None: ...",
    ]


def test_a_long_member_signature_shortened_keeps_its_declaration_below_an_annotation() -> None:
    params = "".join(f"        int p{index},\n" for index in range(6))
    text = (
        "public class Sorter {\n"
        '    @SuppressWarnings("unchecked")\n'
        f"    public static void sort(\n{params}        boolean last) {{\n"
        "        run();\n"
        "    }\n"
        "}\n"
    )
    assert outline(text, "java", 1, text.count("\n")).splitlines() == [
        "public class Sorter {",
        '    @SuppressWarnings("unchecked")',
        "    public static void sort(",
        "        ...",
        "        boolean last) { ... }",
        "}",
    ]
    params = "".join(f"        p{index},\n" for index in range(6))
    text = f"class Dialect:\n    @deprecated_params(x=1)\n    def __init__(\n{params}    ):\n"
    text += "        pass\n"
    assert outline(text, "python", 1, text.count("\n")).splitlines() == [
        "class Dialect:",
        "    @deprecated_params(x=1)",
        "    def __init__(",
        "        ...",
        "    ): ...",
    ]


def _module(n: int) -> list[str]:
    """A Python module: a docstring, then n functions of three lines with a blank between."""
    lines = ['"""Doc."""', ""]
    for index in range(n):
        lines += [f"def f{index}(x):", "    y = x + 1", "    return y", ""]
    return lines


def test_widening_takes_most_of_a_small_file_whole() -> None:
    lines = _module(5)  # 22 lines
    widen = BlockWidener(lambda path: lines, CursorFile("other.py"))
    assert widen("a.py", 3, 3) == (3, 5)  # one function of a small file
    assert widen("a.py", 3, 15) == (1, len(lines))  # half of it: the whole file


def test_widening_leaves_a_large_file_at_its_blocks() -> None:
    lines = _module(30)  # over 80 lines
    widen = BlockWidener(lambda path: lines)
    assert widen("a.py", 8, 8) == (7, 9)
    assert widen("a.py", 4, 12) == (3, 13)


def test_widening_cuts_the_current_file_to_the_admitted_lines_of_the_hit() -> None:
    lines = _module(30)
    widen = BlockWidener(lambda path: lines, CursorFile("a.py", ((1, 7),)))  # cursor on 8
    assert widen("a.py", 7, 7) == (7, 7)  # the function goes on below the cursor
    assert widen("b.py", 7, 7) == (7, 9)  # another file with the same lines: whole
    below = BlockWidener(lambda path: lines, CursorFile("a.py", ((10, len(lines)),)))
    assert below("a.py", 12, 12) == (11, 13)  # past the function being written: whole
    start, end = below("a.py", 8, 8)  # in the function being written: nothing
    assert end < start


def test_widening_asks_tree_sitter_where_the_scan_is_unsure() -> None:
    lines = ["def g(x):", "    return x", "", "# at the margin: the scan leaves it to tree-sitter"]
    lines += ["", *_module(30)]
    text = "\n".join(lines)
    widen = BlockWidener(lambda path: lines)
    assert LocalExpander().expand("a.py", lines, "python", 4, 4) is None
    assert widen("a.py", 4, 4) == expand_range(text, "python", 4, 4)


def test_the_scan_widens_a_range_around_its_code_when_its_edges_are_blank_or_comments() -> None:
    lines = [
        "# the helpers",  # 1: a comment at the margin
        "def g(x):",
        "    y = x + 1",
        "    return y",
        "",  # 5: the blank line after g
        "# more below",
        "def h():",
        "    return 2",
    ]
    scan = LocalExpander()
    assert scan.expand("a.py", lines, "python", 3, 5) == (2, 5)  # g, and its blank line
    assert scan.expand("a.py", lines, "python", 1, 3) == (1, 4)  # the comment above g too
    assert scan.expand("a.py", lines, "python", 4, 7) == (2, 8)  # g through h
    assert scan.expand("a.py", lines, "python", 5, 6) is None  # no code: tree-sitter decides


def test_the_scan_widens_strings_comments_and_decorators_as_tree_sitter_does() -> None:
    lines = [
        '"""A module docstring,',  # 1: a string statement stands for its line
        'two lines."""',
        "",
        'TEMPLATE = """',  # 4: an assignment takes its whole string
        "body",
        '"""',
        "",
        "@decorate(",  # 8: a decorator over several lines, then a signature over several
        '    "arg",',
        ")",
        "def f(",
        "    x: int,",
        ") -> int:",
        '    """Docstring',  # 14: a function's docstring and comments: the function
        '    of f."""',
        "    # a comment",
        "    return x",
        "    # trailing words, still the function's",
        "",
        "class C:",
        '    """Class docstring',
        '    goes on."""',
        "",
        "    def m(self):",
        "        return 1",
    ]
    text = "\n".join(lines)
    scan = LocalExpander()
    for number, line in enumerate(lines, 1):
        if line.strip():
            local = scan.expand("a.py", lines, "python", number, number)
            assert local == expand_range(text, "python", number, number), (number, line)
    assert scan.expand("a.py", lines, "python", 5, 5) == (4, 6)
    assert scan.expand("a.py", lines, "python", 9, 9) == (8, 18)
    assert scan.expand("a.py", lines, "python", 21, 21) == (21, 21)


def test_the_brace_scan_takes_whole_methods_as_tree_sitter_does() -> None:
    lines = [
        "class A {",
        "    private int impl;",
        "",
        "    /**",  # 4: a doc comment, annotations and a signature over three lines
        "     * Sends it.",
        "     */",
        "    @Override",
        "    public void send(int p,",
        "                     int q)",
        "            throws IOException {",
        "        // a comment in the body",
        "        if (impl > 0 &&",  # 12: a condition over two lines, ``impl`` a field
        "                (impl < p)) {",
        "            run(new Runnable() {",  # 14: an anonymous class, then a lambda
        "                public void run() { }",
        "            });",
        "        } else {",
        "            items.forEach(x -> {",
        "                use(x);",
        "            });",
        "        } // end if",  # 21: comments after a closing brace
        "    } // send",
        "",
        "    int n;",
        "}",
    ]
    text = "\n".join(lines)
    scan = LocalExpander()
    for number in (*range(4, 15), *range(16, 23)):  # line 15: the anonymous class's own method
        local = scan.expand("A.java", lines, "java", number, number)
        assert local == expand_range(text, "java", number, number) == (4, 22), number
    assert scan.expand("A.java", lines, "java", 2, 2) == (2, 2)
    assert scan.expand("A.java", lines, "java", 24, 24) == (24, 24)


def test_the_brace_scan_reads_doc_comments_by_their_opener() -> None:
    lines = [
        "/* Licensed under the Apache License.",  # 1: a licence: documents nothing
        "   See the LICENSE file. */",
        "package bsh;",
        "",
        "/**",  # 5: a doc comment whose lines do not start with ``*``, a blank line inside
        "\tThe script interpreter.",
        "",
        "\tSee the manual.",
        "*/",
        "public class Interpreter",
        "{",
        "\tint n;",
        "}",
    ]
    text = "\n".join(lines)
    scan = LocalExpander()
    for number in (3, *range(5, 11)):
        local = scan.expand("I.java", lines, "java", number, number)
        assert local == expand_range(text, "java", number, number), number
    assert scan.expand("I.java", lines, "java", 3, 3) == (3, 3)
    assert scan.expand("I.java", lines, "java", 6, 6) == (5, 13)


def test_the_brace_scan_takes_a_class_whose_brace_comes_later_or_far_down() -> None:
    body = [f"    int f{n}() {{ return {n}; }}" for n in range(5000)]  # past the old cap
    lines = ["/** A store. */", "public final class Store", "        extends Base {", *body, "}"]
    text = "\n".join(lines)
    scan = LocalExpander()
    whole = (1, len(lines))
    for number in (1, 2, 3):
        assert scan.expand("S.java", lines, "java", number, number) == whole, number
        assert expand_range(text, "java", number, number) == whole, number


def test_syntax_and_fusion_never_import_the_stages_above_them() -> None:
    package = Path(greprag.__file__).parent
    above = ("greprag.router", "greprag.routes", "greprag.pipeline")
    for folder in ("syntax", "fusion"):
        for file in sorted((package / folder).glob("*.py")):
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                else:
                    continue
                bad = [n for n in names if n.startswith(above)]
                assert not bad, f"{folder}/{file.name} imports {bad}"


def test_balance_grows_a_range_of_several_units_to_whole_ones() -> None:
    java = [
        "package p;",  # 1
        "import q.R;",
        "public class A {",
        "    private int n;",
        "    public A(int n) {",  # 5
        "        this.n = n;",
        "    }",
        "    public int get() {",
        "        return n;",
        "    }",  # 10
        "}",
    ]
    scan = LocalExpander()
    assert scan.balance("A.java", java, "java", 2, 7) == (2, 11)  # opens the class: to its end
    assert scan.balance("A.java", java, "java", 6, 11) == (3, 11)  # leaves it: up to its header
    assert scan.balance("A.java", java, "java", 5, 10) == (5, 10)  # two methods: already whole
    python = ["class A:", "    def f(self):", "        return 1", "", "def g():", "    return 2"]
    assert scan.balance("a.py", python, "python", 2, 6) == (1, 6)
    assert scan.balance("a.py", python, "python", 1, 2) == (1, 3)
    assert scan.balance("a.py", python, "python", 5, 6) == (5, 6)


def test_each_brace_line_knows_the_line_that_opens_the_block_around_it():
    """``_openers`` is what a walk up the file finds: the nearest line above with a
    lower depth and a ``{`` (``} else {`` starts inside the block it closes)."""
    from greprag.syntax.scan import _brace_scan, _openers

    lines = [
        "class A {",  # 0
        "  void f() {",  # 1
        "    if (x) {",  # 2
        "      y();",  # 3
        "    } else {",  # 4
        "      z();",  # 5
        "    }",  # 6
        "    w();",  # 7
        "  }",  # 8
        "  int g;",  # 9
        "}",  # 10
    ]
    scan = _brace_scan(lines)
    walked = []
    for first in range(len(lines)):
        n = first - 1
        while n >= 0 and not (scan.depth[n] < scan.depth[first] and "{" in scan.code[n]):
            n -= 1
        walked.append(n)
    assert list(_openers(scan)) == walked == [-1, 0, 1, 2, 2, 2, 2, 1, 1, 0, 0]


def test_the_class_enclosing_a_method_is_found_past_blocks_and_strings():
    lines = [
        "class Cache:",  # 1
        '    """Keeps',  # 2
        "values.",  # 3: a docstring's body at the margin
        '    """',  # 4
        "    if sys.version_info >= (3, 11):",  # 5
        "        def fetch(self, key):",  # 6
        "            def inner():",  # 7
        "                return key",  # 8
        "            return inner",  # 9
        "",
        "def fetch_all(keys):",  # 11
        "    return keys",
    ]
    assert enclosing_class(lines, 6) == 1
    assert enclosing_class(lines, 7) is None  # a nested function belongs to no class
    assert enclosing_class(lines, 11) is None
