"""Corpus unpacking keeps only the declared parts of a package."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from bench.corpora import CORPORA, _unpack_tar


def _tarball(path: Path, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_unpack_keeps_the_declared_prefixes_below_the_top_folder(tmp_path):
    archive = _tarball(
        tmp_path / "pkg.tgz",
        {
            "package/ReactAndroid/src/main/java/a/A.java": "class A {}",
            "package/ReactAndroid/build.gradle": "apply",
            "package/template/B.java": "class B {}",
        },
    )
    dest = tmp_path / "out"
    _unpack_tar(archive, dest, ("ReactAndroid/src/main/java/",))
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == [
        "ReactAndroid/src/main/java/a/A.java"
    ]


def test_every_java_corpus_is_pinned_and_named_once():
    java = [c for c in CORPORA if c.lang == "java"]
    assert {c.name for c in java} >= {"jdk17", "beanshell", "react-native", "jpype"}
    assert len({c.name for c in CORPORA}) == len(CORPORA)
    assert all(c.version for c in CORPORA)
