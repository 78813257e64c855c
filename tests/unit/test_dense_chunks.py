from pathlib import Path

from greprag.dense.chunks import SMALL_CLASS_LINES, chunk_file
from greprag.dense.freshness import detect_changes, list_files

BIG_CLASS = 'class Store(Base):\n    """Keeps things."""\n    limit = 3\n\n' + "".join(
    f"    def get_{i}(self, key):\n        return self.data[{i}]\n\n"
    for i in range(SMALL_CLASS_LINES)
)


def test_python_methods_carry_their_class_header():
    chunks = chunk_file("pkg/store.py", "import os\n\n\n" + BIG_CLASS)
    symbols = [c.symbol for c in chunks]
    assert symbols[0] == "Store"  # header: class line, docstring, attributes
    assert symbols[1:4] == ["Store.get_0", "Store.get_1", "Store.get_2"]
    method = chunks[1]
    assert (method.start_line, method.end_line) == (8, 9)
    assert method.text.splitlines()[0] == "class Store(Base):"
    assert "def get_0(self, key):" in method.text


def test_small_class_is_one_chunk_and_imports_only_code_is_skipped():
    text = "import os\nfrom x import y\n\n\nclass P:\n    def a(self):\n        return 1\n"
    chunks = chunk_file("p.py", text)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("P", 5, 7)]


def test_markdown_chunks_are_docs_mode_sections_and_fenced_hashes_are_not_headings():
    para = "Words about the topic at hand, " * 20  # sections this long are not merged
    text = f"# Guide\n{para}\n## Install\n{para}\n```\n# not a heading\n```\n## Use\n{para}\n"
    chunks = chunk_file("docs/guide.md", text)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [
        ("Guide", 1, 2),
        ("Guide > Install", 3, 7),
        ("Guide > Use", 8, 9),
    ]
    assert chunks[1].text.startswith("Guide > Install\n## Install")  # the heading path first


def test_tiny_markdown_sections_merge_into_one_chunk():
    text = "# Guide\nintro\n## Install\npip it\n## Use\nrun it\n"
    chunks = chunk_file("docs/guide.md", text)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("Guide", 1, 6)]


def test_key_ignores_path_so_moved_code_keeps_its_vector():
    text = "def f(a):\n    return a + 1\n"
    assert chunk_file("a.py", text)[0].key == chunk_file("b/c.py", text)[0].key
    assert chunk_file("a.py", "\0binary") == []


def test_detect_changes_edit_add_delete_and_gitignore(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text("x = 1\n")
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "notes.bin").write_text("zz")
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert list_files(tmp_path) == ["a.py"]
    first = detect_changes(tmp_path, {}, {})
    assert list(first.changed) == ["a.py"] and not first.deleted
    files = dict(first.changed)
    (tmp_path / "a.py").write_text("a = 2\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("b = 1\n")
    second = detect_changes(tmp_path, files, first.dirs)
    assert sorted(second.changed) == ["a.py", "sub/b.py"]
    (tmp_path / "a.py").unlink()
    third = detect_changes(tmp_path, {**files, **second.changed}, second.dirs)
    assert third.deleted == ["a.py"] and not third.changed


def test_java_signature_comes_before_its_javadoc():
    doc = "".join(f"     * Line {i} of a long explanation of what follows.\n" for i in range(12))
    methods = "".join(
        f"    /**\n{doc}     */\n    @Override\n    public int size{i}(int limit) {{\n"
        f"        return limit;\n    }}\n\n"
        for i in range(4)
    )
    text = f"package p;\n\n/**\n * A bag.\n */\npublic class Bag {{\n{methods}}}\n"
    chunks = {c.symbol: c for c in chunk_file("p/Bag.java", text)}
    lines = chunks["Bag.size0"].text.splitlines()
    assert lines[:3] == [
        "public class Bag {",
        "public int size0(int limit) {",
        "Line 0 of a long explanation of what follows.",
    ]
    assert "@Override" in lines
