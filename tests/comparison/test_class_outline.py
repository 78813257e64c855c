"""A class outlined from its own lines equals its outline from the whole file.

The packer outlines a class at the left margin by parsing only that class's lines
(``syntax.class_outlined``): on a long module that is a fraction of a whole-file parse.
Here, on real third-party code (pinned sdists, see conftest), every class of every file
tree-sitter parses cleanly is outlined both ways, and the two must be identical.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from greprag.files import LinesMemo
from greprag.syntax import analysis, class_outlined, file_spans
from greprag.syntax import outline as outline_module
from greprag.syntax.grammars import grammar_key
from greprag.syntax.members import class_analysis, units_analysis
from greprag.syntax.outline import _class_in, outlines_ahead
from greprag.syntax.spans import Span
from greprag.syntax.treesitter import tree_analysis
from tests.comparison.conftest import fetch
from tests.comparison.test_scan_vs_treesitter import JAVA, PYTHON
from tests.conftest import outline

pytestmark = pytest.mark.comparison


@pytest.mark.parametrize("source", [PYTHON, JAVA], ids=lambda s: s.lang)
def test_class_outline_from_its_lines_equals_the_whole_file_one(source, cache: Path) -> None:
    root = fetch(source, cache)
    key = grammar_key(source.lang)
    compared = top_level = 0
    for file in sorted(p for p in root.glob(source.pattern) if p.is_file()):
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        text = "\n".join(lines)
        if tree_analysis(key, text.encode("utf-8", "replace")) is None:
            continue
        path = file.relative_to(root).as_posix()
        spans = file_spans(path, text, source.lang)
        for span in spans:
            if span.kind != "class":
                continue
            whole = outline(text, source.lang, span.start_line, span.end_line, spans) or None
            first = span.start_line
            mine = class_outlined(path, lines, span.start_line, first, span.end_line).text or None
            assert mine == whole, f"{path}:{span.start_line}-{span.end_line}"
            compared += 1
            top_level += not lines[span.start_line - 1][:1].isspace()
    assert compared >= 50 and top_level >= 20, (compared, top_level)


def test_java_classes_outlined_off_the_whole_files_skeleton_equal_the_files_parse(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Warming parses a Java file's skeleton whole (``outlines_ahead``); each class's
    outline read off it equals its outline from the file's own parse."""
    monkeypatch.setattr(outline_module, "_CLASS_OUTLINES", LinesMemo(512))
    monkeypatch.setattr(analysis, "_FILE_SKELETONS", LinesMemo(2048))
    root = fetch(JAVA, cache)
    compared = off_skeleton = 0
    for file in sorted(p for p in root.glob(JAVA.pattern) if p.is_file()):
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        text = "\n".join(lines)
        if tree_analysis(grammar_key("java"), text.encode("utf-8", "replace")) is None:
            continue
        path = file.relative_to(root).as_posix()
        assert outlines_ahead(path, lines, lambda: False)
        kept = analysis.kept_skeleton(lines, "java")
        for span in (s for s in file_spans(path, text, "java") if s.kind == "class"):
            start, end = span.start_line, span.end_line
            whole = outline(text, "java", start, end, file_spans(path, text, "java")) or None
            mine = class_outlined(path, lines, start, start, end).text or None
            assert mine == whole, f"{path}:{start}-{end}"
            compared += 1
            if kept is not None:
                off_skeleton += bool(
                    _class_in(text, "java", list(kept.defs), start, start, end).text
                )
    assert compared >= 50 and off_skeleton >= 0.9 * compared, (compared, off_skeleton)


def test_java_ranges_cut_short_or_run_on_are_outlined_as_from_the_whole_file(cache: Path) -> None:
    """A Java range that starts at a class but ends elsewhere (cut short, or the class and
    lines after it) gets the whole file's answer: mostly "" at once, from where the brace
    scan closes the class, without a parse."""
    root = fetch(JAVA, cache)
    compared = empty = 0
    for file in sorted(root.glob(JAVA.pattern)):
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        text = "\n".join(lines)
        path = file.relative_to(root).as_posix()
        spans = file_spans(path, text, "java")
        for span in (s for s in spans if s.kind == "class"):
            header = max(span.start_line, min(span.header_end_line, span.end_line))
            for end in {header + 3, span.end_line - 4, span.end_line + 1, span.end_line + 6}:
                for first in {span.start_line, header}:  # annotations may hold braces
                    if first <= end <= len(lines):
                        whole = _class_in(text, "java", spans, span.start_line, first, end).text
                        mine = class_outlined(path, lines, span.start_line, first, end).text
                        assert mine == whole, f"{path}:{span.start_line}-{end}"
                        compared += 1
                        empty += not mine
    assert compared >= 300 and empty >= compared // 2, (compared, empty)


def test_python_classes_are_outlined_from_indentation_without_a_parse(cache: Path) -> None:
    """``members.class_analysis`` answers for nearly every class of click (else the packer
    parses), and every outline it answers equals tree-sitter's."""
    classes = answered = 0
    for file, lines, text, spans, span in _python_classes(cache):
        classes += 1
        scanned = class_analysis(lines, span.start_line, span.end_line)
        assert scanned is not False, f"{file.name}:{span.start_line}"  # it is one class
        if scanned is None:
            continue
        text_alone, analysis = scanned
        answered += 1
        start, end = span.start_line, span.end_line
        whole = outline(text, "python", start, end, spans)
        mine = outline(text_alone, "python", 1, end - start + 1, list(analysis.defs), analysis)
        assert mine == whole, f"{file.name}:{start}-{end}"
    assert classes >= 50 and answered >= 0.98 * classes, (classes, answered)


def test_a_class_and_the_lines_after_it_have_no_class_outline_by_tree_sitter_either(
    cache: Path,
) -> None:
    """``class_analysis`` is sure (False) when the lines hold a class and code after it,
    and the outline is then "" without a parse. A parse finds no class ending there
    either: of those lines alone (a class at the left margin), or of the whole file. So
    for lines that cut an indented class short (outlined from the whole file); a class
    at the left margin cut short stays unsure: alone, its lines may parse as a shorter
    class."""
    key = grammar_key("python")
    sure = cut = 0
    for file, lines, text, spans, span in _python_classes(cache):
        start = span.start_line
        if span.end_line + 8 > len(lines):
            continue
        shorter = class_analysis(lines, span.start_line, span.end_line - 1)
        if lines[start - 1][:1].isspace():  # outlined from the whole file: no class
            assert shorter is False, (file, start)
            assert _class_in(text, "python", spans, start, start, span.end_line - 1).text == ""
        else:
            cut += shorter is False
        end = span.end_line + 8
        if class_analysis(lines, start, end) is not False:
            continue
        sure += 1
        first = next(n for n in range(start, end) if lines[n - 1].strip()[:1] != "@")
        assert _class_in(text, "python", spans, start, first, end).text == "", (file, end)
        alone = "\n".join(lines[start - 1 : end])
        parsed = tree_analysis(key, alone.encode(), strict=True)
        if parsed is not None and not lines[start - 1][:1].isspace():
            shifted = end - start + 1
            found = _class_in(
                alone, "python", list(parsed.defs), 1, first - start + 1, shifted
            ).text
            assert found == "", (file, end)
    assert sure >= 50 and cut == 0, (sure, cut)


def test_python_runs_of_units_are_outlined_from_indentation_as_tree_sitter_would(
    cache: Path,
) -> None:
    """``members.units_analysis`` (module statements around a class, read off the
    indentation) answers for nearly every run of three top-level units holding a class,
    and every outline it answers equals tree-sitter's."""
    root = fetch(PYTHON, cache)
    runs = answered = 0
    for file in sorted(p for p in root.glob(PYTHON.pattern) if p.is_file()):
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        text = "\n".join(lines)
        analysis = tree_analysis(grammar_key("python"), text.encode("utf-8", "replace"))
        if analysis is None:
            continue
        spans = file_spans(file.as_posix(), text, "python")
        units = sorted(
            (
                u
                for u in (*analysis.defs, *analysis.stmts)
                if not lines[u.start_line - 1][:1].isspace()
            ),
            key=lambda u: u.start_line,
        )
        for i in range(len(units) - 2):
            run = units[i : i + 3]
            if not any(u.kind == "class" for u in run):
                continue
            runs += 1
            start, end = run[0].start_line, run[-1].end_line
            scanned = units_analysis(lines, start, end)
            if scanned is None:
                continue
            answered += 1
            text_alone, mine_analysis = scanned
            whole = outline(text, "python", start, end, spans)
            mine = outline(
                text_alone, "python", 1, end - start + 1, list(mine_analysis.defs), mine_analysis
            )
            assert mine == whole, f"{file.name}:{start}-{end}"
    assert runs >= 50 and answered >= 0.95 * runs, (runs, answered)


def _python_classes(cache: Path) -> Iterator[tuple[Path, list[str], str, list[Span], Span]]:
    """(file, lines, text, spans, span) for each class tree-sitter finds in click."""
    root = fetch(PYTHON, cache)
    for file in sorted(p for p in root.glob(PYTHON.pattern) if p.is_file()):
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        text = "\n".join(lines)
        spans = file_spans(file.as_posix(), text, "python")
        for span in spans:
            if span.kind == "class":
                yield file, lines, text, spans, span
