"""rg's per-file errors become skips with reasons in one place; the search goes on."""

from __future__ import annotations

import json
import os
import random
import threading
from pathlib import Path

from greprag import Retriever
from tests.reliability.cases import case, cases
from tests.reliability.conftest import (
    CURSOR,
    Proposed,
    cli,
    make_repo,
    without_file_permissions,
)

AREA = "rg per-file errors"


def _skips(payload: dict) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in payload["skipped"]}


@cases(
    AREA,
    [
        (
            "file",
            "a file rg cannot read (mode 000) that matches",
            "exit 0, the other blocks, skip 'unreadable (permission denied)'",
            "pkg/secret.py",
        ),
        (
            "folder",
            "a folder rg cannot read (mode 000)",
            "exit 0, the other blocks, skip 'unreadable (permission denied)'",
            "locked",
        ),
    ],
    "blocked",
)
def test_an_unreadable_file_or_folder_is_a_skip(loader_repo, blocked):
    drop = without_file_permissions()
    target = loader_repo / blocked
    if blocked == "locked":
        (target / "inner.py").parent.mkdir()
        (target / "inner.py").write_text("class DataLoader:\n    pass\n")
    else:
        target.write_text("class DataLoader:\n    pass\n")
    target.chmod(0)
    try:
        proc = cli("retrieve", "--repo", str(loader_repo), *CURSOR, "--json", preexec=drop)
    finally:
        target.chmod(0o755)
    payload = json.loads(proc.stdout)
    assert proc.returncode == 0
    assert any(b["path"] == "pkg/loader.py" for b in payload["blocks"])
    assert _skips(payload)[blocked] == "unreadable (permission denied)"


@case(
    AREA,
    "a file deleted between the file listing and the search (warm Retriever)",
    "result; skip 'vanished before it was searched'",
)
def test_a_file_deleted_after_listing_is_a_skip(loader_repo):
    retriever = Retriever(loader_repo, file_list_ttl=600)
    first = retriever.retrieve(file="app.py", line=4)
    assert any(b.path == "pkg/other.py" for b in first.blocks)
    (loader_repo / "pkg" / "other.py").unlink()
    res = retriever.retrieve(file="app.py", line=4)
    assert any(b.path == "pkg/loader.py" for b in res.blocks)
    assert {s.path: s.reason for s in res.skipped}["pkg/other.py"].startswith("vanished")


@cases(
    AREA,
    [
        (
            "newline",
            "a file name with a newline that matches",
            "result; skip 'file name contains control characters'",
            b"pkg/we\nird.py",
            "control characters",
        ),
        (
            "latin1",
            "a file name that is not UTF-8 (Latin-1 bytes) that matches",
            "result; skip 'file name is not UTF-8'",
            b"pkg/caf\xe9.py",
            "not UTF-8",
        ),
    ],
    "name, reason",
)
def test_an_odd_file_name_is_a_skip_walked_or_listed(loader_repo, name, reason):
    path = os.path.join(os.fsencode(loader_repo), name)
    with open(path, "wb") as handle:
        handle.write(b"class DataLoader:\n    pass\n")
    retriever = Retriever(loader_repo, file_list_ttl=600)
    walked = retriever.retrieve(file="app.py", line=4)  # rg walks the tree
    listed = retriever.retrieve(file="app.py", line=4)  # rg gets the listed files
    for res in (walked, listed):
        assert any(b.path == "pkg/loader.py" for b in res.blocks)
        assert all("\n" not in b.path and "\ufffd" not in b.path for b in res.blocks)
    assert any(reason in s.reason for s in walked.skipped), walked.skipped


@cases(
    AREA,
    [
        (
            "end-anchor",
            r"a proposed regex Python accepts and rg rejects: DataLoader\Z",
            "result from the other queries; note 'rejected by rg: unrecognized escape'",
            r"class DataLoader\Z",
            "unrecognized escape",
        ),
        (
            "open-repeat",
            "a proposed regex Python accepts and rg rejects: a{,5}",
            "result from the other queries; note 'rejected by rg: repetition quantifier'",
            "a{,5}",
            "repetition quantifier",
        ),
    ],
    "bad, reason",
)
def test_a_regex_rg_rejects_drops_only_that_query(loader_repo, bad, reason):
    router = Proposed(bad, r"^class\s+DataLoader\b")
    # the plan's queries alone: the similar route, which no plan steers, stays off
    res = Retriever(loader_repo, router=router, similar=False).retrieve(file="app.py", line=4)
    assert [b.path for b in res.blocks] == ["pkg/loader.py"]
    assert any("rejected by rg" in n and reason in n for n in res.fallbacks), res.fallbacks


@case(
    AREA,
    "every proposed regex rejected by rg",
    "empty result, exit 0, one note per rejected query",
)
def test_every_regex_rejected_is_an_empty_result(loader_repo):
    router = Proposed(r"x\Z", "y{,2}")
    res = Retriever(loader_repo, router=router, similar=False).retrieve(file="app.py", line=4)
    assert res.blocks == [] and res.context == ""
    assert sum("rejected by rg" in n for n in res.fallbacks) == 2


@case(
    AREA,
    "files created and deleted while 60 retrievals run (cold and warm file lists)",
    "every retrieval answers, with the stable file; churned files only as skips",
)
def test_file_churn_never_fails_a_retrieval(loader_repo):
    stop = threading.Event()
    churn = loader_repo / "pkg" / "churn"
    churn.mkdir()

    def churner() -> None:
        rng = random.Random(0)
        while not stop.is_set():
            path = churn / f"c{rng.randrange(40)}.py"
            try:
                if path.exists():
                    path.unlink()
                else:
                    path.write_text("class DataLoader:\n    pass\n")
            except OSError:
                continue

    thread = threading.Thread(target=churner, daemon=True)
    thread.start()
    warm = Retriever(loader_repo, file_list_ttl=600)
    try:
        for i in range(60):
            retriever = warm if i % 2 else Retriever(loader_repo)
            res = retriever.retrieve(file="app.py", line=4)
            assert any(b.path == "pkg/loader.py" for b in res.blocks)
            assert all(
                s.path.startswith("pkg/churn/") for s in res.skipped if "vanished" in s.reason
            )
    finally:
        stop.set()
        thread.join()


@case(
    AREA,
    "a FIFO named like source (pkg/pipe.py) in the repo",
    "result within the bound; the FIFO is never opened for reading",
)
def test_a_fifo_never_blocks(loader_repo):
    os.mkfifo(loader_repo / "pkg" / "pipe.py")
    retriever = Retriever(loader_repo, file_list_ttl=600)
    for _ in range(2):
        res = retriever.retrieve(file="app.py", line=4)
        assert any(b.path == "pkg/loader.py" for b in res.blocks)


@case(
    AREA,
    "a symlink loop and a dangling symlink in the repo",
    "result; neither is followed",
)
def test_symlink_loops_and_dangling_links_are_harmless(loader_repo):
    (loader_repo / "pkg" / "loop").symlink_to(loader_repo / "pkg")
    (loader_repo / "pkg" / "gone.py").symlink_to(loader_repo / "nowhere.py")
    proc = cli("retrieve", "--repo", str(loader_repo), *CURSOR, "--json")
    payload = json.loads(proc.stdout)
    assert [b["path"] for b in payload["blocks"]][:1] == ["pkg/loader.py"]
    assert not any(b["path"].startswith("pkg/loop/") for b in payload["blocks"])


@case(
    AREA,
    "a repository with no searchable file at all (only a binary blob)",
    "empty result, exit 0",
)
def test_a_repo_of_binaries_is_an_empty_result(tmp_path: Path):
    repo = make_repo(tmp_path / "bin", {"blob.bin": b"\x00\x01" * 100, "app.py": "x = Data"})
    proc = cli("retrieve", "--repo", str(repo), "--file", "app.py", "--line", "1", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["blocks"] == []
