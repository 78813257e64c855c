"""HTML manuals (Sphinx, MkDocs, Javadoc output) as sections of text, anchors kept.

Parsed with lxml (the ``docs`` extra), chosen by measurement: it reports each element's
source line, which selectolax does not, and reads a 0.9 MB Sphinx page in 33 ms against
bs4's 835 ms (docs/benchmarks.md, "Docs mode"). Only the page's main content is read
(``role="main"``, ``<main>``, Sphinx's ``div.body``, ``<article>``), never navigation,
scripts or the pilcrow links. Headings start sections; the anchor is the heading's id, its
``<section id>`` or a named ``<a>`` in it. API entries are their own sections: Sphinx's
``<dl><dt id="pkg.func">`` and Javadoc's ``<section class="detail" id="m(int)">``.
A piece is a block's text (a paragraph, a list, a table, a whole ``<pre>``) with the
source line where the block starts.
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import islice

from docs_mode.extra import need
from docs_mode.sections import Section, SectionBuilder
from docs_mode.text import source_lines
from greprag.languages import words

__all__ = ["html_sections"]

_SKIP_TAGS = words("script style nav noscript template form button svg head iframe select input")
_SKIP_CLASSES = words(
    """
    headerlink sphinxsidebar related viewcode-link viewcode-back md-sidebar skip-nav
    sub-nav top-nav bottom-nav table-tabs
    """
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = words(
    """
    p pre ul ol dl table blockquote figure div section article main aside details
    h1 h2 h3 h4 h5 h6 dt dd li hr header footer
    """
)
_LEAVES = words("p pre table figure")
_MAIN_XPATHS = (
    "//*[@role='main']",
    "//main",
    "//div[contains(concat(' ', normalize-space(@class), ' '), ' body ')]",
    "//article",
    "//body",
)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
MAX_TITLE = 120


def _classes(el) -> set[str]:
    return set((el.get("class") or "").split())


def _skipped(el) -> bool:
    tag = el.tag
    if not isinstance(tag, str) or tag in _SKIP_TAGS:
        return True
    names = el.get("class")
    return bool(names) and not _SKIP_CLASSES.isdisjoint(names.split())


def _prune(root) -> None:
    """Remove what a reader does not see (scripts, navigation, pilcrows, comments), keeping
    the text that follows each removed element."""
    for el in [e for e in root.iter() if _skipped(e)]:
        parent = el.getparent()
        if parent is None:
            continue
        if el.tail:
            before = el.getprevious()
            if before is not None:
                before.tail = (before.tail or "") + el.tail
            else:
                parent.text = (parent.text or "") + el.tail
        parent.remove(el)


def _text(el) -> str:
    """The text a reader sees in ``el``: a ``<pre>`` line by line, a table row by row."""
    if el.tag == "pre":
        return "".join(el.itertext()).strip("\n")
    if el.tag == "table":
        rows = (
            " | ".join(
                " ".join("".join(c.itertext()).split()) for c in tr if isinstance(c.tag, str)
            )
            for tr in el.iter("tr")
        )
        return "\n".join(row for row in rows if row.strip(" |"))
    return " ".join("".join(el.itertext()).split())


def _anchor(el) -> str | None:
    """A heading's anchor: its id, an id or name of an ``<a>`` in it or just before it, or
    the id of the ``<section>`` (or div) it opens."""
    if el.get("id"):
        return el.get("id")
    for a in el.iter("a"):
        if "headerlink" in _classes(a) and (a.get("href") or "").startswith("#"):
            return a.get("href")[1:]  # Sphinx's and MkDocs's permalink
    for a in el.iter("a"):
        if a.get("id") or a.get("name"):
            return a.get("id") or a.get("name")
    before = el.getprevious()
    if before is not None and before.tag == "a" and (before.get("id") or before.get("name")):
        return before.get("id") or before.get("name")
    parent = el.getparent()
    if parent is not None and parent.get("id") and parent.index(el) <= 1:
        return parent.get("id")
    return None


def _api_list(el) -> bool:
    """A Sphinx object description: a classed ``<dl>`` whose terms carry ids."""
    if el.tag != "dl" or not el.get("class"):
        return False
    first = next((c for c in el if isinstance(c.tag, str)), None)
    return first is not None and first.tag == "dt" and bool(first.get("id"))


def _javadoc_detail(el) -> bool:
    return el.tag == "section" and "detail" in _classes(el) and bool(el.get("id"))


def _older_javadoc_member(el) -> str | None:
    """The anchor of a JDK 8-11 Javadoc member: a list item opening on its ``<h4>``, in a
    list right after ``<a id="send(Request)">`` (``name`` in JDK 8); None for anything
    else."""
    if el.tag != "li" or not len(el) or el[0].tag != "h4":
        return None
    marker = el.getparent().getprevious()
    if marker is None or marker.tag != "a":
        return None
    return marker.get("id") or marker.get("name")


_SUMMARY_TAGS = words("section div table ul dl")
MIN_SUMMARY_LINKS = 3


def _member_summary(el) -> bool:
    """An index of members documented in full elsewhere: Javadoc's summaries (``<section
    class="method-summary">``, JDK 8's ``table.memberSummary``), Sphinx's autosummary
    tables; a box of links, not a note (an admonition titled "summary")."""
    if el.tag not in _SUMMARY_TAGS:
        return False
    names = _classes(el)
    listed = any(
        n in ("summary", "autosummary", "summary-table") or n.endswith(("-summary", "Summary"))
        for n in names
    )
    if not listed or "admonition" in names:
        return False
    return len(list(islice(el.iter("a"), MIN_SUMMARY_LINKS))) == MIN_SUMMARY_LINKS


def _with_blocks(root) -> set:
    """The elements under ``root`` that contain a block element (one pass, bottom up)."""
    marked: set = set()
    for el in root.iter(*_BLOCKS):
        parent = el.getparent()
        while parent is not None and parent not in marked:
            marked.add(parent)
            parent = parent.getparent()
    return marked


class _Reader:
    def __init__(self, builder: SectionBuilder, with_blocks: set, last: int) -> None:
        self.builder = builder
        self.with_blocks = with_blocks
        self.last = last
        self.pending_ends = 0  # entries that ended; closed at the next element's line
        self.summaries: list[tuple[int, int]] = []  # line ranges of member summaries

    def _line(self, el, line: int | None = None) -> int:
        line = line or el.sourceline or 1
        while self.pending_ends:
            self.builder.end_entry(line)
            self.pending_ends -= 1
        return line

    def walk(self, el) -> None:
        tag = el.tag
        if tag in _HEADINGS:
            title = _text(el)[:MAX_TITLE]
            if title:
                line = self._line(el)
                self.builder.heading(line, _HEADINGS[tag], title, _anchor(el))
                self.builder.piece(line, title)
            return
        if _api_list(el):
            self._entries(el)
            return
        if _javadoc_detail(el):
            self._detail(el, el.get("id"))
            return
        anchor = _older_javadoc_member(el)
        if anchor:
            self._detail(el, anchor)
            return
        if el.sourceline and _member_summary(el):
            self.summaries.append((el.sourceline, _line_after(el, self.last)))
        if tag in _LEAVES or el not in self.with_blocks:
            text = _text(el)
            if text:
                self.builder.piece(self._line(el), text)
            return
        self._container(el)

    def _container(self, el) -> None:
        """Block children in turn; runs of inline text between them as pieces."""
        run: list[str] = [el.text or ""]
        run_line = el.sourceline
        for child in el:
            if isinstance(child.tag, str) and (child.tag in _BLOCKS or child in self.with_blocks):
                self._flush(run, run_line)
                run, run_line = [], None
                self.walk(child)
            elif isinstance(child.tag, str):
                run.append(_text(child))
                run_line = run_line or child.sourceline
            if child.tail and child.tail.strip():
                run.append(child.tail)
                run_line = run_line or child.sourceline
        self._flush(run, run_line)

    def _flush(self, run: list[str], line: int | None) -> None:
        text = " ".join("".join(run).split())
        if text and line:
            self.builder.piece(self._line(None, line), text)

    def _entries(self, dl) -> None:
        """``<dt id>`` terms open entries; their ``<dd>`` bodies are read inside them."""
        opened = False
        for child in dl:
            if not isinstance(child.tag, str):
                continue
            if child.tag == "dt" and child.get("id"):
                if opened:
                    self.pending_ends += 1
                line = self._line(child)
                signature = _text(child)
                self.builder.entry(line, child.get("id")[:MAX_TITLE], child.get("id"))
                self.builder.piece(line, signature)
                opened = True
            else:
                self.walk(child)
        if opened:
            self.pending_ends += 1

    def _detail(self, section, anchor: str) -> None:
        """A Javadoc member (its ``<section>``, or an older Javadoc's list item): its
        heading names the entry, ``anchor`` is the member's id."""
        heading = next((c for c in section if isinstance(c.tag, str) and c.tag in _HEADINGS), None)
        title = _text(heading) if heading is not None else anchor
        self.builder.entry(self._line(section), title[:MAX_TITLE], anchor)
        for child in section:
            if isinstance(child.tag, str):
                if child is heading:
                    self.builder.piece(self._line(child), title)
                else:
                    self.walk(child)
        self.pending_ends += 1


def _main(root):
    for xpath in _MAIN_XPATHS:
        found = root.xpath(xpath)
        if found:
            return found[0]
    return root


def _line_after(el, last: int) -> int:
    """The last line of ``el``: before the next element in document order, else ``last``."""
    node = el
    while node is not None:
        following = node.getnext()
        while following is not None and not isinstance(following.tag, str):
            following = following.getnext()
        if following is not None and following.sourceline:
            return max(following.sourceline - 1, el.sourceline or 1)
        node = node.getparent()
    return last


def html_sections(path: str, text: str) -> list[Section]:
    """The sections of an HTML page's main content, with source lines and anchors."""
    etree = need("lxml.etree", "lxml")
    lines = source_lines(text)
    source = _XML_DECLARATION.sub(lambda m: " " * len(m.group(0)), text, count=1)
    try:  # plain etree elements: lxml.html's element classes cost a lookup per node
        root = etree.fromstring(source, etree.HTMLParser(remove_comments=True))
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):  # empty or hopeless
        return []
    if root is None:
        return []
    main = _main(root)
    _prune(main)
    builder = SectionBuilder(path, lines, start=main.sourceline or 1)
    last = _line_after(main, len(lines))
    reader = _Reader(builder, _with_blocks(main), last)
    reader.walk(main)
    reader._line(main, last + 1)
    return _summaries_marked(builder.finish(last), reader.summaries)


def _summaries_marked(sections: list[Section], summaries: list[tuple[int, int]]) -> list[Section]:
    """Sections that start inside a member summary become of kind ``summary``."""
    if not summaries:
        return sections
    return [
        replace(s, kind="summary")
        if s.kind == "section" and any(a <= s.start_line <= b for a, b in summaries)
        else s
        for s in sections
    ]
