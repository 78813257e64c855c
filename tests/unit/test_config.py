"""Settings: defaults, sources, validation."""

from __future__ import annotations

import tomllib
from dataclasses import asdict

import pytest

from greprag.config import ConfigError, Settings, load_settings, packaged_config
from tests.conftest import ROOT


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
