"""The on-disk record of unit layouts (``docs_mode.unit_store``): a later process reads a
file's units without parsing it, yet never uses a record that does not fit the file's
current bytes, and a damaged record is ignored and rewritten."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docs_mode.profile import load_profile
from docs_mode.unit_store import StoredUnits, UnitStore
from docs_mode.units import UnitCache
from greprag import Retriever
from tests.conftest import FIXTURES

FILES = {
    "docs/api.rst": "doc",
    "docs/guide/retries.md": "doc",
    "docs/changelog.txt": "doc",
    "tidewater/client.py": "code",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "manual"
    shutil.copytree(FIXTURES / "docs_manual", root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def cache_of(repo: Path, cache: Path) -> UnitCache:
    """A fresh cache, as a new process has: nothing in memory, the store on disk."""
    profile = load_profile()
    return UnitCache(repo, profile, UnitStore(cache, repo, profile))


def parsed(repo: Path, path: str, kind: str = "all") -> tuple:
    """What parsing the file as it is now gives (no store involved)."""
    return tuple(UnitCache(repo, load_profile()).units(path, kind).units)


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("docs-units/*/*/*.json"))


def test_a_later_process_reads_the_same_units_without_parsing(repo: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first = cache_of(repo, cache)
    for path in FILES:
        assert first.units(path, "all").units  # parsed, and recorded
    assert len(entries(cache)) == len(FILES)
    later = cache_of(repo, cache)
    for path in FILES:
        units = later.units(path, "all").units
        assert isinstance(units, StoredUnits), path  # from the record, not parsed
        assert tuple(units) == parsed(repo, path), path
        assert all(u.text for u in units)


def test_an_edited_file_gets_new_units_even_with_its_old_size_and_mtime(repo: Path, tmp_path: Path):
    cache, path = tmp_path / "cache", "docs/api.rst"
    before = tuple(cache_of(repo, cache).units(path, "all").units)
    file = repo / path
    old = file.read_text(encoding="utf-8")
    stat = file.stat()
    # the same size and mtime: only the content hash tells the record is stale
    new = old.replace("Retry", "Repeat", 1).replace("\n\n", "\n*\n", 1)
    assert len(new.encode()) == len(old.encode()) + 2
    new = new.replace("  ", " ", 2)
    assert len(new.encode()) == stat.st_size and new != old
    file.write_text(new, encoding="utf-8")
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = tuple(cache_of(repo, cache).units(path, "all").units)
    assert after == parsed(repo, path) and after != before
    assert any("Repeat" in u.text for u in after)
    again = cache_of(repo, cache).units(path, "all").units
    assert isinstance(again, StoredUnits) and tuple(again) == after  # re-recorded


DAMAGE = [
    b"",
    b"{not json",
    b"[]",
    b'{"key": 1}',
    # the right key, columns that do not fit: past the file's end, wrong types
    b"KEY_STARTS_PAST_END",
    b"KEY_WRONG_TYPES",
    b"KEY_PIECE_PAST_END",
]


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_record_is_ignored_and_rewritten(repo: Path, tmp_path: Path, damage: bytes):
    cache, path = tmp_path / "cache", "docs/api.rst"
    cache_of(repo, cache).units(path, "all")
    (entry,) = entries(cache)
    good = json.loads(entry.read_bytes())
    if damage == b"KEY_STARTS_PAST_END":
        damage = json.dumps({**good, "ends": [*good["ends"][:-1], 10**6]}).encode()
    elif damage == b"KEY_WRONG_TYPES":
        damage = json.dumps({**good, "pieces": [["1", 2]] * len(good["pieces"])}).encode()
    elif damage == b"KEY_PIECE_PAST_END":
        damage = json.dumps({**good, "pieces": [*good["pieces"][:-1], [1, 10**6]]}).encode()
    entry.write_bytes(damage)
    units = cache_of(repo, cache).units(path, "all").units
    assert not isinstance(units, StoredUnits)  # parsed again
    assert tuple(units) == parsed(repo, path)
    assert json.loads(entry.read_bytes()) == good  # and recorded again


def test_records_of_another_parser_version_are_removed(repo: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    store = UnitStore(cache, repo, load_profile())
    older = store.folder.parent / "0123456789abcdef01234567"
    older.mkdir(parents=True)
    (older / "stale.json").write_text("{}")
    UnitCache(repo, load_profile(), store).units("docs/api.rst", "all")
    assert not older.exists() and len(entries(cache)) == 1


def test_html_pages_are_not_recorded(repo: Path, tmp_path: Path):
    """An HTML section's text is what the page shows, not a line range: parsed each time."""
    cache = tmp_path / "cache"
    units = cache_of(repo, cache).units("docs/html/api.html", "all").units
    assert units and not entries(cache)
    assert tuple(units) == parsed(repo, "docs/html/api.html")


def test_search_answers_the_same_from_the_record_and_survives_damage(repo: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    question = "how long to wait before the next retry attempt"
    first = Retriever(repo, routes="grep", cache_dir=str(cache)).search(question)
    assert entries(cache)
    later = Retriever(repo, routes="grep", cache_dir=str(cache)).search(question)
    assert [b.to_dict() for b in later.blocks] == [b.to_dict() for b in first.blocks]
    for entry in entries(cache):
        entry.write_bytes(entry.read_bytes()[:-7])  # cut short: no longer JSON
    argv = ["search", question, "-r", str(repo), "--cache-dir", str(cache), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "greprag", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    blocks = json.loads(done.stdout)["blocks"]
    assert blocks == [b.to_dict() for b in first.blocks]
