"""Markdown sections on the fixture guide: heading paths, exact line ranges, whole fences."""

from __future__ import annotations

import itertools

from docs_mode.markdown import markdown_sections
from docs_mode.sections import SectionSizes, sections_of
from tests.conftest import FIXTURES, line_of, read_lines

REPO = FIXTURES / "docs_manual"
GUIDE = "docs/guide/retries.md"
TEXT = (REPO / GUIDE).read_text(encoding="utf-8")
LINES = read_lines(REPO, GUIDE)
TITLE = "Retries and timeouts"


def heading(text: str) -> int:
    return line_of(REPO, GUIDE, rf"^#+ {text}$")


def test_each_heading_starts_a_section_with_its_path_and_exact_lines():
    got = [(s.breadcrumb, s.start_line, s.end_line) for s in markdown_sections(GUIDE, TEXT)]
    starts = [
        heading(TITLE),
        heading("Timeouts"),
        heading("Retry policy"),
        heading("Backoff"),
        heading("Which requests are retried"),
        heading("Tuning"),
        heading("Troubleshooting"),
    ]
    ends = [s - 1 for s in starts[1:]] + [len(LINES)]
    crumbs = [
        (TITLE,),
        (TITLE, "Timeouts"),
        (TITLE, "Retry policy"),
        (TITLE, "Retry policy", "Backoff"),
        (TITLE, "Retry policy", "Which requests are retried"),
        (TITLE, "Tuning"),
        (TITLE, "Troubleshooting"),
    ]
    front_matter = ((), 1, starts[0] - 1)
    assert got == [front_matter, *zip(crumbs, starts, ends, strict=True)]


def test_a_section_text_is_exactly_its_source_lines():
    for section in markdown_sections(GUIDE, TEXT):
        expected = "\n".join(LINES[section.start_line - 1 : section.end_line])
        assert section.text == expected, section.breadcrumb


def test_a_hash_comment_inside_a_fence_is_not_a_heading_and_the_fence_is_one_piece():
    fence_open = line_of(REPO, GUIDE, r"^```python")
    timeouts = next(s for s in markdown_sections(GUIDE, TEXT) if s.title == "Timeouts")
    assert timeouts.start_line < fence_open < timeouts.end_line
    fence = next(p for p in timeouts.pieces if p.line == fence_open)
    assert fence.text.startswith("```python") and "# a comment in a fence" in fence.text
    assert fence.text.rstrip().endswith("```")


def test_a_huge_section_splits_between_paragraphs_never_inside_a_fence():
    sizes = SectionSizes(min_chars=1, max_chars=450)
    parts = [s for s in sections_of(GUIDE, TEXT, sizes) if s.title == "Troubleshooting"]
    assert len(parts) > 2
    assert parts[0].start_line == heading("Troubleshooting") and parts[-1].end_line == len(LINES)
    for left, right in itertools.pairwise(parts):
        assert left.end_line + 1 == right.start_line  # contiguous, nothing lost
    fence_open = line_of(REPO, GUIDE, r"^```text")
    fence_close = next(n for n in range(fence_open + 1, len(LINES) + 1) if LINES[n - 1] == "```")
    holder = [p for p in parts if p.start_line <= fence_open <= p.end_line]
    assert len(holder) == 1 and holder[0].end_line >= fence_close
    for part in parts:
        assert len(part.text) <= 450 or len(part.pieces) == 1
        assert LINES[part.start_line - 1].strip()  # a part starts at a paragraph, not a gap


def test_small_sections_merge_under_their_parent_and_sizes_stay_bounded():
    sections = sections_of(GUIDE, TEXT)  # the default sizes: merge under 500, split over 4000
    tuning = next(s for s in sections if s.start_line == heading("Tuning"))
    assert tuning.end_line > heading("Troubleshooting")  # "Short." merged with the next one
    assert tuning.breadcrumb == (TITLE,)  # two siblings merged: labelled by their parent
    assert sections[0].start_line == 1 and sections[0].breadcrumb == (TITLE,)  # front matter
    assert all(len(s.text) <= 4000 for s in sections)
