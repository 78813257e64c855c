"""One line model for rg and the file cache; odd bytes and encodings give a correct result
or one clear line."""

from __future__ import annotations

import json
from pathlib import Path

from greprag import Retriever
from tests.reliability.cases import case, cases
from tests.reliability.conftest import cli, cli_env, make_repo, one_line_error

AREA = "one line model and text"
APP = "from pkg.loader import DataLoader\n\nloader = DataLoader()\nloader."


def _rg_lines(data: bytes) -> list[bytes]:
    """The file's lines as rg numbers them: split at b"\\n" only."""
    lines = data.split(b"\n")
    return lines[:-1] if lines[-1] == b"" else lines


@cases(
    AREA,
    [
        (
            "form-feed",
            "form feeds (\\f) between and inside definitions",
            "the block's lines and text are rg's (split at \\n only); the \\f kept",
            "\x0c\nclass DataLoader:\n    '''one\x0ctwo'''\n    def load_batch(self):\n"
            "        return 1\n\x0c\ndef helper():\n    return DataLoader()\n",
            "\x0c",
        ),
        (
            "line-separator",
            "U+2028 and U+2029 inside a docstring and a comment",
            "the block's lines and text are rg's; the separators kept inside their lines",
            "# a\u2028b\nclass DataLoader:\n    '''x\u2029y\u2028z'''\n    def load_batch(self):\n"
            "        return 1\n",
            "\u2028",
        ),
        (
            "crlf",
            "CRLF line endings",
            "the block's lines are rg's; no \\r in the text",
            "class DataLoader:\r\n    def load_batch(self):\r\n        return 1\r\n",
            "def load_batch(self):\n",
        ),
        (
            "utf8-bom",
            "a UTF-8 byte-order mark",
            "the block starts at line 1 without the mark",
            "\ufeffclass DataLoader:\n    def load_batch(self):\n        return 1\n",
            "class DataLoader:",
        ),
    ],
    "text, kept",
)
def test_block_text_follows_rgs_lines(tmp_path, text, kept):
    data = text.encode("utf-8")
    repo = make_repo(tmp_path / "repo", {"pkg/loader.py": data, "app.py": APP})
    res = Retriever(repo).retrieve(file="app.py", line=4)
    (block,) = [b for b in res.blocks if b.path == "pkg/loader.py"]
    lines = [
        line.decode("utf-8").removesuffix("\r").removeprefix("\ufeff") for line in _rg_lines(data)
    ]
    assert block.text == "\n".join(lines[block.start_line - 1 : block.end_line])
    assert "class DataLoader:" in block.text and kept in block.text and "\r" not in block.text


@case(
    AREA,
    "a Latin-1 byte (0xE9) on the definition line",
    "the definition comes back, the byte shown as U+FFFD (not dropped)",
)
def test_a_latin1_definition_line_is_visible(tmp_path):
    data = b"class DataLoader:  # caf\xe9\n    def load_batch(self):\n        return 1\n"
    repo = make_repo(tmp_path / "repo", {"pkg/loader.py": data, "app.py": APP})
    res = Retriever(repo).retrieve(file="app.py", line=4)
    (block,) = [b for b in res.blocks if b.path == "pkg/loader.py"]
    assert block.text.startswith("class DataLoader:  # caf\ufffd")


@cases(
    AREA,
    [
        (
            "utf16-bom",
            "a UTF-16 (LE, with byte-order mark) source file",
            "decoded: the block's text is the definition, no NULs",
            "utf-16",
            None,
        ),
        (
            "utf16-no-bom",
            "a UTF-16 file without a byte-order mark (rg cannot tell it is text)",
            "no NUL garbage in the context; the other blocks come back",
            "utf-16-le",
            "binary",
        ),
    ],
    "encoding, skip",
)
def test_utf16_is_decoded_or_left_out(tmp_path, encoding, skip):
    data = "class DataLoader:\n    def load_batch(self):\n        return 1\n".encode(encoding)
    other = "from pkg.loader import DataLoader\n\n\ndef use():\n    return DataLoader()\n"
    repo = make_repo(
        tmp_path / "repo", {"pkg/loader.py": data, "pkg/other.py": other, "app.py": APP}
    )
    res = Retriever(repo).retrieve(file="app.py", line=4)
    assert "\x00" not in res.context
    if skip is None:
        (block,) = [b for b in res.blocks if b.path == "pkg/loader.py"]
        assert block.text.startswith("class DataLoader:\n    def load_batch")
    else:  # searched as the binary it looks like: no match, no text from it
        assert all(b.path != "pkg/loader.py" for b in res.blocks)
        assert any(b.path == "pkg/other.py" for b in res.blocks)


@case(
    AREA,
    "a file that turns binary (NUL) after 10 KB of text, with a match before it",
    "skipped with reason 'binary'",
)
def test_a_late_binary_file_is_a_skip(tmp_path):
    data = b"class DataLoader:\n    pass\n" + b"# filler\n" * 1200 + b"\x00\x01\x02 DataLoader\n"
    repo = make_repo(
        tmp_path / "repo",
        {"pkg/blob.py": data, "pkg/loader.py": "class DataLoader:\n    pass\n", "app.py": APP},
    )
    res = Retriever(repo).retrieve(file="app.py", line=4)
    assert {s.path: s.reason for s in res.skipped}.get("pkg/blob.py") == "binary"
    assert all(b.path != "pkg/blob.py" for b in res.blocks)


@cases(
    AREA,
    [
        (
            "binary",
            "a binary file as the cursor file",
            "one line 'is a binary file', exit 2",
            b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4,
            2,
        ),
        (
            "empty",
            "an empty file as the cursor file, line 1",
            "empty result, exit 0",
            b"",
            0,
        ),
        (
            "cr-only",
            "a cursor file with old-Mac \\r-only line endings",
            "a result (rg's one line), exit 0",
            b"from pkg.loader import DataLoader\rloader = DataLoader()\rloader.",
            0,
        ),
    ],
    "data, code",
)
def test_an_odd_cursor_file(loader_repo, data, code):
    (loader_repo / "odd.py").write_bytes(data)
    proc = cli("retrieve", "--repo", str(loader_repo), "--file", "odd.py", "--line", "1")
    if code:
        one_line_error(proc, code, "binary file")
    else:
        assert proc.returncode == 0


@cases(
    AREA,
    [
        (
            "umlaut",
            "non-ASCII identifiers: from pkg.mod import größe, Straße",
            "the definitions of größe and Straße come back",
            "from pkg.mod import größe, Straße\n\ns = Straße()\nv = größe(s.länge())\ns.",
            ["def größe", "class Straße"],
        ),
        (
            "leading",
            "an identifier that starts with a non-ASCII letter (Ärger)",
            "its definition comes back (not the fragment 'rger')",
            "from pkg.mod import Ärger\n\nx = Ärger()\nx.",
            ["class Ärger"],
        ),
    ],
    "app, wanted",
)
def test_non_ascii_identifiers_are_found(tmp_path, app, wanted):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": "def größe(x):\n    return x\n\n\nclass Straße:\n    def länge(self):\n"
            "        return 1\n\n\nclass Ärger:\n    pass\n",
            "app.py": app,
        },
    )
    proc = cli("retrieve", "--repo", str(repo), "--file", "app.py", "--line", "4", "--json")
    context = json.loads(proc.stdout)["context"]
    assert proc.returncode == 0 and all(w in context for w in wanted), context


@cases(
    AREA,
    [
        (
            "binary-stdin",
            "binary bytes on stdin under a strict UTF-8 locale (LC_ALL=C.UTF-8, PYTHONUTF8=0)",
            "one line 'stdin holds binary data', exit 2",
            b"\x7fELF\x02\x01\x01\x00\x00binary\x00\xff\xfe",
            2,
        ),
        (
            "latin1-stdin",
            "Latin-1 (non-UTF-8) text on stdin under a strict UTF-8 locale",
            "a result (bytes shown as U+FFFD), exit 0",
            b"# caf\xe9\nfrom pkg.loader import DataLoader\nloader = DataLoader()\nloader.",
            0,
        ),
    ],
    "data, code",
)
def test_stdin_bytes_under_a_strict_locale(loader_repo, data, code):
    env = cli_env(PYTHONUTF8="0", LC_ALL="C.UTF-8", LANG="C.UTF-8")
    args = ["retrieve", "--repo", str(loader_repo), "--stdin", "--language", "python"]
    proc = cli(*args, stdin=data, env=env)
    if code:
        one_line_error(proc, code, "binary")
    else:
        assert proc.returncode == 0 and "class DataLoader" in proc.stdout


@case(
    AREA,
    "a repository config setting a bogus token encoding (encoding = 'bogus')",
    "one line naming the encodings that ship offline, exit 2",
)
def test_a_bogus_encoding_is_one_line(loader_repo):
    (loader_repo / ".greprag.toml").write_text('encoding = "bogus"\n')
    proc = cli("retrieve", "--repo", str(loader_repo), "--file", "app.py", "--line", "4")
    one_line_error(proc, 2, "encoding", "cl100k_base")


@case(
    AREA,
    "a cursor file that is a symlink to a file outside the repository",
    "one line 'outside the repository', exit 2; nothing read",
)
def test_a_cursor_file_linking_outside_is_refused(loader_repo, tmp_path: Path):
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'outside'\n")
    (loader_repo / "link.py").symlink_to(secret)
    proc = cli("retrieve", "--repo", str(loader_repo), "--file", "link.py", "--line", "1")
    one_line_error(proc, 2, "outside the repository")
    assert "outside'" not in proc.stdout


@case(
    AREA,
    "an ASCII locale (LC_ALL=C, PYTHONUTF8=0) with non-ASCII identifiers to search",
    "the definition comes back as JSON and as text, exit 0 (rg gets its argv as UTF-8 bytes)",
)
def test_an_ascii_locale_still_searches_non_ascii_names(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": "def größe(x):\n    return x\n",
            "app.py": "from pkg.mod import größe\n\nv = größe(",
        },
    )
    env = cli_env(PYTHONUTF8="0", LC_ALL="C", LANG="C")
    args = ["retrieve", "--repo", str(repo), "--file", "app.py", "--line", "3"]
    as_json = cli(*args, "--json", env=env)
    assert as_json.returncode == 0 and "def größe" in json.loads(as_json.stdout)["context"]
    as_text = cli(*args, env=env)  # printed through an ASCII stdout
    assert as_text.returncode == 0 and "def gr" in as_text.stdout
