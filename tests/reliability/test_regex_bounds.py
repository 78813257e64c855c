"""Bounded CPU: backtracking regexes run under a time budget; long lines are read in part."""

from __future__ import annotations

import json
import time

from greprag import Retriever
from tests.reliability.cases import case, cases
from tests.reliability.conftest import Proposed, cli, make_repo

AREA = "regex and CPU bounds"
BOUND_S = 20.0  # far above what these take (milliseconds to a second), far below a hang


@cases(
    AREA,
    [
        (
            "nested-plus",
            "a proposed regex (x+x+)+y on a matched line of 300 x (exponential in Python's re)",
            "answer within the bound; the other query's block",
            "(x+x+)+y",
        ),
        (
            "alternation",
            "a proposed regex (x|xx)+$ on a matched line of x then z (exponential backtracking)",
            "answer within the bound; note 'regex over its time budget'",
            "(x|xx)+$",
        ),
        (
            "nested-star",
            "a proposed regex ((x*)*)*z on a matched line of 300 x",
            "answer within the bound; the other query's block",
            "((x*)*)*z",
        ),
    ],
    "pattern",
)
def test_a_backtracking_regex_cannot_hang_a_retrieval(tmp_path, pattern):
    # rg reports the bait line (the DataLoader query matches it); attributing it to the
    # backtracking query is where Python would spin
    bait = "class DataLoader:  # " + "x" * 300 + "z"
    repo = make_repo(
        tmp_path / "repo",
        {"pkg/loader.py": bait + "\n    pass\n", "app.py": "loader = DataLoader()\n"},
    )
    router = Proposed(pattern, r"^class\s+DataLoader\b")
    started = time.perf_counter()
    res = Retriever(repo, router=router, max_line_chars=400).retrieve(file="app.py", line=1)
    assert time.perf_counter() - started < BOUND_S
    assert any(b.path == "pkg/loader.py" for b in res.blocks)
    if pattern == "(x|xx)+$":
        assert any("time budget" in note for note in res.fallbacks), res.fallbacks


@cases(
    AREA,
    [
        (
            "80k-cursor-line",
            "an 80 KB cursor line of chained calls (69 s before)",
            "answer within the bound, exit 0",
            80_000,
        ),
        (
            "5mb-cursor-line",
            "a 5 MB minified cursor line (never finished before)",
            "answer within the bound, exit 0",
            5_000_000,
        ),
    ],
    "size",
)
def test_a_very_long_cursor_line_is_read_in_bounded_time(tmp_path, size):
    chain = ".".join(f"a{i}(b{i})" for i in range(size // 10 + 1))[:size]
    repo = make_repo(
        tmp_path / "repo",
        {"pkg/loader.py": "class DataLoader:\n    pass\n", "min.js": f"var x = {chain}.DataLo"},
    )
    started = time.perf_counter()
    proc = cli("retrieve", "--repo", str(repo), "--file", "min.js", "--line", "1", "--json")
    assert time.perf_counter() - started < BOUND_S
    assert proc.returncode == 0 and json.loads(proc.stdout)["router"] == "offline"


@case(
    AREA,
    "a 50 MB minified line as the left context on stdin",
    "answer within the bound, exit 0",
)
def test_fifty_megabytes_on_stdin_are_read_in_bounded_time(loader_repo):
    text = ("v=f(a,b);" * (50_000_000 // 9)).encode() + b"\nloader = DataLoader()\nloader."
    started = time.perf_counter()
    proc = cli(
        "retrieve", "--repo", str(loader_repo), "--stdin", "--language", "python", stdin=text
    )
    assert time.perf_counter() - started < 3 * BOUND_S
    assert proc.returncode == 0 and "pkg/loader.py" in proc.stdout


@case(
    AREA,
    "a 200,000-line cursor file, cursor at the end",
    "answer within the bound, exit 0",
)
def test_a_huge_cursor_file_is_read_in_bounded_time(loader_repo):
    body = "".join(f"value_{i} = compute({i})\n" for i in range(200_000))
    (loader_repo / "big.py").write_text(body + "loader = DataLoader()\nloader.")
    started = time.perf_counter()
    proc = cli("retrieve", "--repo", str(loader_repo), "--file", "big.py", "--line", "200002")
    assert time.perf_counter() - started < BOUND_S
    assert proc.returncode == 0 and "class DataLoader" in proc.stdout


@case(
    AREA,
    "a 4 MB repo file whose lines are all over max_line_chars (minified bundle)",
    "result; skip 'too large' or 'minified line', never its text",
)
def test_minified_and_oversize_files_are_skips(loader_repo):
    line = ";".join(f"v{i}=DataLoader({i})" for i in range(250_000))
    (loader_repo / "bundle.py").write_text(line + "\n")
    (loader_repo / "small_min.py").write_text(line[:5000] + "\n")
    res = Retriever(loader_repo).retrieve(file="app.py", line=4)
    reasons = {s.path: s.reason for s in res.skipped}
    assert reasons["bundle.py"].startswith("too large")
    assert reasons["small_min.py"].startswith("minified line")
    assert all(b.path not in ("bundle.py", "small_min.py") for b in res.blocks)


@case(
    AREA,
    "a proposed pattern of 200 alternated identifiers (one rg pass, many attributions)",
    "answer within the bound; its hits attributed",
)
def test_a_wide_alternation_is_attributed_quickly(loader_repo):
    names = "|".join(f"Name{i}" for i in range(200))
    router = Proposed(rf"\b({names}|DataLoader)\b")
    started = time.perf_counter()
    res = Retriever(loader_repo, router=router).retrieve(file="app.py", line=4)
    assert time.perf_counter() - started < BOUND_S
    assert any(b.path == "pkg/loader.py" for b in res.blocks)
