"""The Rust import-use cursors: which uses they are drawn from, and a real retrieval's
answer."""

from __future__ import annotations

from pathlib import Path

from bench.rust_imports import measure, sample
from tests.conftest import written_repo

FILES = {
    "Cargo.toml": '[package]\nname = "shapes"\n',
    "src/lib.rs": "pub mod circle;\npub mod render;\n",
    "src/circle.rs": "pub struct Circle {\n    pub radius: f64,\n}\n",
    "src/render.rs": (
        "use std::fmt::Write;\n"
        "use crate::circle::Circle;\n"
        "use crate::circle::Circle as Round;\n"
        "\n"
        "pub fn disc() -> f64 {\n"
        "    let shape = Circle { radius: 1.0 };\n"
        "    shape.radius\n"
        "}\n"
    ),
}


def _crate(root: Path) -> Path:
    return written_repo(root, FILES)


def test_a_cursor_sits_before_a_crate_import_declared_in_another_file(tmp_path):
    """``Circle``'s use, not the ``use`` lines, not ``std``'s ``Write``, not an alias."""
    cursors = sample(_crate(tmp_path / "shapes"), 5, 0)
    assert [(c.path, c.line, c.column, c.name) for c in cursors] == [
        ("src/render.rs", 6, 16, "Circle")
    ]
    assert cursors[0].definitions == (("src/circle.rs", 1),)


def test_the_retrieval_packs_the_imported_definition(tmp_path):
    row = measure(_crate(tmp_path / "shapes"), 5, 0)
    assert (row["cursors"], row["found"]) == (1, 1)
