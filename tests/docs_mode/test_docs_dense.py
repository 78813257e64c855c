"""The dense index covers documentation sections, and search fuses both routes per unit
(real model, real faiss, the fixture manual)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from docs_mode.units import file_sections
from greprag import Retriever
from greprag.routes.dense import dense_available

pytestmark = [
    pytest.mark.dense,
    pytest.mark.skipif(not dense_available(), reason="dense extra not installed"),
]


@pytest.fixture(scope="module")
def indexed(docs_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from greprag.dense.index import DenseIndex

    repo = tmp_path_factory.mktemp("dense-docs") / "repo"
    shutil.copytree(docs_repo, repo)
    cache = tmp_path_factory.mktemp("dense-cache")
    DenseIndex(repo, cache_dir=cache).update()
    return repo, cache


def test_the_index_holds_the_same_sections_docs_mode_searches(indexed):
    from greprag.dense.index import DenseIndex

    repo, cache = indexed
    index = DenseIndex(repo, cache_dir=cache)
    index.reload()
    rows = {(r.path, r.start_line, r.end_line) for r in index.snapshot.rows}
    for path in ("docs/api.rst", "docs/guide/retries.md", "docs/html/api.html"):
        text = (repo / path).read_text(encoding="utf-8")
        expected = {(path, s.start_line, s.end_line) for s in file_sections(path, text)}
        assert expected and expected <= rows, path


def test_search_fuses_grep_and_dense_at_the_same_unit(indexed):
    repo, cache = indexed
    retriever = Retriever(repo, routes="auto", dense_cache_dir=str(cache))
    result = retriever.search("wait longer between attempts after each failure", k=6)
    assert result.routes["dense"].startswith("question")
    assert any(b.route == "grep+dense" for b in result.blocks), [
        (b.path, b.start_line, b.route) for b in result.blocks
    ]
    keys = [(b.path, b.start_line) for b in result.blocks]
    assert len(keys) == len(set(keys))  # one block per unit, whichever routes found it
    dense_only = Retriever(repo, routes="dense", dense_cache_dir=str(cache)).search(
        "wait longer between attempts after each failure", k=6
    )
    assert dense_only.blocks and {b.route for b in dense_only.blocks} == {"dense"}
    assert dense_only.routes["grep"].startswith("not run")


def test_an_edited_doc_is_searched_as_it_is_now(indexed, tmp_path: Path):
    repo, cache = indexed
    notes = repo / "docs" / "notes.md"
    notes.write_text("# Moon phases\n\nThe tide tables follow the phases of the moon.\n")
    try:
        result = Retriever(repo, routes="dense", dense_cache_dir=str(cache)).search(
            "lunar cycle and the tides", k=3
        )
        assert "docs/notes.md" in {b.path for b in result.blocks}
    finally:
        notes.unlink()


def test_a_one_shot_search_skips_the_model_load_and_says_so(indexed):
    repo, cache = indexed
    question = "wait longer between attempts after each failure"
    one_shot = Retriever(repo, routes="auto", dense_cache_dir=str(cache), load_dense=False)
    result = one_shot.search(question, k=6)
    assert result.routes["dense"].startswith("not run") and "one-shot" in result.routes["dense"]
    assert any(note.startswith("dense:") and "greprag serve" in note for note in result.fallbacks)
    assert {b.route for b in result.blocks} == {"grep"}
    grep_only = Retriever(repo, routes="grep").search(question, k=6)
    assert [(b.path, b.start_line) for b in result.blocks] == [
        (b.path, b.start_line) for b in grep_only.blocks
    ]
