"""Task builders on tiny fixture projects written here (Python, Java, TypeScript)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.tasks import (
    KINDS,
    SUBSETS,
    build_tasks,
    filter_tasks,
    left_context,
    subset_tasks,
)


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


PY = {
    "pkg/__init__.py": "from .shapes import Circle\n",
    "pkg/shapes.py": (
        "class Base:\n"
        "    def area(self):\n"
        "        return 0\n"
        "\n"
        "\n"
        "class Circle(Base):\n"
        "    def __init__(self, r):\n"
        "        self.r = r\n"
        "\n"
        "    def circumference_of_shape(self):\n"
        "        return 6.28 * self.r\n"
    ),
    "pkg/util.py": "def scale(value, factor):\n    return value * factor\n",
    "pkg/app.py": (
        "from pkg import Circle\n"
        "from . import util\n"
        "\n"
        "\n"
        "def main(holder):\n"
        "    shape = Circle(2)\n"
        "    print(Circle.area(shape))\n"
        "    total = util.scale(3, 4)\n"
        "    return holder.item.circumference_of_shape() + total\n"
    ),
    "pkg/other.py": "def run(holder):\n    return holder.item.circumference_of_shape() * 2\n",
}


def test_python_tasks_resolve_imports_members_and_implicit_calls(tmp_path):
    root = _write(tmp_path, PY)
    tasks = build_tasks(root, "fixture", "python", limit=20, seed=1)
    by_kind = {(t.kind, t.name, t.line): t for t in tasks}

    first_use = by_kind[("import", "Circle", 6)]
    assert first_use.column == len("    shape = ")
    assert first_use.ground_truth == "Circle(2)"
    assert [(g.path, g.line) for g in first_use.gold] == [("pkg/shapes.py", 6)]
    assert not first_use.implicit
    assert left_context(root, first_use).endswith("    shape = ")

    module_use = by_kind[("import", "util", 8)]
    assert [(g.path, g.line) for g in module_use.gold] == [("pkg/util.py", 1)]

    # app.py names Circle, so only other.py's call is implicit
    assert ("implicit", "circumference_of_shape", 9) not in by_kind
    implicit = by_kind[("implicit", "circumference_of_shape", 2)]
    assert implicit.path == "pkg/other.py"
    assert implicit.ground_truth == "circumference_of_shape() * 2"
    assert implicit.implicit
    assert [(g.path, g.line) for g in implicit.gold] == [("pkg/shapes.py", 10)]

    lines = [t for t in tasks if t.kind == "line"]
    assert lines and all(t.ground_truth == t.ground_truth.strip() for t in lines)
    assert filter_tasks(tasks, "implicit") == [t for t in tasks if t.implicit]
    assert filter_tasks(tasks, lambda t: t.kind == "line") == lines
    assert set(SUBSETS) >= {"all", "implicit", "import", "line"}


def test_python_member_gold_follows_in_project_bases(tmp_path):
    files = dict(PY)
    files["pkg/app.py"] = "from pkg.shapes import Circle\n\n\nx = Circle.area(None)\n"
    root = _write(tmp_path, files)
    task = next(t for t in build_tasks(root, "fixture", "python", limit=20) if t.kind == "import")
    assert task.member == "area"
    assert [(g.path, g.line) for g in task.member_gold] == [("pkg/shapes.py", 2)]


def test_tasks_are_deterministic_and_bounded(tmp_path):
    root = _write(tmp_path, PY)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    first = build_tasks(root, "fixture", "python", limit=3, seed=7)
    assert first == build_tasks(root, "fixture", "python", limit=3, seed=7)
    assert len(first) <= 3


JAVA = {
    "src/com/acme/util/Strings.java": (
        "package com.acme.util;\n"
        "\n"
        "public class Strings {\n"
        "    public static String shout(String s) {\n"
        "        return s.toUpperCase();\n"
        "    }\n"
        "}\n"
    ),
    "src/com/acme/app/Main.java": (
        "package com.acme.app;\n"
        "\n"
        "import com.acme.util.Strings;\n"
        "\n"
        "public class Main {\n"
        "    // Strings in a comment is no use\n"
        "    public static void main(String[] args) {\n"
        '        System.out.println(Strings.shout("hi"));\n'
        "    }\n"
        "}\n"
    ),
}


def test_java_first_use_skips_comments_and_finds_member(tmp_path):
    root = _write(tmp_path, JAVA)
    tasks = build_tasks(root, "fixture", "java", limit=10)
    task = next(t for t in tasks if t.kind == "import")
    assert (task.path, task.line) == ("src/com/acme/app/Main.java", 8)
    assert task.ground_truth == 'Strings.shout("hi"));'
    assert [(g.path, g.line) for g in task.gold] == [("src/com/acme/util/Strings.java", 3)]
    assert task.member == "shout"
    assert [(g.path, g.line) for g in task.member_gold] == [("src/com/acme/util/Strings.java", 4)]


TS = {
    "src/core/schema.ts": (
        "export class Schema {\n"
        "  parse(input: unknown): unknown {\n"
        "    return input;\n"
        "  }\n"
        "}\n"
        "export function makeSchema(): Schema {\n"
        "  return new Schema();\n"
        "}\n"
    ),
    "src/core/index.ts": 'export * from "./schema.js";\n',
    "src/app.ts": (
        'import * as core from "./core/index.js";\n'
        'import { Schema } from "./core/schema";\n'
        "\n"
        "const s = core.makeSchema();\n"
        "const t: Schema = s;\n"
    ),
}


def test_typescript_namespace_and_named_imports_resolve(tmp_path):
    root = _write(tmp_path, TS)
    tasks = {(t.kind, t.name): t for t in build_tasks(root, "fixture", "typescript", limit=10)}
    namespace = tasks[("import", "core")]
    assert namespace.ground_truth == "core.makeSchema();"
    assert [(g.path, g.line) for g in namespace.gold] == [("src/core/schema.ts", 6)]
    named = tasks[("import", "Schema")]
    assert (named.line, named.ground_truth) == (5, "Schema = s;")
    assert [(g.path, g.line) for g in named.gold] == [("src/core/schema.ts", 1)]


WIDE_PY = {
    "pkg/base.py": "class Node:\n    def iter_markers(self):\n        return []\n",
    "pkg/other.py": "class Item:\n    def iter_markers(self):\n        return ()\n",
    "pkg/one.py": "class Reporter:\n    def emit_summary(self):\n        return 1\n",
    "pkg/use.py": (
        "def run(item, rep):\n"
        "    for mark in item.iter_markers():\n"
        "        rep.emit_summary()\n"
        "\n"
        "\n"
        "def later(rep: 'Reporter'):\n"
        "    return rep\n"
    ),
}


def test_python_implicit_subset_widens_only_on_request(tmp_path):
    root = _write(tmp_path, WIDE_PY)
    default = build_tasks(root, "fixture", "python", limit=20, kinds=("implicit",))
    assert default == []  # two classes / a class named below the cursor: not in the default mix
    tasks = {t.name: t for t in subset_tasks(root, "fixture", "python", "implicit")}
    assert {(g.path, g.line) for g in tasks["iter_markers"].gold} == {
        ("pkg/base.py", 2),
        ("pkg/other.py", 2),
    }
    assert [(g.path, g.line) for g in tasks["emit_summary"].gold] == [("pkg/one.py", 2)]
    assert all(t.kind == "implicit" and t.implicit for t in tasks.values())


WIDE_JAVA = {
    "src/p/Engine.java": (
        "package p;\n"
        "public class Engine {\n"
        "    protected int horsePower;\n"
        "    public void startEngine() {}\n"
        "    protected void warmUp() {}\n"
        "}\n"
    ),
    "src/p/Car.java": "package p;\npublic class Car extends Engine {}\n",
    "src/p/Wire.java": "package p;\npublic class Wire {\n    public void startEngine() {}\n}\n",
    "src/q/Use.java": (
        "package q;\n"
        "import java.net.Socket;\n"
        "public class Use extends p.Car {\n"
        "    Socket sock;\n"
        "    p.Car car;\n"
        "    void go() {\n"
        "        holder.startEngine();\n"
        "        sock.startEngine();\n"
        "        warmUp();\n"
        "        int hp = car.horsePower;\n"
        "    }\n"
        "}\n"
    ),
}


def test_java_implicit_subset_checks_the_receiver(tmp_path):
    root = _write(tmp_path, WIDE_JAVA)
    tasks = {(t.name, t.line): t for t in subset_tasks(root, "fixture", "java", "implicit")}
    assert set(tasks) == {("startEngine", 7), ("warmUp", 9), ("horsePower", 10)}
    # sock is declared with a type from outside the project: never in the subset
    assert {(g.path, g.line) for g in tasks[("startEngine", 7)].gold} == {
        ("src/p/Engine.java", 4),
        ("src/p/Wire.java", 3),
    }
    assert [(g.path, g.line) for g in tasks[("horsePower", 10)].gold] == [("src/p/Engine.java", 3)]


def test_subset_limit_and_default_mix(tmp_path):
    root = _write(tmp_path, WIDE_PY)
    assert len(subset_tasks(root, "fixture", "python", "implicit", limit=1)) == 1
    assert subset_tasks(root, "fixture", "python") == build_tasks(root, "fixture", "python")


BODY_PY = {
    "pkg/geo.py": (
        "import math\n"
        "\n"
        "\n"
        "def distance(a, b):\n"
        '    """Euclidean distance.\n'
        "\n"
        "    Between two points.\n"
        '    """\n'
        "\n"
        "    # the straight line\n"
        "    dx = a.x - b.x\n"
        "    return math.hypot(dx, a.y - b.y)\n"
        "\n"
        "\n"
        "def one_liner(x): return x\n"
        "\n"
        "\n"
        "class Shape:\n"
        "    def area(\n"
        "        self,\n"
        "    ) -> float:\n"
        "        def inner():\n"
        "            return 1\n"
        "        return inner() * 2\n"
    ),
}


def test_python_body_tasks_start_after_the_docstring_and_hold_the_whole_body(tmp_path):
    root = _write(tmp_path, BODY_PY)
    tasks = {t.name: t for t in subset_tasks(root, "fixture", "python", "body", limit=10)}
    assert set(tasks) == {"distance", "area"}  # no one-liner, no nested def
    distance = tasks["distance"]
    assert (distance.kind, distance.line, distance.column) == ("body", 10, 4)
    assert distance.ground_truth == (
        "# the straight line\n    dx = a.x - b.x\n    return math.hypot(dx, a.y - b.y)"
    )
    assert distance.gold == () and left_context(root, distance).endswith('"""\n\n    ')
    area = tasks["area"]
    assert (area.line, area.column) == (22, 8)  # after a signature over three lines
    assert area.ground_truth.endswith("return inner() * 2")


BODY_JAVA = {
    "src/p/Shop.java": (
        "package p;\n"
        "public class Shop {\n"
        "    /** Adds an item. */\n"
        "    public void add(Item item)\n"
        "    {\n"
        "        items.add(item);\n"
        "        total += item.price();\n"
        "    }\n"
        "    Runnable r = new Runnable() {\n"
        "        public void run() {\n"
        "            System.out.println(1);\n"
        "            System.out.println(2);\n"
        "        }\n"
        "    };\n"
        "    public int size() { return items.size(); }\n"
        "}\n"
    ),
}


def test_java_body_tasks_cover_allman_braces_and_skip_anonymous_classes(tmp_path):
    root = _write(tmp_path, BODY_JAVA)
    tasks = subset_tasks(root, "fixture", "java", "body", limit=10)
    assert [(t.name, t.line, t.column) for t in tasks] == [("add", 6, 8)]
    assert tasks[0].ground_truth == "items.add(item);\n        total += item.price();"
    assert left_context(root, tasks[0]).endswith("    {\n        ")


def test_body_tasks_come_on_top_of_the_one_line_kinds(tmp_path):
    root = _write(tmp_path, {**PY, **BODY_PY})
    every = build_tasks(root, "fixture", "python", limit=8, seed=3)
    one_line = build_tasks(root, "fixture", "python", limit=8, seed=3, kinds=KINDS)
    assert [t for t in every if t.kind != "body"] == one_line
    assert len([t for t in every if t.kind == "body"]) == 2  # a quarter of the limit
