"""Attribution matchers: an import probe's template read with any name, then the name
looked up, says what the pattern itself says."""

from __future__ import annotations

import re

import pytest

from greprag.languages import LANGUAGES
from greprag.matching import NamesMatcher

NAMES = ["Column", "column", "ForeignKey", "Table", "TableX"]
LINES = [
    "class Column(Base):",
    "    def column(self):",
    "async def ForeignKey(x):",
    "def ForeignKeyZ():",
    "Column = 3",
    "ColumnX = 3",
    "Column: int = 2",
    "Column == 3",
    "column\t=1",
    "x = Column(1)",
    "TableX = make()",
    "public class Table extends Base {",
    "public final class TableX<T> implements Column {",
    "interface ForeignKeyish {}",
    "@interface Column {",
    "export const Table = () => 1;",
    "export function* column() {}",
    "let ForeignKey$ = 2;",
    "class Other {} class Table {}",
    "struct Column {",
    "type Table = {",
    "enum column {",
]


@pytest.mark.parametrize(
    "lang", sorted(name for name, language in LANGUAGES.items() if language.import_probe)
)
def test_a_names_matcher_agrees_with_the_import_probe_on_every_line(lang: str) -> None:
    template = LANGUAGES[lang].import_probe
    pattern = template.replace("{names}", "(" + "|".join(NAMES) + ")")
    matcher = NamesMatcher.compile(pattern, NAMES)
    assert matcher is not None, lang
    plain = re.compile(pattern, re.ASCII)
    agreed = [line for line in LINES if matcher.search(line) == bool(plain.search(line))]
    assert agreed == LINES
    assert any(matcher.search(line) for line in LINES)


def test_a_pattern_that_is_no_template_of_its_names_gets_no_names_matcher() -> None:
    assert NamesMatcher.compile(r"\bColumn\s*\(", ["Column"]) is None  # no group of names
    assert NamesMatcher.compile(r"^(A|B)\s*=|(A|B)\(", ["A", "B"]) is not None
    assert NamesMatcher.compile(r"^((A|B)|(A|B))=", ["A", "B"]) is None  # two in one branch
    assert NamesMatcher.compile(r"\bclass\s+(A\$|B)\b", ["A$", "B"]) is None  # $: not \w


def test_brackets_inside_a_character_class_do_not_split_the_branches() -> None:
    from greprag.matching import top_level_branches

    assert top_level_branches(r"^[^]|(]x|(A|B)y") == [r"^[^]|(]x", r"(A|B)y"]
    assert top_level_branches(r"[]|]a|b") == [r"[]|]a", "b"]
    assert top_level_branches(r"(a|b") is None
