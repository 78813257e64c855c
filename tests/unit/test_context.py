"""What the local context reads off the text before the cursor."""

from __future__ import annotations

import pytest

from greprag.context import build_local_context


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
    ],
)
def test_an_empty_body_is_recognised_after_any_signature_and_docstring(before, lang, empty):
    assert build_local_context(before, lang=lang).empty_body is empty
