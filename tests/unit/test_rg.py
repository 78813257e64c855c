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
    from greprag.rg import FileWords, parse_word_hits, words_argv

    (tmp_path / "a.py").write_text("def load_rows(rows):\n    return rows + load_rows(rows)\n")
    (tmp_path / "b.py").write_text("rowsx = 1  # not a whole word\n")
    (tmp_path / "c.py").write_text("\n\nrows = 0\n")
    spec = SearchSpec(patterns=("rows", "load_rows"), max_count_per_file=5)
    argv = words_argv(find_rg(), spec)
    assert argv[argv.index("-e") + 1] == "rows"
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, check=False).stdout
    found = sorted(parse_word_hits(out, spec.patterns), key=lambda f: f.path)
    # words are pattern numbers, a line's words in the order they occur
    assert found == [
        FileWords("a.py", [1, 1, 2, 2, 2], [1, 0, 0, 1, 0]),
        FileWords("c.py", [3], [0]),
    ]
    assert parse_word_hits(b"garbage\n\nb.py\x00x:rows\n", spec.patterns) == []


def test_a_common_word_leaves_room_for_a_rare_one_further_down(tmp_path):
    """Each word's first occurrences per file are kept, not the file's first lines: the
    rare word 300 lines into a module that names its package on every line is found."""
    from greprag.rg import run_words

    text = "".join(f"x{i} = redis.get({i})\n" for i in range(300)) + "redis.scard(key)\n"
    (tmp_path / "test_commands.py").write_text(text)
    spec = SearchSpec(patterns=("redis", "scard"), max_count_per_file=1000, max_per_word=5)
    (found,) = run_words(find_rg(), tmp_path, spec)
    assert found.lines == [1, 2, 3, 4, 5, 301] and found.words == [0, 0, 0, 0, 0, 1]
    per_file = SearchSpec(patterns=spec.patterns, max_count_per_file=5)
    capped = run_words(find_rg(), tmp_path, per_file)
    assert 1 not in capped[0].words  # a per-file cap alone never reaches it


def test_word_records_that_do_not_split_cleanly_are_read_one_by_one(tmp_path):
    """A word holding the separator, a binary file's notice, a file name with a newline:
    each costs the fast split, none loses or invents an occurrence."""
    from greprag.rg import FileWords, parse_word_hits, words_argv

    (tmp_path / "a.py").write_text("x = rows\ny = a:b + rows\n")
    (tmp_path / "bin.py").write_bytes(b"rows\x00rows\n")
    if os.name != "nt":
        (tmp_path / "odd\nname.py").write_text("rows\n")
    spec = SearchSpec(patterns=("rows", "a:b"), max_count_per_file=5, paths=("a.py", "bin.py"))
    argv = words_argv(find_rg(), spec)
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, check=False).stdout
    assert b"binary file matches" in out  # named files are searched as text, with a notice
    assert parse_word_hits(out, spec.patterns) == [FileWords("a.py", [1, 2, 2], [0, 1, 0])]
    whole = words_argv(find_rg(), SearchSpec(patterns=("rows",), max_count_per_file=5))
    out = subprocess.run(whole, cwd=tmp_path, capture_output=True, check=False).stdout
    assert sorted(f.path for f in parse_word_hits(out, ("rows",))) == ["a.py"]


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_rg_writes_into_a_pipe_wider_than_the_default(tmp_path):
    """A big pass's output fits in rg's pipe while the reading thread waits for the
    interpreter, and the output still arrives whole."""
    import fcntl

    from greprag.rg import spawn, wait_for

    (tmp_path / "a.txt").write_text("needle\n" * 50_000)
    proc = spawn([str(find_rg()), "--no-config", "-c", "needle", "a.txt"], tmp_path)
    assert proc.stdout is not None
    assert fcntl.fcntl(proc.stdout.fileno(), fcntl.F_GETPIPE_SZ) >= 1 << 18
    out, _ = wait_for(proc, 10)
    assert out.strip() == b"50000"


def _child(code: str) -> subprocess.Popen[bytes]:
    """A real process that behaves as ``code`` says, its output piped as rg's is."""
    argv = [sys.executable, "-c", code]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_wait_for_reads_both_pipes_whole_and_reaps_the_process():
    """Several pipes' worth on stdout and stderr at once: neither side blocks, nothing is
    lost, and the exit status is known when the output is returned."""
    from greprag.rg import wait_for

    code = (
        "import sys\n"
        "for i in range(40):\n"
        "    sys.stdout.write('o' * 100_000); sys.stderr.write('e' * 10_000)\n"
        "sys.exit(3)"
    )
    proc = _child(code)
    out, err = wait_for(proc, 30)
    assert (len(out), len(err)) == (4_000_000, 400_000)
    assert proc.returncode == 3


def test_wait_for_waits_for_a_process_that_closes_its_output_before_it_exits():
    from greprag.rg import wait_for

    code = "import os, sys, time\nprint('done', flush=True)\nos.close(1)\ntime.sleep(0.3)"
    proc = _child(code)
    out, _ = wait_for(proc, 30)
    assert out == b"done\n" and proc.returncode == 0


@pytest.mark.parametrize("closes_output", [False, True])
def test_wait_for_kills_a_run_past_its_timeout(closes_output: bool):
    """Past the timeout, whether the process still writes or has closed its output and
    lingers, it is killed and reaped, and the error names the run."""
    from greprag.errors import SearchError
    from greprag.rg import wait_for

    close = "os.close(1); os.close(2)\n" if closes_output else ""
    proc = _child(f"import os, time\n{close}time.sleep(60)")
    with pytest.raises(SearchError, match="rg --files took longer than 0 s"):
        wait_for(proc, 0.3, "rg --files")
    assert proc.returncode is not None


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"^\s*(self\.)?x\s*=", r"^(?u:\s)*(self\.)?x(?u:\s)*="),
        (r"\bFoo\s+bar\s*\(", r"\bFoo\s+bar(?u:\s)*\("),  # ``\s+`` and its literals stay
        (r"[\s*]\s*a", r"[\s*](?u:\s)*a"),  # inside a class: left alone
        (r"[]\s*]\s*b", r"[]\s*](?u:\s)*b"),  # ``]`` first in a class is a literal
        (r"[^]\s*]\s*b", r"[^]\s*](?u:\s)*b"),
        (r"[a[\s*]]\s*c", r"[a[\s*]](?u:\s)*c"),  # nested classes
        (r"\\s*a", r"\\s*a"),  # an escaped backslash, then ``s*``
        (r"[a\s*", r"[a\s*"),  # unbalanced: as it is
    ],
)
def test_prefilter_friendly_spaces_only_outside_classes(pattern, expected):
    from greprag.rg import prefilter_friendly, rg_pattern

    assert prefilter_friendly(pattern) == expected
    assert rg_pattern(pattern, template=True) == expected
    assert rg_pattern(pattern) == pattern  # a model's pattern runs as written


def test_concurrent_passes_split_the_cores_and_the_words_pass_takes_its_share():
    from greprag.rg import RG_MAX_THREADS, shared_threads, words_argv

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    alone = min(cores, RG_MAX_THREADS)
    assert shared_threads(1) == alone
    assert shared_threads(2) == max(1, alone // 2)
    assert shared_threads(10_000) == 1
    spec = SearchSpec(patterns=("load",), threads=3)
    argv = words_argv(Path("rg"), spec)
    assert argv[argv.index("--threads") + 1] == "3"
    assert "--threads" not in words_argv(Path("rg"), SearchSpec(patterns=("load",)))
