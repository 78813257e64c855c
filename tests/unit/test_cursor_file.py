"""Which lines of the file under the cursor a retrieval may show."""

from __future__ import annotations

from greprag.context import LocalContext, build_local_context
from greprag.cursor_file import CursorFile, cursor_file

PY = [
    "import os",  # 1
    "",
    "class Store:",  # 3
    "    def load(self, key):",  # 4
    "        def inner():",  # 5
    "            return key",  # 6
    "        return inner()",  # 7
    "",
    "    def save(self, key, value):",  # 9
    "        os.write(key, value)",  # 10
    "",
    "TIMEOUT = 3",  # 12
]

JAVA = [
    "class Store {",  # 1
    "    int load(String key) {",  # 2
    "        return key.length();",  # 3
    "    }",  # 4
    "    void save(String key) {",  # 5
    "        log(key);",  # 6
    "    }",  # 7
    "}",  # 8
]


def _at(path: str, lang: str, line: int) -> LocalContext:
    return LocalContext("", "", "", path=path, lang=lang, line=line)


def _shown(lines: list[str], path: str, lang: str, line: int, mode: str) -> CursorFile:
    return cursor_file(_at(path, lang, line), lambda _path: lines, mode)


def test_below_admits_what_follows_the_outermost_function_holding_the_cursor():
    assert _shown(PY, "s.py", "python", 6, "below").runs == ((8, 12),)  # in a closure
    assert _shown(PY, "s.py", "python", 10, "below").runs == ((11, 12),)
    assert _shown(PY, "s.py", "python", 4, "below").runs == ((8, 12),)  # on the def line
    assert _shown(JAVA, "S.java", "java", 3, "below").runs == ((5, 8),)
    assert _shown(JAVA, "S.java", "java", 7, "below").runs == ((8, 8),)  # on its last line


def test_below_admits_what_follows_the_statement_or_class_at_module_or_class_level():
    assert _shown(PY, "s.py", "python", 1, "below").runs == ((2, 12),)  # an import
    assert _shown(PY, "s.py", "python", 3, "below").runs == ((11, 12),)  # a class header
    assert _shown(PY, "s.py", "python", 12, "below").runs == ()  # the last line
    assert _shown(PY, "s.py", "python", 2, "below").runs == ()  # blank: no unit to read
    assert _shown(JAVA, "S.java", "java", 1, "below").runs == ()  # the class is the file


def test_the_other_modes():
    assert _shown(PY, "s.py", "python", 6, "above").runs == ((1, 5),)
    assert _shown(PY, "s.py", "python", 1, "above").runs == ()
    assert _shown(PY, "s.py", "python", 6, "no").runs == ()
    assert cursor_file(LocalContext("", "", ""), lambda _path: PY, "below") == CursorFile()


def test_a_range_is_cut_to_the_run_its_anchor_is_in():
    shown = CursorFile("s.py", ((1, 3), (8, 12)))
    assert shown.admits("other.py", 5) and not shown.admits("s.py", 5)
    assert shown.clip("other.py", 2, 9) == (2, 9)
    assert shown.clip("s.py", 2, 9) == (2, 3)  # no anchor: the first run it overlaps
    assert shown.clip("s.py", 2, 9, anchor=9) == (8, 9)
    start, end = shown.clip("s.py", 4, 7)
    assert end < start


def test_below_admits_nothing_when_the_text_before_the_cursor_is_not_the_files():
    def shown(before: str) -> CursorFile:
        ctx = build_local_context(before, path="s.py", lang="python")
        return cursor_file(ctx, lambda _path: PY, "below")

    disk = "\n".join(PY[:9]) + "\n        os."  # the file up to line 10, column 11
    assert shown(disk).runs == ((11, 12),)
    edited = disk.replace("return inner()", "return inner() + 1")  # an unsaved buffer
    assert shown(edited).runs == ()
    assert shown("\n" + disk).runs == ()  # a line added above: the lines have moved
