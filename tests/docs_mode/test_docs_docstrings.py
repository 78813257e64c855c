"""Docstrings and doc comments of code, read as documentation sections."""

from __future__ import annotations

from docs_mode.docstrings import docstring_sections, module_name
from tests.conftest import FIXTURES, line_of, read_lines

REPO = FIXTURES / "docs_manual"
CLIENT = "tidewater/client.py"


def test_python_docstrings_start_at_their_definition_and_end_with_the_docstring():
    text = (REPO / CLIENT).read_text(encoding="utf-8")
    lines = read_lines(REPO, CLIENT)
    got = {s.breadcrumb: (s.start_line, s.end_line) for s in docstring_sections(CLIENT, text)}
    backoff = line_of(REPO, CLIENT, r"^def backoff_delay")
    backoff_end = next(n for n in range(backoff + 2, len(lines)) if lines[n - 1].strip() == '"""')
    assert got[("tidewater.client", "backoff_delay")] == (backoff, backoff_end)
    fetch = line_of(REPO, CLIENT, r"def fetch")
    assert got[("tidewater.client", "Session", "fetch")] == (fetch, fetch + 2)
    assert got[("tidewater.client",)] == (1, 1)  # the module docstring
    assert ("tidewater.client", "Session", "_send") not in got  # no docstring, no section
    assert got[("tidewater.client", "RetryPolicy", "should_retry")][0] == line_of(
        REPO, CLIENT, r"def should_retry"
    )


def test_a_long_docstring_is_cut_into_paragraph_pieces():
    text = (REPO / CLIENT).read_text(encoding="utf-8")
    backoff = next(s for s in docstring_sections(CLIENT, text) if s.title == "backoff_delay")
    assert [p.line for p in backoff.pieces] == [backoff.start_line, backoff.start_line + 3]
    assert backoff.text == "\n".join(
        read_lines(REPO, CLIENT)[backoff.start_line - 1 : backoff.end_line]
    )


def test_java_doc_comments_sit_above_the_signature():
    text = (
        "package shop;\n\n"
        "public class Cart {\n"
        "    /**\n"
        "     * Adds an item, merging it with an equal one already in the cart.\n"
        "     */\n"
        "    public void add(Item item) {\n"
        "        items.add(item);\n"
        "    }\n\n"
        "    public int size() { return items.size(); }\n"
        "}\n"
    )
    got = [
        (s.breadcrumb, s.start_line, s.end_line)
        for s in docstring_sections("src/shop/Cart.java", text)
    ]
    assert got == [(("src.shop.Cart", "Cart", "add"), 4, 7)]


def test_module_names_follow_the_path():
    assert module_name("pkg/sub/mod.py") == "pkg.sub.mod"
    assert module_name("pkg/__init__.py") == "pkg"
    assert module_name("src/lib/mod.rs") == "src.lib"
    assert module_name("web/index.ts") == "web"
