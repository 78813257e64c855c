"""The workspace file: what it accepts, its defaults, and one line for every mistake."""

from __future__ import annotations

import pytest

from greprag.errors import ConfigError, WorkspaceError
from greprag.workspace import RayOptions, WorkspaceSpec, load_workspace


@pytest.fixture
def folders(tmp_path):
    for name in ("alpha", "beta", "manual"):
        (tmp_path / "repos" / name).mkdir(parents=True)
    return tmp_path


def _write(folder, text: str):
    path = folder / "team.toml"
    path.write_text(text)
    return path


def test_a_workspace_file_resolves_paths_from_its_folder_with_defaults(folders):
    spec = load_workspace(
        _write(
            folders,
            '[[repos]]\npath = "repos/alpha"\n\n'
            '[[repos]]\npath = "repos/manual"\nname = "handbook"\nweight = 0.5\nkind = "docs"\n',
        )
    )
    first, second = spec.repos
    assert first.path == (folders / "repos" / "alpha").resolve()
    assert (first.name, first.weight, first.kind) == ("alpha", 1.0, "code")
    assert (second.name, second.weight, second.kind) == ("handbook", 0.5, "docs")
    assert spec.ray is None


def test_the_ray_table_sets_the_backend_options(folders):
    spec = load_workspace(
        _write(
            folders,
            '[[repos]]\npath = "repos/alpha"\n\n'
            '[ray]\naddress = "10.0.0.5:6379"\nshards = 8\ntimeout_s = 5\nmax_restarts = 0\n',
        )
    )
    assert spec.ray == RayOptions("10.0.0.5:6379", 8, 5.0, 0, 1.0)


def test_of_paths_names_repos_after_their_folders(folders):
    spec = WorkspaceSpec.of_paths([folders / "repos" / "alpha", folders / "repos" / "beta"])
    assert [r.name for r in spec.repos] == ["alpha", "beta"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "list at least one repository"),
        ('repos = "alpha"', "list at least one repository"),
        ('[[repos]]\nname = "x"', "repos[1]: path must be a folder name"),
        ('[[repos]]\npath = "repos/nowhere"', "repos[1]: repository not found: repos/nowhere"),
        ('[[repos]]\npath = "team.toml"', "repository not found: team.toml"),
        ('[[repos]]\npath = "repos/alpha"\nweight = 0', "weight must be a positive number"),
        ('[[repos]]\npath = "repos/alpha"\nweight = nan', "weight must be a positive number"),
        ('[[repos]]\npath = "repos/alpha"\nweight = true', "weight must be a positive number"),
        ('[[repos]]\npath = "repos/alpha"\nkind = "wiki"', "kind must be code or docs"),
        ('[[repos]]\npath = "repos/alpha"\ncolour = 1', "unknown key 'colour'"),
        (
            '[[repos]]\npath = "repos/alpha"\n[[repos]]\npath = "repos/beta"\nname = "alpha"',
            "repos[2]: the name 'alpha' is taken by repos[1]",
        ),
        ('[[repos]]\npath = "repos/alpha"\nname = "a\\nb"', "name must be a one-line text"),
        ('[[repos]]\npath = "repos/alpha"\n[ray]\nshards = 0', "shards must be a positive"),
        ('[[repos]]\npath = "repos/alpha"\n[ray]\nshards = 1.5', "shards must be a positive"),
        ('[[repos]]\npath = "repos/alpha"\n[ray]\naddress = 5', "address must be a text"),
        ('[[repos]]\npath = "repos/alpha"\n[ray]\nhost = "x"', "[ray]: unknown key 'host'"),
        ('[[repos]]\npath = "repos/alpha"\n[ray]\nmax_restarts = -1', "max_restarts must be"),
        ('[[repos]]\npath = "repos/alpha"\nbudget = 10', "unknown key 'budget'"),
        ("[[repos]\n", "workspace file"),
    ],
)
def test_every_mistake_is_one_line_naming_the_entry(folders, text, message):
    path = _write(folders, text)
    with pytest.raises(WorkspaceError) as caught:
        load_workspace(path)
    reason = caught.value.reason
    assert message in reason and "\n" not in reason
    assert isinstance(caught.value, ConfigError)  # exit code 2, like any bad setting


def test_a_missing_workspace_file_is_one_line(tmp_path):
    with pytest.raises(WorkspaceError, match="is not a readable file"):
        load_workspace(tmp_path / "absent.toml")
