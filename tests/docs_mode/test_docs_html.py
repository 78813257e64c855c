"""HTML manuals (Sphinx, MkDocs, Javadoc): text not tags, anchors and source lines kept."""

from __future__ import annotations

import pytest

from docs_mode.extra import need
from docs_mode.html import html_sections
from greprag.errors import DocsError
from tests.conftest import FIXTURES, line_of

REPO = FIXTURES / "docs_manual"


def sections(name: str):
    path = f"docs/html/{name}"
    return path, html_sections(path, (REPO / path).read_text(encoding="utf-8"))


def line(name: str, pattern: str) -> int:
    return line_of(REPO, f"docs/html/{name}", pattern)


def test_sphinx_sections_and_entries_keep_their_anchor_and_start_line():
    _, found = sections("api.html")
    got = [(s.kind, s.anchor, s.start_line, s.breadcrumb[-1]) for s in found]
    assert got[:5] == [
        ("section", "api-reference", line("api.html", r"<h1>API reference"), "API reference"),
        ("section", "sessions", line("api.html", r"<h2>Sessions"), "Sessions"),
        (
            "entry",
            "tidewater.Session",
            line("api.html", r'id="tidewater.Session"'),
            "tidewater.Session",
        ),
        (
            "entry",
            "tidewater.Session.fetch",
            line("api.html", r'id="tidewater.Session.fetch"'),
            "tidewater.Session.fetch",
        ),
        (
            "entry",
            "tidewater.Session.close",
            line("api.html", r'id="tidewater.Session.close"'),
            "tidewater.Session.close",
        ),
    ]
    fetch = found[3]
    assert fetch.breadcrumb == (
        "API reference",
        "Sessions",
        "tidewater.Session",
        "tidewater.Session.fetch",
    )
    assert fetch.end_line == line("api.html", r'id="tidewater.Session.close"') - 1
    after = next(s for s in found if "cheap to create" in s.text)  # text after the entries
    assert (after.kind, after.anchor) == ("section", "sessions")
    backoff = next(s for s in found if s.anchor == "tidewater.backoff_delay")
    assert backoff.breadcrumb[:2] == ("API reference", "Retry policies")
    assert backoff.target == "docs/html/api.html#tidewater.backoff_delay"


def test_sphinx_text_is_what_a_reader_sees():
    _, found = sections("api.html")
    text = "\n".join(s.text for s in found)
    assert "<" not in text.replace("<-", "") and "¶" not in text
    assert "Navigation" not in text and "searchtools" not in text and "Copyright" not in text
    fetch = next(s for s in found if s.anchor == "tidewater.Session.fetch")
    assert fetch.text.splitlines()[0] == "fetch(url)"
    assert 'session = Session("https://api.example.org")' in fetch.text  # <pre> kept by line
    assert 'reply = session.fetch("/users/7")' in fetch.text.splitlines()


def test_mkdocs_headings_keep_their_ids_and_tables_read_by_row():
    _, found = sections("config.html")
    got = [(s.anchor, s.start_line, s.breadcrumb) for s in found]
    assert got == [
        ("configuration", line("config.html", r'<h1 id="configuration"'), ("Configuration",)),
        ("proxies", line("config.html", r'<h2 id="proxies"'), ("Configuration", "Proxies")),
        ("logging", line("config.html", r'<h2 id="logging"'), ("Configuration", "Logging")),
    ]
    assert "Setting | Default\nproxy | none\nverify | true" in found[1].text
    assert "Home" not in found[0].text  # the navigation is not content
    assert found[1].end_line == line("config.html", r'<h2 id="logging"') - 1


def test_javadoc_members_are_entries_named_by_their_section_id():
    _, found = sections("Session.html")
    send = next(s for s in found if s.anchor == "send(org.tidewater.Request)")
    assert send.kind == "entry"
    assert send.breadcrumb == ("Class Session", "Method Details", "send")
    assert send.start_line == line("Session.html", r'<section class="detail" id="send')
    assert "public Response send(Request request)" in send.text
    assert "retrying idempotent requests" in send.text
    close = next(s for s in found if s.anchor == "close()")
    assert close.start_line == line("Session.html", r'id="close\(\)"')
    assert send.end_line < close.start_line
    assert all("Package" not in s.text or s.breadcrumb == () for s in found if s.kind == "entry")


def test_older_javadoc_members_are_entries_named_by_the_anchor_before_them():
    """JDK 8-11 Javadoc: ``<a id>`` (``name`` in JDK 8), then a list whose item opens on
    the member's ``<h4>``; a short member is not merged into the next one."""
    page = """<html><body><main>
<h3>Method Detail</h3>
<a id="close()">
</a>
<ul class="blockList">
<li class="blockList">
<h4>close</h4>
<pre class="methodSignature">public void close()</pre>
<div class="block">Closes the stream.</div>
</li>
</ul>
<a name="copy(java.io.File)">
</a>
<ul class="blockListLast">
<li class="blockList">
<h4>copy</h4>
<div class="block">Copies a whole directory to a new location.</div>
</li>
</ul>
<ul class="blockList"><li class="blockList"><h4>Fields</h4><p>No anchor before it.</p></li></ul>
</main></body></html>"""
    found = html_sections("FileUtils.html", page)
    entries = [
        (s.anchor, s.start_line, s.end_line, s.breadcrumb[-1]) for s in found if s.kind == "entry"
    ]
    assert entries == [("close()", 6, 14, "close"), ("copy(java.io.File)", 15, 19, "copy")]
    close = next(s for s in found if s.anchor == "close()")
    assert "Closes the stream." in close.text and "Copies" not in close.text
    assert all(s.kind != "entry" for s in found if "No anchor" in s.text)


def test_a_member_summary_is_marked_as_one_and_the_entries_stay_entries():
    _, found = sections("Session.html")
    summary = [s for s in found if s.kind == "summary"]
    assert summary and summary[0].anchor == "method-summary"
    assert "Sends one request and waits" in summary[0].text
    assert summary[0].start_line >= line("Session.html", r'<section class="summary">')
    assert next(s for s in found if s.anchor == "method-detail").kind == "section"
    entries = {s.anchor for s in found if s.kind == "entry"}
    assert entries == {"send(org.tidewater.Request)", "close()"}
    description = next(s for s in found if "Keeps connections open" in s.text)
    assert description.kind == "section"


def test_a_minified_page_keeps_every_section_on_its_one_line():
    page = (
        '<html><body><main><h1 id="a">Alpha</h1><p>one</p><h2 id="b">Beta</h2><p>two</p>'
        '<h2 id="c">Gamma</h2><p>three</p></main></body></html>'
    )
    found = html_sections("min.html", page)
    assert [(s.anchor, s.start_line, s.end_line, s.text) for s in found] == [
        ("a", 1, 1, "Alpha\none"),
        ("b", 1, 1, "Beta\ntwo"),
        ("c", 1, 1, "Gamma\nthree"),
    ]


def test_an_empty_or_broken_page_has_no_sections():
    assert html_sections("e.html", "") == []
    assert html_sections("c.html", "<!-- only a comment -->\n<script>var x;</script>") == []


def test_a_missing_parser_is_a_clear_refusal():
    with pytest.raises(DocsError, match=r"pip install 'greprag\[docs\]'"):
        need("no_such_parser_module", "no-such-parser")
