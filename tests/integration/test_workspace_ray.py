"""Workspaces on a real local Ray (2 CPUs): shards on actors rank exactly as one process,
and an actor that dies or stalls mid-query gives a partial answer naming what is missing.

One Ray session serves the module (starting one takes seconds); skipped, with the reason,
where the ``ray`` extra is not installed.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import FIXTURES, ROOT, _git_copy

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install ray)")

from greprag.pipeline import Retriever  # noqa: E402
from greprag.workspace import (  # noqa: E402
    LocalBackend,
    RayOptions,
    Workspace,
    WorkspaceSpec,
    open_workspace,
)
from greprag.workspace.on_ray import RayBackend  # noqa: E402
from greprag.workspace.spec import RepoSpec  # noqa: E402
from tests.integration.test_workspace import LEFT_CONTEXT  # noqa: E402
from tests.stubs.shards import VICTIM, DyingShard, SlowShard  # noqa: E402

BUDGET = 1200


@pytest.fixture(scope="module")
def local_ray():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},  # workers import tests.stubs
    )
    yield ray
    ray.shutdown()


def _spec(tmp_path) -> WorkspaceSpec:
    """Four repos (two shards of two): the fixtures, a second copy of each, weights varied."""
    made = [
        ("py", "py_pipeline", 1.0),
        ("java", "java_orders", 1.0),
        (VICTIM, "py_pipeline", 0.8),
        ("java-copy", "java_orders", 1.3),
    ]
    repos = []
    for name, fixture, weight in made:
        path = _git_copy(FIXTURES / fixture, tmp_path / name / fixture)
        repos.append(RepoSpec(path.resolve(), name, weight))
    return WorkspaceSpec(tuple(repos))


def _ranking(result) -> list[tuple]:
    return [(b.repo, b.path, b.start_line, b.end_line, b.score, b.text) for b in result.blocks]


def _on_ray(spec, shard_class=None, timeout_s=30.0) -> Workspace:
    options = RayOptions(shards=2, timeout_s=timeout_s, max_restarts=2, cpus_per_shard=0.5)
    extra = {"shard_class": shard_class} if shard_class else {}
    return Workspace(spec, RayBackend(spec, options, {}, load_dense=False, **extra))


def test_ray_shards_rank_exactly_as_one_process(local_ray, tmp_path):
    spec = _spec(tmp_path)
    local = Workspace(spec, LocalBackend(spec, {}, load_dense=False)).retrieve(
        LEFT_CONTEXT, budget=BUDGET
    )
    with _on_ray(spec) as workspace:
        assert len(set(workspace.backend.pids)) == 2  # two actor processes
        distributed = workspace.retrieve(LEFT_CONTEXT, budget=BUDGET)

    assert len(local.blocks) >= 3
    assert {b.repo for b in local.blocks} >= {"py", "java-copy"}
    assert _ranking(distributed) == _ranking(local)
    assert distributed.context == local.context and distributed.tokens == local.tokens
    assert distributed.missing == [] and local.missing == []


def test_the_ray_flag_opens_the_workspace_on_the_running_ray(local_ray, tmp_path):
    spec = _spec(tmp_path)
    with open_workspace(spec, ray=True, load_dense=False) as workspace:
        assert isinstance(workspace.backend, RayBackend)
        assert len(workspace.backend.shards) == 2  # the default: two shards
        assert workspace.retrieve(LEFT_CONTEXT, budget=BUDGET).blocks
    assert ray.is_initialized()  # it was not this workspace's to stop


def test_an_actor_dying_mid_query_gives_a_labelled_partial_answer(local_ray, tmp_path):
    spec = _spec(tmp_path)
    with _on_ray(spec, DyingShard) as workspace:
        victim_shard = next(
            i for i, s in enumerate(workspace.backend.shards) if any(r.name == VICTIM for _, r in s)
        )
        lost = sorted(r.name for _, r in workspace.backend.shards[victim_shard])
        started = time.monotonic()
        partial = workspace.retrieve(LEFT_CONTEXT, budget=BUDGET)
        assert time.monotonic() - started < 30  # an answer, not a hang

        assert sorted(partial.missing) == lost
        assert {b.repo for b in partial.blocks}.isdisjoint(lost)
        assert partial.blocks  # the live shard's repos still answer
        note = partial.fallbacks[0]
        assert note.startswith("partial answer: 2 repo(s) missing") and "actor died" in note
        assert all(name in note for name in lost)

        before = list(workspace.backend.pids)
        after = workspace.backend.wait_ready(60)
        whole = workspace.retrieve(LEFT_CONTEXT, budget=BUDGET)
    # the dead actor was restarted (a new process), and the next query is whole again
    assert after[victim_shard] != before[victim_shard]
    assert after[1 - victim_shard] == before[1 - victim_shard]
    assert whole.missing == []
    assert {b.repo for b in whole.blocks} & set(lost)


def test_a_stalled_actor_is_reported_after_the_timeout(local_ray, tmp_path):
    spec = _spec(tmp_path)
    with _on_ray(spec, SlowShard, timeout_s=2.0) as workspace:
        started = time.monotonic()
        partial = workspace.retrieve(LEFT_CONTEXT, budget=BUDGET)
        waited = time.monotonic() - started
    assert 2.0 <= waited < 20
    assert VICTIM in partial.missing and len(partial.missing) == 2
    assert partial.blocks and "did not answer within" in partial.fallbacks[0]


@pytest.mark.dense
def test_bulk_indexing_runs_as_ray_tasks_and_builds_usable_indexes(local_ray, tmp_path):
    from greprag.routes.dense import dense_available
    from greprag.workspace.on_ray import bulk_index

    if not dense_available():
        pytest.skip("dense extra not installed")
    spec = _spec(tmp_path)
    cache = tmp_path / "cache"
    options = RayOptions(shards=2, cpus_per_shard=0.5)
    reports = bulk_index(spec, options, {"cache_dir": str(cache)})

    assert [r.repo for r in reports] == [r.path for r in spec.repos]  # workspace order
    assert all(r.files > 0 and r.chunks > 0 for r in reports)
    # what the tasks wrote is the index a Retriever uses: the dense route answers from it
    repo = spec.repos[0].path
    dense = Retriever(repo, routes="dense", cache_dir=str(cache)).retrieve(
        left_context=LEFT_CONTEXT, budget=BUDGET
    )
    assert dense.blocks and all(b.route == "dense" for b in dense.blocks)
    again = bulk_index(spec, options, {"cache_dir": str(cache)})
    assert all(r.embedded == 0 for r in again)  # incremental: nothing changed, nothing embedded


def test_a_workspace_search_ranks_on_ray_as_in_one_process(local_ray, tmp_path):
    pytest.importorskip("markdown_it", reason="the docs extra is not installed")
    manual = _git_copy(FIXTURES / "docs_manual", tmp_path / "manual" / "docs_manual")
    spec = _spec(tmp_path)
    spec = WorkspaceSpec((*spec.repos, RepoSpec(manual.resolve(), "manual", 1.0, "docs")))
    question = "how do I retry a request after a timeout"
    local = Workspace(spec, LocalBackend(spec, {}, load_dense=False)).search(question)
    with _on_ray(spec) as workspace:
        distributed = workspace.search(question)
    assert local.blocks and local.blocks[0].repo == "manual"
    assert _ranking(distributed) == _ranking(local)
