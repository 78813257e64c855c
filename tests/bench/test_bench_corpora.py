"""Corpus unpacking keeps only the declared parts of a package."""

from __future__ import annotations

import hashlib
import io
import tarfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bench import corpora
from bench.corpora import CORPORA, Corpus, _unpack_tar, corpora_for


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


def test_extra_corpora_run_only_when_named():
    default = corpora_for(["python", "java"])
    assert default and not any(c.extra for c in default)
    named = corpora_for(["java"], ["jsoup", "jdk17"])
    assert [c.name for c in named] == ["jdk17", "jsoup"]
    assert all(c.sha256 for c in CORPORA if c.source == "debsrc")


def _serve(root: Path) -> tuple[ThreadingHTTPServer, str]:
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def test_a_debian_source_archive_is_checked_against_its_digest(tmp_path, monkeypatch):
    served = tmp_path / "archive" / "pool" / "main" / "p"
    served.mkdir(parents=True)
    xz = served / "p_1.0.orig.tar.xz"
    with tarfile.open(xz, "w:xz") as tar:
        for name, text in {
            "p-1.0/src/main/java/p/A.java": "class A {}",
            "p-1.0/src/test/java/p/ATest.java": "class ATest {}",
            "p-1.0/pom.xml": "<project/>",
        }.items():
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text.encode()))
    digest = hashlib.sha256(xz.read_bytes()).hexdigest()
    server, url = _serve(tmp_path / "archive")
    monkeypatch.setattr(corpora, "DEBIAN_ARCHIVE", url)
    try:
        wrong = Corpus("p", "java", "debsrc", "pool/main/p/p_1.0.orig.tar.xz", "1.0", sha256="0")
        with pytest.raises(RuntimeError, match="sha256"):
            corpora._debian_source(wrong, tmp_path)
        assert not (tmp_path / "p_1.0.orig.tar.xz").exists()
        right = Corpus(
            "p",
            "java",
            "debsrc",
            "pool/main/p/p_1.0.orig.tar.xz",
            "1.0",
            ("src/main/java/", "src/test/java/"),
            sha256=digest,
        )
        root = corpora.fetch(right, tmp_path / "cache")
    finally:
        server.shutdown()
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.java"))
    assert files == ["src/main/java/p/A.java", "src/test/java/p/ATest.java"]
    assert not (root / "pom.xml").exists()


def test_a_download_that_fails_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys):
    from bench.cli import main

    server, url = _serve(tmp_path / "empty")  # serves nothing: every archive is a 404
    monkeypatch.setattr(corpora, "DEBIAN_ARCHIVE", url)
    monkeypatch.setenv(corpora.CACHE_ENV, str(tmp_path / "cache"))
    try:
        code = main(["fetch", "--lang", "java", "--repo", "jsoup"])
    finally:
        server.shutdown()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err[-1].startswith("bench: ") and "404" in err[-1]


def _deb(path: Path, files: dict[str, str]) -> Path:
    """A Debian package (an ``ar`` archive) whose data.tar.gz holds ``files``."""
    data = _tarball(path.with_suffix(".tar.gz"), files).read_bytes()
    members = [("debian-binary", b"2.0\n"), ("data.tar.gz", data)]
    out = bytearray(b"!<arch>\n")
    for name, body in members:
        out += f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(body):<10}`\n".encode()
        out += body + (b"\n" if len(body) % 2 else b"")
    path.write_bytes(bytes(out))
    return path


def test_a_rust_crate_package_unpacks_its_crate_folder_as_the_root(tmp_path):
    deb = _deb(
        tmp_path / "librust-x-dev.deb",
        {
            "./usr/share/cargo/registry/x-1.0.0/Cargo.toml": "[package]\n",
            "./usr/share/cargo/registry/x-1.0.0/src/lib.rs": "pub mod a;\n",
            "./usr/share/cargo/registry/x-1.0.0/../../escape.rs": "no\n",
            "./usr/share/doc/librust-x-dev/copyright": "no\n",
        },
    )
    dest = tmp_path / "crate"
    corpora._unpack_crate(deb, dest)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert files == ["Cargo.toml", "src/lib.rs"]
