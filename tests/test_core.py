"""Unit tests of the grep route's pure parts: config, rg argv, tokenizer, merge, router."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from dataclasses import asdict
from pathlib import Path

import pytest

from greprag.config import ConfigError, Settings, load_settings, packaged_config
from greprag.context import build_local_context
from greprag.fusion.bm25 import code_tokens, rerank
from greprag.fusion.dedup import merge_ranges, take_pool
from greprag.models import Candidate
from greprag.rg import SearchSpec, build_argv, escape_regex, find_rg, parse_size
from greprag.router import OfflineRouter

ROOT = Path(__file__).resolve().parents[1]


def test_default_toml_matches_the_settings_dataclass():
    documented = tomllib.loads((ROOT / "configs" / "default.toml").read_text())
    assert documented == {k: v for k, v in asdict(Settings()).items() if k != "notes"}
    assert packaged_config("default") == documented  # the copy the wheel ships


def test_repo_config_is_read_and_arguments_win(tmp_path):
    (tmp_path / ".greprag.toml").write_text('budget = 1000\nrerank = "jaccard"\n')
    settings = load_settings(tmp_path, budget=2000)
    assert settings.budget == 2000 and settings.rerank == "jaccard"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"rerank": "cosine"}, "rerank must be one of"),
        ({"budgett": 1}, "unknown setting"),
        ({"budget": "lots"}, "expects int"),
        ({"dedup_pool": 0}, "dedup_pool"),
    ],
)
def test_bad_settings_are_refused_with_a_clear_message(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(None, **overrides)


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


def test_code_tokens_split_identifiers_and_keep_them_whole():
    tokens = code_tokens("self.loader.load_batch(getUserById)")
    assert {"load_batch", "load", "batch", "getuserbyid", "get", "user", "by", "id"} <= set(tokens)
    assert "self" not in tokens


def test_bm25_prefers_the_rare_identifier_over_the_generic_one():
    docs = [
        Candidate("a.py", 1, 3, "def run(config):\n    return config.run()"),
        Candidate("b.py", 1, 3, "def load_batch(self, batch_id):\n    return rows"),
        Candidate("c.py", 1, 3, "config = run(config)"),
    ]
    ranked = rerank(docs, "data = self.loader.load_batch(batch_id) ; config.run()", "bm25")
    assert ranked[0].path == "b.py"


def test_overlapping_and_adjacent_ranges_merge_and_keep_the_best_score():
    cands = [
        Candidate("a.py", 10, 14, "", score=0.5, match_lines=(12,)),
        Candidate("a.py", 13, 18, "", score=0.9, match_lines=(15,)),
        Candidate("a.py", 19, 20, "", score=0.1, match_lines=(19,)),
        Candidate("a.py", 40, 44, "", score=0.7, match_lines=(42,)),
        Candidate("b.py", 10, 14, "", score=0.8, match_lines=(12,)),
    ]
    merged = merge_ranges(cands, gap=0)
    spans = [(m.path, m.start_line, m.end_line, m.score) for m in merged]
    assert spans == [("a.py", 10, 20, 0.9), ("b.py", 10, 14, 0.8), ("a.py", 40, 44, 0.7)]
    assert merged[0].match_lines == {12, 15, 19}


def test_the_pool_is_the_top_half_with_a_floor():
    ranked = [Candidate("a.py", i, i, "") for i in range(1, 41)]
    assert len(take_pool(ranked, 0.5)) == 20 and len(take_pool(ranked[:6], 0.5)) == 6


def _plan(src: str, lang: str, imported: dict[str, str] | None = None):
    ctx = build_local_context(src, lang=lang)
    return ctx, OfflineRouter().plan(ctx, imported or {})


def test_router_targets_the_receiver_type_first():
    src = (
        "from data.loader import DataLoader\n\nclass P:\n"
        "    def __init__(self, config):\n        self.loader = DataLoader(config.path)\n\n"
        "    def go(self, i):\n        data = self.loader."
    )
    _, plan = _plan(src, "python", {"DataLoader": "data/loader.py"})
    first = plan.queries[0]
    assert first.identifier == "DataLoader" and first.kind == "class"
    assert len(plan.queries) <= 10
    assert any(q.purpose == "usage" and q.identifier == "loader" for q in plan.queries)


def test_router_for_an_empty_body_asks_for_bases_and_siblings():
    src = (
        "from transforms.base import BaseTransform\n\n"
        "class NormalizeTransform(BaseTransform):\n    def transform(self, data):\n        "
    )
    ctx, plan = _plan(src, "python", {"BaseTransform": "transforms/base.py"})
    assert ctx.empty_body
    ids = {(q.identifier, q.purpose) for q in plan.queries}
    assert ("BaseTransform", "definition") in ids and ("transform", "definition") in ids
    assert any(q.purpose == "wildcard" and q.identifier == "BaseTransform" for q in plan.queries)


def test_router_uses_the_declared_java_type():
    src = (
        "import com.shop.orders.OrderStatus;\n"
        "public class OrderHandler implements RequestHandler<OrderRequest> {\n"
        "    public Response handle(OrderRequest request) {\n        OrderStatus status = "
    )
    _, plan = _plan(src, "java", {"OrderStatus": "orders/OrderStatus.java"})
    assert plan.queries[0].identifier == "OrderStatus"
    assert any(q.identifier == "RequestHandler" for q in plan.queries)


def test_router_does_not_probe_generic_names_on_their_own():
    src = "def main(config):\n    init()\n    config.run()\n    x = run(config)\n    "
    _, plan = _plan(src, "python")
    assert not any(q.identifier in ("init", "config", "run") for q in plan.queries)


def test_bm25_scores_match_rank_bm25():
    from rank_bm25 import BM25Okapi

    from greprag.fusion.bm25 import bm25_scores

    docs = [
        code_tokens(t)
        for t in (
            "class DataLoader:\n    def load_batch(self, index): return self.rows[index]",
            "def run(config):\n    return config.run()",
            "loader = DataLoader(path)\nrows = loader.load_batch(0)",
            "config = load_config()\nrun(config)",
            "def transform(self, data): return [scale(r) for r in data]",
        )
    ]
    query = code_tokens("data = self.loader.load_batch(index) # config run run")
    expected = BM25Okapi(docs).get_scores(query)
    assert bm25_scores(docs, query) == pytest.approx(list(expected), rel=1e-9, abs=1e-12)


def test_router_probes_members_of_an_imported_module_in_its_file_only():
    src = (
        "from . import errors\n\ndef check(v):\n    if v is None:\n"
        "        raise errors.NoneError()\n    raise errors."
    )
    ctx = build_local_context(src, lang="python", path="pkg/validators.py")
    plan = OfflineRouter().plan(ctx, {"errors": "pkg/errors.py"})
    module_probes = [q for q in plan.queries if q.paths == ("pkg/errors.py",)]
    assert module_probes and module_probes[0].weight == 1.0  # every top-level name, 'errors.'
    ctx = build_local_context(src.rsplit("\n", 1)[0] + "\n    ", lang="python", path="pkg/v.py")
    plan = OfflineRouter().plan(ctx, {"errors": "pkg/errors.py"})
    assert any("NoneError" in q.pattern and q.paths == ("pkg/errors.py",) for q in plan.queries)


def test_widening_covers_every_statement_between_the_first_and_last_hit():
    from greprag.syntax.scan import LocalExpander

    lines = [
        "import x",
        "",
        "A = int",
        "B = str",
        "C = list[",
        "    int,",
        "]",
        "",
        "def f():",
        "    return 1",
    ]
    assert LocalExpander().expand("t.py", lines, "python", 3, 6) == (3, 7)
    assert LocalExpander().expand("t.py", lines, "python", 10, 10) == (9, 10)


def test_an_oversize_file_stays_skipped_once_the_file_list_is_cached(tmp_path):
    from greprag import Retriever

    (tmp_path / "big.py").write_text("def DataLoaderX():\n    pass\n" + "x = 1\n" * 300_000)
    (tmp_path / "small.py").write_text("from big import DataLoaderX\n\nvalue = DataLoaderX()\n")
    (tmp_path / "user.py").write_text("def g():\n    DataLoaderX()\n")
    retriever = Retriever(tmp_path, routes="grep")
    for _ in range(2):  # the second search passes rg the cached file list
        res = retriever.retrieve(file="user.py", line=2)
        assert [s.path for s in res.skipped] == ["big.py"]
        assert "too large" in res.skipped[0].reason
        assert {b.path for b in res.blocks} == {"small.py"}


def test_second_hop_types_a_receiver_from_its_assignment_elsewhere(tmp_path):
    from greprag import Retriever

    (tmp_path / "storage.py").write_text(
        "class BlobStore:\n    def put_blob(self, key, data):\n        return key\n"
    )
    (tmp_path / "base.py").write_text(
        "from storage import BlobStore\n\nclass Base:\n    def __init__(self):\n"
        "        self.store = BlobStore()\n"
    )
    (tmp_path / "job.py").write_text(
        "from base import Base\n\nclass Job(Base):\n    def run(self, key):\n        self.store.\n"
    )
    res = Retriever(tmp_path, routes="grep").retrieve(file="job.py", line=5, column=19)
    assert any(q.purpose == "second hop" and q.identifier == "BlobStore" for q in res.queries)
    assert any(b.path == "storage.py" and "def put_blob" in b.text for b in res.blocks)
