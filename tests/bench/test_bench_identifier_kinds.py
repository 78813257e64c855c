"""The categories of missing identifiers, on ground-truth lines of the bench's tasks."""

from __future__ import annotations

import pytest

from bench.identifier_kinds import CATEGORIES, category


@pytest.mark.parametrize(
    ("name", "line", "expected"),
    [
        ("from_user", "scope_ = Scope.from_user(", "callee, attribute, class"),
        ("scope_", "scope_ = Scope.from_user(", "name the line introduces"),
        ("any_slashes", "rv, any_slashes = join_options(opts)", "name the line introduces"),
        ("task_group", "create_task_group() as task_group:", "name the line introduces"),
        ("frozen", "@attrs(eq=False, slots=True, frozen=True)", "keyword argument"),
        ("two", 'echo(_("Error: The two values differ."), err=err)', "word in a string or comment"),
        ("defined", "xfail.Exception  # type: ignore[attr-defined]", "word in a string or comment"),
        ("reversed", "deep_update(*reversed([s(self) for s in sources]))", "builtin"),
        ("rstrip", 'iri_to_uri(get_script_prefix().rstrip("/"))', "builtin"),
    ],
)
def test_each_missing_identifier_gets_the_category_its_line_gives_it(name, line, expected):
    assert expected in CATEGORIES
    assert category(name, line) == expected
