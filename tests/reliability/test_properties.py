"""Properties checked on generated inputs (hypothesis): the query validator, dedup and
packing over real files, and path containment against a tree with links in and out."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from greprag.config import Settings
from greprag.context import LocalContext
from greprag.cursor_file import cursor_file
from greprag.errors import QueryRejected
from greprag.files import FileCache, inside, read_bytes, safe_relative
from greprag.fusion.assemble import assemble
from greprag.languages import language_for_path
from greprag.models import Candidate, Query, QueryPlan
from greprag.rg import SearchSpec, build_argv
from greprag.router.validate import validate_plan
from greprag.syntax import BlockWidener
from greprag.tokens import count_tokens, count_tokens_upto, get_encoding
from tests.conftest import FIXTURES
from tests.reliability.cases import case

AREA = "properties"
CHECKS = settings(
    max_examples=int(os.environ.get("RELIABILITY_EXAMPLES", "100")),
    database=None,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# -- the query validator ---------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "Data",
        "Loader",
        r"\b",
        r"\s+",
        "(",
        ")",
        "|",
        "*",
        "+",
        "?",
        "{2}",
        "{,5}",
        "[a-z]",
        "-",
        "--pre",
        "-z",
        "^",
        "$",
        ".",
        "\\",
        r"\Z",
        "(?=",
        r"\1",
        "\x00",
        "\n",
        "é",
        " ",
    ]
)
_PATTERNS = st.one_of(st.text(max_size=40), st.lists(_PIECES, max_size=8).map("".join))
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 20),
    st.text(max_size=10),
    _PATTERNS,
    st.lists(st.text(max_size=10), max_size=3),
)
_KEYS = st.sampled_from(
    [
        "pattern",
        "kind",
        "regex",
        "fixed",
        "lang",
        "context_lines",
        "command",
        "args",
        "glob",
        "paths",
        "path",
        "flags",
        "weight",
    ]
)
_QUERY = st.one_of(
    st.dictionaries(_KEYS, _VALUES, max_size=5).map(lambda d: d | {"pattern": d.get("pattern")}),
    st.builds(lambda p, r: {"pattern": p, "regex": r}, _PATTERNS, st.booleans()),
    _VALUES,
)
_PLAN = st.one_of(
    st.lists(_QUERY, max_size=6),
    st.builds(lambda q, s: {"queries": q, "synonyms": s}, st.lists(_QUERY, max_size=6), _VALUES),
    _VALUES,
)
_ALLOWED_FLAGS = {
    "--json",
    "--no-heading",
    "--with-filename",
    "--line-number",
    "--null",
    "--color",
    "never",
    "--no-config",
    "--binary",
    "--max-count",
    "--max-filesize",
    "--no-ignore-messages",
    "--no-unicode",
    "--case-sensitive",
    "--type",
    "-e",
    "--",
}


@case(
    AREA,
    "generated model plans: any JSON shape, patterns with flags, NUL, newlines, look-around",
    "QueryRejected or safe queries only; rg's argv takes no flag from them",
)
@CHECKS
@given(_PLAN)
def test_the_validator_only_lets_safe_queries_through(raw):
    try:
        queries, synonyms, _ = validate_plan(raw, default_lang="python", max_queries=10)
    except QueryRejected:
        return
    assert 1 <= len(queries) <= 10
    for query in queries:
        assert isinstance(query.pattern, str) and query.pattern.strip()
        assert not query.pattern.startswith("-")
        assert not any(c in query.pattern for c in "\x00\n\r")
        assert 0 <= query.context_lines <= 10 and query.paths == ()
    patterns = tuple(q.pattern for q in queries)
    for json_output in (False, True):
        argv = build_argv(Path("/rg"), SearchSpec(patterns=patterns), json_output=json_output)
        given_flags = [a for i, a in enumerate(argv[1:], 1) if argv[i - 1] != "-e"]
        assert set(given_flags) <= _ALLOWED_FLAGS | {"50", "1M", "."}
        assert [argv[i + 1] for i, a in enumerate(argv) if a == "-e"] == list(patterns)
    assert all(isinstance(v, list) for v in synonyms.values())


# -- dedup and packing ------------------------------------------------------------------

REPO = FIXTURES / "py_pipeline"
FILES = sorted(p.relative_to(REPO).as_posix() for p in REPO.rglob("*.py") if p.stat().st_size)
_LINES = {path: (REPO / path).read_text().split("\n") for path in FILES}


@st.composite
def _candidates(draw) -> list[Candidate]:
    found = []
    for _ in range(draw(st.integers(1, 25))):
        path = draw(st.sampled_from(FILES))
        size = len(_LINES[path]) - 1
        start = draw(st.integers(1, max(1, size)))
        end = draw(st.integers(start, min(size, start + 12) or start))
        hit = draw(st.integers(start, end))
        score = draw(st.floats(0, 2, allow_nan=False))
        purpose = draw(st.integers(0, 1))
        found.append(
            Candidate(path, start, end, "", score=score, match_lines=(hit,), queries=(purpose,))
        )
    return sorted(found, key=lambda c: -c.score)


_PLAN_TWO = QueryPlan(
    [Query("x", purpose="definition"), Query("y", purpose="usage")], router="offline"
)


@case(
    AREA,
    "generated hits (1-25 ranges over the real fixture files), budgets 40-3000, dedup on/off",
    "blocks never overlap; tokens within budget; each block whole (the file's lines) or an "
    "outline, never blank",
)
@CHECKS
@given(
    _candidates(),
    st.integers(40, 3000),
    st.booleans(),
    st.sampled_from(["no", "above", "below"]),
    st.sampled_from(FILES),
)
def test_packing_keeps_its_promises(candidates, budget, dedup, mode, current):
    files = FileCache(Path(os.path.realpath(REPO)))
    s = Settings(budget=budget, dedup=dedup, include_current_file=mode)
    cursor = max(2, len(_LINES[current]) // 2)
    at = LocalContext("", "", "", path=current, lang=language_for_path(current).name, line=cursor)
    shown = cursor_file(at, files.get, mode)
    packed = assemble(
        candidates,
        plan=_PLAN_TWO,
        settings=s,
        lines_of=files.get,
        expand=BlockWidener(files.get, shown),
        current=shown,
    ).packed
    assert packed.tokens <= budget and packed.tokens == count_tokens(packed.context)
    by_file: dict[str, list] = {}
    for block in packed.blocks:
        lines = _LINES[block.path]
        assert 1 <= block.start_line <= block.end_line <= len(lines)
        if block.path == current:
            assert shown.run_of(block.start_line) == shown.run_of(block.end_line) is not None
            assert mode == "below" or block.end_line < cursor
        assert block.text.strip(), block
        if not block.outline:
            assert block.text == "\n".join(lines[block.start_line - 1 : block.end_line])
        by_file.setdefault(block.path, []).append(block)
    if dedup:
        for blocks in by_file.values():
            blocks.sort(key=lambda b: b.start_line)
            for left, right in itertools.pairwise(blocks):
                assert left.end_line < right.start_line, (left, right)


# -- path containment -------------------------------------------------------------------

SECRET = b"SECRET-OUTSIDE-THE-ROOT"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A root with files, links inside, links out (file and folder), and a secret outside."""
    base = tmp_path_factory.mktemp("contain")
    (base / "secret.txt").write_bytes(SECRET)
    root = base / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "file.py").write_bytes(b"inside")
    (root / "a" / "b" / "deep.py").write_bytes(b"deeper")
    (root / "a" / "link_in.py").symlink_to(root / "a" / "file.py")
    (root / "a" / "link_out.py").symlink_to(base / "secret.txt")
    (root / "dir_out").symlink_to(base)
    (root / "a" / "up").symlink_to(root / "a" / "..")
    return Path(os.path.realpath(root))


_SEGMENTS = st.sampled_from(
    [
        "a",
        "b",
        "..",
        ".",
        "",
        "file.py",
        "deep.py",
        "link_in.py",
        "link_out.py",
        "dir_out",
        "up",
        "secret.txt",
        "root",
        "/",
        "\\",
        "\x00",
        "~",
        "a\nb",
    ]
)


@case(
    AREA,
    "generated paths from segments (.., /, \\, NUL, links in and out) against a real tree",
    "never the outside secret; every resolved path inside the root",
)
@CHECKS
@given(st.lists(_SEGMENTS, min_size=1, max_size=6), st.sampled_from(["/", "\\", ""]))
def test_no_path_leaves_the_root(tree, parts, sep):
    path = sep.join(parts) if sep else "/".join(parts)
    data = read_bytes(tree, path)
    assert data != SECRET
    real = inside(tree, path)
    if real is not None:
        assert str(real) == str(tree) or str(real).startswith(str(tree) + os.sep)
    clean = safe_relative(path)
    if clean is not None:
        assert safe_relative(clean) == clean and not clean.startswith("/")


_TEXT_PIECES = st.sampled_from(
    [
        "def",
        " load",
        "x",
        "42",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\r\n",
        "  \n",
        "/",
        "//",
        "#",
        "):",
        "'s",
        "é",
        "\u00a0",
        "\u2028",
        "\x1c",
        "{",
        "}",
        '"""',
        "<|endoftext|>",
    ]
)


@case(
    AREA,
    "generated texts: code words, blank and space-only lines, CRLF, //, Unicode spaces",
    "a count summed line by line equals tiktoken's count of the whole text (both encodings "
    "counted that way); a count up to a limit is exact within it and above it past it",
)
@CHECKS
@given(st.lists(_TEXT_PIECES, max_size=60).map("".join), st.integers(0, 40))
@example("a):\n/b", 2)  # o200k: ")" takes the newline and the "/" after it
@example("x;\n// c", 2)
def test_token_counts_summed_by_line_are_exact(text, limit):
    for name in ("cl100k_base", "o200k_base"):
        exact = len(get_encoding(name).encode_ordinary(text))
        assert count_tokens(text, name) == exact
        upto = count_tokens_upto(text, limit, name)
        assert upto == exact if exact <= limit else upto > limit
