"""The sparse baselines (CrossCodeEval BM25, RepoCoder Jaccard) on a tiny corpus."""

from __future__ import annotations

from pathlib import Path

from bench.baselines import SparseIndex, chunk_lines, context_of, pack, repo_chunks
from bench.facts import Location
from bench.systems import NoRetrieval, SparseSystem, make_systems
from bench.tasks import Task
from greprag.tokens import count_tokens


def _corpus(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg/parser.py").write_text(
        "\n".join(["# filler"] * 12 + ["def parse_config(path):", "    return load_yaml(path)"])
        + "\n"
    )
    (root / "pkg/net.py").write_text("def fetch_url(url):\n    return urlopen(url)\n")
    (root / "pkg/app.py").write_text("cfg = parse_config('x.yml')\nparse_config\n")
    (root / "README.md").write_text("parse_config everywhere parse_config parse_config\n")
    for index in range(6):  # BM25's idf needs the query term to be rare in the corpus
        (root / f"pkg/other{index}.py").write_text(f"def helper{index}():\n    return {index}\n")
    return root


def test_chunk_lines_windows_and_stride():
    text = "\n".join(f"line{i}" for i in range(1, 26))
    chunks = chunk_lines("a.py", text, size=20, stride=10)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 20), (11, 25)]
    tens = chunk_lines("a.py", text, size=10, stride=10)
    assert [(c.start_line, c.end_line) for c in tens] == [(1, 10), (11, 20), (21, 25)]
    assert tens[0].tokens[:2] == ["line1", "line2"]


def test_bm25_and_jaccard_rank_the_definition_and_skip_the_current_file(tmp_path):
    root = _corpus(tmp_path)
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    chunks = repo_chunks(root, files, "python", 10, 10)
    assert "README.md" not in {c.path for c in chunks}
    for method in ("bm25", "jaccard"):
        ranked = SparseIndex(chunks, method).rank("x = parse_config(", exclude_path="pkg/app.py")
        assert ranked, method
        best = ranked[0][0]
        assert (best.path, best.start_line, best.end_line) == ("pkg/parser.py", 11, 15), method
        assert all(c.path != "pkg/app.py" for c, _ in ranked)


def test_pack_keeps_whole_chunks_within_the_budget(tmp_path):
    root = _corpus(tmp_path)
    chunks = repo_chunks(root, ["pkg/net.py", "pkg/parser.py"], "python", 10, 10)
    ranked = [(c, 1.0) for c in chunks]
    everything = pack(ranked, budget=4096)
    assert len(everything) == len(chunks)
    small = pack(ranked, budget=everything[0].tokens)
    assert len(small) == 1
    assert count_tokens(context_of(small)) <= everything[0].tokens
    assert pack(ranked, budget=1) == []


def test_sparse_system_end_to_end(tmp_path):
    root = _corpus(tmp_path)
    task = Task(
        "t",
        "python",
        "fixture",
        "import",
        "pkg/app.py",
        1,
        6,
        "parse_config('x.yml')",
        "parse_config",
        None,
        (Location("pkg/parser.py", 13, 13, 14),),
        (),
        False,
    )
    system = SparseSystem("cceval-bm25", "bm25", 10, 10, 10)
    assert system.setup(root, "python") >= 0
    got = system.retrieve(root, task, "cfg = parse_config")
    assert got.blocks[0].path == "pkg/parser.py"
    assert "def parse_config" in got.context
    assert NoRetrieval().retrieve(root, task, "").context == ""
    assert [s.name for s in make_systems(["no-retrieval", "repocoder-jaccard"])] == [
        "no-retrieval",
        "repocoder-jaccard",
    ]
