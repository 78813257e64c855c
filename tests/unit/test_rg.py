"""Finding rg and building its argv safely."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from greprag.rg import SearchSpec, build_argv, escape_regex, find_rg, parse_size


def test_rg_is_found_without_the_venv_on_path(tmp_path):
    code = "from greprag.rg import find_rg; print(find_rg())"
    env = {k: v for k, v in os.environ.items() if k != "GREPRAG_RG"}
    env["PATH"] = "/usr/bin:/bin"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    found = Path(out.stdout.strip())
    assert found.name == "rg" and os.access(found, os.X_OK)


def test_rg_override_that_does_not_exist_is_a_clear_error():
    from greprag.rg import RipgrepNotFound

    with pytest.raises(RipgrepNotFound, match="rg not found at /nope/rg"):
        find_rg("/nope/rg")


def test_argv_puts_every_pattern_after_dash_e_and_takes_no_flags_from_it():
    argv = build_argv(Path("/x/rg"), SearchSpec(patterns=("--pre=sh", "-z"), langs=("python",)))
    assert argv[argv.index("--pre=sh") - 1] == "-e" and argv[argv.index("-z") - 1] == "-e"
    assert argv[-2:] == ["--", "."] and "--type" in argv and "py" in argv
    assert not any(a.startswith("--pre") for i, a in enumerate(argv) if argv[i - 1] != "-e")


def test_escape_regex_and_sizes():
    assert escape_regex("a.b(c)$") == r"a\.b\(c\)\$"
    assert parse_size("1M") == 1 << 20 and parse_size("512K") == 512 << 10


def test_word_search_prints_each_occurrence_and_parses_back(tmp_path):
    from greprag.rg import parse_word_hits, words_argv

    (tmp_path / "a.py").write_text("def load_rows(rows):\n    return rows + load_rows(rows)\n")
    (tmp_path / "b.py").write_text("rowsx = 1  # not a whole word\n")
    spec = SearchSpec(patterns=("rows", "load_rows"), max_count_per_file=5, paths=("a.py", "b.py"))
    argv = words_argv(find_rg(), spec)
    assert argv[argv.index("-e") + 1] == "rows" and argv[argv.index("--") + 1 :] == ["a.py", "b.py"]
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, check=False).stdout
    hits = sorted((h.path, h.line_number, h.word) for h in parse_word_hits(out))
    assert hits == [
        ("a.py", 1, "load_rows"),
        ("a.py", 1, "rows"),
        ("a.py", 2, "load_rows"),
        ("a.py", 2, "rows"),
        ("a.py", 2, "rows"),
    ]
    assert list(parse_word_hits(b"garbage\nb.py\x00x:rows\n")) == []


def _search(rg: Path, root: Path, *, json_output: bool) -> subprocess.CompletedProcess[bytes]:
    spec = SearchSpec(patterns=(r"\bfoo\b",))
    argv = build_argv(rg, spec, json_output=json_output)
    return subprocess.run([os.fsencode(a) for a in argv], cwd=root, capture_output=True)


def test_plain_records_read_as_the_json_answer(tmp_path):
    """Binary files, CRLF and Latin-1 lines, names with a newline or not UTF-8, a long
    file: the plain reader and the --json reader agree on every match, binary and skip."""
    from greprag.rg import collect, collect_plain

    (tmp_path / "a.py").write_bytes(b"foo = 1\r\nbar\r\nfoo(2)\r\n")
    (tmp_path / "latin.py").write_bytes(b"foo = '\xe9t\xe9'\n")
    (tmp_path / "bin.dat").write_bytes(b"foo\n" + b"x" * 20_000 + b"\x00foo\n")
    (tmp_path / "new\nline.py").write_bytes(b"foo: int\n")
    (tmp_path / "colon: x.py").write_bytes(b"  foo: 3\n")
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "long.py").write_text("".join(f"foo{i} foo\n" for i in range(500)))
    if sys.platform.startswith("linux"):
        (tmp_path / os.fsdecode(b"bad\xffname.py")).write_bytes(b"foo\n")
    rg = find_rg()
    plain = _search(rg, tmp_path, json_output=False)
    as_json = _search(rg, tmp_path, json_output=True)
    assert plain.returncode == as_json.returncode == 0
    mine, reference = collect_plain(plain.stdout), collect(as_json.stdout, b"", 0)
    key = lambda m: (m.path, m.line_number)  # noqa: E731 - rg's file order varies by thread
    # the route leaves out a binary file's lines: --json shows those before the NUL
    expected = [m for m in reference.matches if m.path not in reference.binaries]
    assert sorted(mine.matches, key=key) == sorted(expected, key=key)
    assert len(mine.matches) == 2 + 1 + 1 + 50  # --max-count 50 in long.py
    assert sorted(mine.binaries) == sorted(reference.binaries) == ["bin.dat"]
    assert mine.skipped == reference.skipped and len(mine.skipped) == (
        2 if sys.platform.startswith("linux") else 1
    )
    assert {m.text for m in mine.matches if m.path == "a.py"} == {"foo = 1", "foo(2)"}
