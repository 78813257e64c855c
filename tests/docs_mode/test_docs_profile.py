"""The docs profile and the synonym table: data read at run time, kept equal to the code."""

from __future__ import annotations

import tomllib
from dataclasses import asdict

from docs_mode.profile import DocsProfile, load_profile
from docs_mode.synonyms import load_synonyms
from greprag.config import packaged_config
from greprag.dense.freshness import DOC_EXTENSIONS
from tests.conftest import ROOT


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def test_docs_toml_documents_every_default_of_the_profile():
    documented = tomllib.loads((ROOT / "configs" / "docs.toml").read_text())
    defaults = {k: _plain(v) for k, v in asdict(DocsProfile()).items()}
    assert documented == defaults
    assert packaged_config("docs") == documented  # the copy the wheel ships
    assert load_profile() == DocsProfile()


def test_the_profile_names_the_synonym_table_that_ships():
    table = load_synonyms(load_profile().synonyms)
    assert len(table.groups) >= 40 and all(len(g) >= 2 for g in table.groups)
    members = [m for g in table.groups for m in g]
    assert len(members) == len(set(members))  # a word belongs to one group
    raw = packaged_config("synonyms")["groups"]
    assert ["db", "database"] in raw


def test_the_dense_index_covers_the_profiles_documentation_files():
    assert set(DOC_EXTENSIONS) == set(load_profile().extensions())
