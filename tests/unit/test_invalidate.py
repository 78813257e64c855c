"""The warm-state hooks: ``Retriever.invalidate`` (grep route file lists) and a per-call
budget."""

from __future__ import annotations

from pathlib import Path

from greprag import Retriever
from greprag.routes.grep import GrepRoute
from tests.conftest import cursor
from tests.server.serving import served_copy


def test_file_lists_survive_edits_and_follow_adds_and_deletes(tmp_path: Path):
    repo = served_copy(tmp_path / "py")
    route = GrepRoute(repo, file_list_ttl=3600)
    listed = route.files("python")
    assert "data/loader.py" in listed
    loader = repo / "data" / "loader.py"
    loader.write_text(loader.read_text() + "\n# edited\n")
    route.invalidate(["data/loader.py"])
    assert route.files("python") is listed, "an edit keeps the cached list"
    (repo / "data" / "fresh.py").write_text("X = 1\n")
    route.invalidate(["data/fresh.py"])
    assert "data/fresh.py" in route.files("python")
    (repo / "data" / "cache.py").unlink()
    route.invalidate(["data/cache.py"])
    assert "data/cache.py" not in route.files("python")
    loader.write_text("x = 1\n" * 400_000)  # over the 1M size limit now
    route.invalidate(["data/loader.py"])
    assert "data/loader.py" not in route.files("python")
    route.invalidate(None)
    assert route._file_lists == {}


def test_a_per_call_budget_overrides_the_setting(tmp_path: Path):
    repo = served_copy(tmp_path / "py")
    at = cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "self.loader.")
    retriever = Retriever(repo, budget=4096)
    small = retriever.retrieve(**at.kwargs(), budget=150)
    assert small.tokens <= 150 and small.dropped
    assert retriever.retrieve(**at.kwargs()).tokens > 150
