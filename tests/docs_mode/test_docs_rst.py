"""reStructuredText (and plain text) sections: adornment titles, labels, API entries."""

from __future__ import annotations

import itertools

from docs_mode.rst import rst_sections
from docs_mode.sections import sections_of
from tests.conftest import FIXTURES, line_of, read_lines

REPO = FIXTURES / "docs_manual"
API = "docs/api.rst"
TEXT = (REPO / API).read_text(encoding="utf-8")
LINES = read_lines(REPO, API)
SESSION = "Session(base_url=None, *, timeout=5.0, retries=None)"


def at(pattern: str) -> int:
    return line_of(REPO, API, pattern)


def by_start() -> dict[int, tuple[str, tuple[str, ...], int]]:
    return {s.start_line: (s.kind, s.breadcrumb, s.end_line) for s in rst_sections(API, TEXT)}


def test_titles_nest_by_adornment_style_and_labels_belong_to_the_title_below():
    got = by_start()
    assert got[1] == ("section", ("API reference",), at(r"^reference says") + 1)  # .. _api:
    assert got[at(r"^Sessions$")][1] == ("API reference", "Sessions")
    retry = at(r"^\.\. _retry-policy:")
    assert got[retry][:2] == ("section", ("API reference", "Retry policies"))
    errors = at(r"^Errors$")
    assert got[errors][1] == ("API reference", "Retry policies", "Errors")  # "-" is deeper


def test_api_directives_are_entries_and_nested_methods_have_their_own():
    got = by_start()
    session = at(r"^\.\. class:: Session")
    fetch = at(r"\.\. method:: fetch")
    close = at(r"\.\. method:: close")
    headers = at(r"\.\. attribute:: headers")
    crumb = ("API reference", "Sessions", SESSION)
    assert got[session] == ("entry", crumb, fetch - 1)
    assert got[fetch] == ("entry", (*crumb, 'fetch(url, *, method="GET", timeout=None)'), close - 1)
    assert got[close] == ("entry", (*crumb, "close()"), headers - 1)
    after = at(r"^Sessions are cheap")
    assert got[headers] == ("entry", (*crumb, "headers"), after - 1)
    assert got[after][:2] == ("section", ("API reference", "Sessions"))  # the text after them
    function = at(r"\.\. function:: backoff_delay")
    assert got[function][0] == "entry" and got[function][1][-1].startswith("backoff_delay(")
    exception = at(r"\.\. exception:: TimeoutError")
    errors = ("API reference", "Retry policies", "Errors")
    assert got[exception] == ("entry", (*errors, "TimeoutError"), at(r"^\.\. code-block::") - 1)


def test_a_literal_block_stays_inside_its_entry_and_piece():
    fetch = next(s for s in rst_sections(API, TEXT) if s.title.startswith("fetch("))
    example = at(r"Example::")
    literal = at(r"reply = session.fetch")
    assert fetch.start_line < example < literal <= fetch.end_line
    holder = [p for p in fetch.pieces if p.line <= literal]
    assert "reply = session.fetch" in holder[-1].text and "Example::" in holder[-1].text


def test_sections_cover_the_file_contiguously_and_text_is_the_source():
    sections = rst_sections(API, TEXT)
    assert sections[0].start_line == 1 and sections[-1].end_line == len(LINES)
    for left, right in itertools.pairwise(sections):
        assert left.end_line + 1 == right.start_line
    for s in sections:
        assert s.text == "\n".join(LINES[s.start_line - 1 : s.end_line])


def test_plain_text_reads_as_restructured_text():
    path = "docs/changelog.txt"
    text = (REPO / path).read_text(encoding="utf-8")
    merged = [(s.breadcrumb, s.start_line) for s in sections_of(path, text)]
    assert merged == [(("Tidewater changelog",), 1)]  # small sections merge under the title
    fine = [(s.breadcrumb, s.start_line, s.end_line) for s in rst_sections(path, text)]
    version_21 = line_of(REPO, path, r"^2\.1\.0$")
    version_20 = line_of(REPO, path, r"^2\.0\.0$")
    assert fine[1:] == [
        (("Tidewater changelog", "2.1.0"), version_21, version_20 - 1),
        (("Tidewater changelog", "2.0.0"), version_20, len(read_lines(REPO, path))),
    ]


def test_a_transition_or_an_indented_line_is_not_a_title():
    text = "Intro\n=====\n\npara\n\n----------\n\nmore\n\n   indented\n   ========\n"
    sections = rst_sections("t.rst", text)
    assert [s.breadcrumb for s in sections] == [("Intro",)]
