"""Benchmark corpora: pinned third-party code fetched at run time into a cache, never committed.

Each corpus is unpacked into ``<cache>/repos/<name>-<version>`` and made a git repository
(``git init`` + one commit) so .gitignore-aware tools behave as in a real checkout.
The cache is ``~/.cache/greprag-bench`` unless ``GREPRAG_BENCH_CACHE`` says otherwise.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.request import urlopen

CACHE_ENV = "GREPRAG_BENCH_CACHE"
DEBIAN_ARCHIVE = "http://deb.debian.org/debian/"  # where ``debsrc`` archives are fetched
_MARKER = "greprag-bench-ok"

# The JDK class library is large: keep a subset of java.base (~260k lines).
_JDK_SUBSET = (
    "java.base/java/util/",
    "java.base/java/io/",
    "java.base/java/net/",
    "java.base/java/nio/file/",
    "java.base/java/time/",
)
_JDK_EXCLUDE = (
    "java.base/java/util/concurrent/",
    "java.base/java/util/zip/",
    "java.base/java/util/jar/",
    "java.base/java/util/spi/",
    "java.base/java/util/random/",
    "java.base/java/time/chrono/",
    "java.base/java/time/format/",
    "java.base/java/time/zone/",
)


@dataclass(frozen=True)
class Corpus:
    """One pinned project. ``source`` is ``pypi`` (a wheel), ``sdist`` (a PyPI source
    archive), ``debian`` (a binary package), ``debsrc`` (a Debian source package's
    upstream archive: ``package`` is its path in the archive, ``sha256`` its digest) or
    ``npm``. ``keep``: for ``npm``, ``sdist`` and ``debsrc``, the path prefixes
    (relative to the package root) of what is unpacked; empty for all. ``extra``: left
    out of a run unless named (``--repo``)."""

    name: str
    lang: str
    source: str
    package: str
    version: str
    keep: tuple[str, ...] = ()
    extra: bool = False
    sha256: str = ""

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


_TS_KEEP = ("src/", "package.json")  # the TypeScript sources
_MAVEN_KEEP = ("src/main/java/", "src/test/java/")  # a Maven project's code and its tests
CORPORA: tuple[Corpus, ...] = (
    Corpus("rich", "python", "pypi", "rich", "15.0.0"),
    Corpus("click", "python", "pypi", "click", "8.5.1"),
    Corpus("httpx", "python", "pypi", "httpx", "0.28.1"),
    Corpus("attrs", "python", "pypi", "attrs", "26.1.0"),
    Corpus("pydantic", "python", "pypi", "pydantic", "2.14.4"),
    Corpus("starlette", "python", "pypi", "starlette", "1.10.0"),
    Corpus("fastapi", "python", "pypi", "fastapi", "0.165.0"),
    Corpus("pytest", "python", "pypi", "pytest", "9.2.0"),
    Corpus("tornado", "python", "pypi", "tornado", "6.6.1"),
    Corpus("django", "python", "pypi", "django", "5.2.19"),
    Corpus("jdk17", "java", "debian", "openjdk-17-source", "17.0.19+10-1~deb12u2"),
    Corpus("beanshell", "java", "debian", "bsh-src", "2.0b4-20"),
    # Android's Java half of React Native (Facebook style) and JPype's Java bridge and test
    # harness (Allman style: ``{`` on its own line)
    Corpus(
        "react-native",
        "java",
        "npm",
        "react-native",
        "0.71.19",
        ("ReactAndroid/src/main/java/",),
    ),
    Corpus("jpype", "java", "sdist", "JPype1", "1.5.2", ("native/java/", "test/harness/")),
    Corpus("zod", "typescript", "npm", "zod", "4.6.7", _TS_KEEP),
    Corpus("rxjs", "typescript", "npm", "rxjs", "7.8.2", _TS_KEEP),
    Corpus("query-core", "typescript", "npm", "@tanstack/query-core", "5.108.4", _TS_KEEP),
    Corpus("immer", "typescript", "npm", "immer", "11.2.13", _TS_KEEP),
    # Extra corpora, run when named: projects with their test suites, where the windows
    # find the most near-copies. The Python wheels above ship no tests.
    *(
        Corpus(f"{name}-sd", "python", "sdist", package, version, extra=True)
        for name, package, version in (
            ("flask", "flask", "3.1.1"),
            ("requests", "requests", "2.32.3"),
            ("attrs", "attrs", "26.1.0"),
            ("click", "click", "8.5.1"),
            ("jinja2", "jinja2", "3.1.6"),
            ("marshmallow", "marshmallow", "3.26.1"),
            ("werkzeug", "werkzeug", "3.1.3"),
            ("sau", "SQLAlchemy-Utils", "0.41.2"),
            # held out: not looked at while tuning (docs/benchmarks.md)
            ("packaging", "packaging", "24.2"),
            ("more-itertools", "more-itertools", "10.5.0"),
            ("dateutil", "python-dateutil", "2.9.0.post0"),
            ("cattrs", "cattrs", "24.1.2"),
            # held out in the thirty-sixth session: measured once, at the end of its tuning
            ("h11", "h11", "0.14.0"),
            ("toolz", "toolz", "1.0.0"),
            ("pluggy", "pluggy", "1.5.0"),
            ("tomlkit", "tomlkit", "0.13.2"),
            ("boltons", "boltons", "24.1.0"),
            # held out in the forty-third session: measured once before any tuning
            ("networkx", "networkx", "3.6.1"),
            ("arrow", "arrow", "1.4.0"),
            ("redis", "redis", "8.2.0"),
            ("sqlparse", "sqlparse", "0.6.1"),
        )
    ),
    *(
        Corpus(name, "java", "debsrc", path, version, _MAVEN_KEEP, True, digest)
        for name, path, version, digest in (
            (
                "commons-lang3",
                "pool/main/libc/libcommons-lang3-java/libcommons-lang3-java_3.12.0.orig.tar.xz",
                "3.12.0",
                "f7c22574707611b63bae19ff17f59e24cdd32e2b0e61a50ec9b1b525fbc909d1",
            ),
            (
                "commons-io",
                "pool/main/c/commons-io/commons-io_2.11.0.orig.tar.gz",
                "2.11.0",
                "5a55361cf2b97228f94b3c65e3a4af784581debe322be551c44b2776db1c6483",
            ),
            (
                "jsoup",
                "pool/main/j/jsoup/jsoup_1.15.3.orig.tar.xz",
                "1.15.3",
                "052511f0be47511f9b2a17d44fc1eccc4b5373e77cc5a3221e34b6af437e1e2e",
            ),
            (
                "jackson-databind",
                "pool/main/j/jackson-databind/jackson-databind_2.14.0.orig.tar.xz",
                "2.14.0",
                "ec086218027c3ecf235fcda042bf04d87b4178ee225f0633f062cd20e64f74a9",
            ),
            (
                "commons-collections4",
                "pool/main/libc/libcommons-collections4-java/"
                "libcommons-collections4-java_4.2.orig.tar.xz",
                "4.2",
                "e6b25f22128d2b5e6181d9736f313103e079366013f853061aba16e8d4feb729",
            ),
            (
                "mockito",
                "pool/main/m/mockito/mockito_2.23.0.orig.tar.xz",
                "2.23.0",
                "b9f76525f44797e0f63a24ecaf8e0574868cce1c5a4a3d1d712e050418d3c5dd",
            ),
            # held out in the thirty-sixth session, as the Python five above
            (
                "joda-time",
                "pool/main/libj/libjoda-time-java/libjoda-time-java_2.10.14.orig.tar.xz",
                "2.10.14",
                "600ab9a000b7c8ab4cb24e0fbd5c5ee6c4be46b97c55f90004df3cd1c56bd0b5",
            ),
            (
                "commons-csv",
                "pool/main/c/commons-csv/commons-csv_1.9.0.orig.tar.xz",
                "1.9.0",
                "661252998cf2b9aac1aa12fe9e104dc23190761a8971384f83a6c1fc02536867",
            ),
            (
                "commons-compress",
                "pool/main/libc/libcommons-compress-java/libcommons-compress-java_1.22.orig.tar.xz",
                "1.22",
                "c0270188ea43f7af708ff384a6421597e2eee5d68db152b60ad6e682f0e88160",
            ),
            # held out in the forty-third session, as the Python four above
            (
                "commons-net",
                "pool/main/libc/libcommons-net-java/libcommons-net-java_3.9.0.orig.tar.gz",
                "3.9.0",
                "f7da45f48c59df27468c6c1d396ba3406359bfb42e8b6ec9a07acee1d11892f2",
            ),
            (
                "jackson-core",
                "pool/main/j/jackson-core/jackson-core_2.14.1.orig.tar.xz",
                "2.14.1",
                "d9eb6aa1898c4d5a582c52e69da249efae25e4d2c809c57dc6b6ee01c4b0fb3b",
            ),
            (
                "commons-jexl3",
                "pool/main/libc/libcommons-jexl3-java/libcommons-jexl3-java_3.1.orig.tar.xz",
                "3.1",
                "63638339c0362aab6e301c215b463c4e4084f11e52f76a27c0b6f7b9f8433ea9",
            ),
        )
    ),
    Corpus(
        "guava",
        "java",
        "debsrc",
        "pool/main/g/guava-libraries/guava-libraries_31.1.orig.tar.xz",
        "31.1",
        ("guava/src/", "guava-tests/test/"),
        True,
        "3dbb56b34e5ebd1b97184f72d31fbf9da24cc26c28f1ad3714aeeefdeedaed2a",
    ),
)


def cache_dir() -> Path:
    """The cache root (created on demand)."""
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "greprag-bench")
    root.mkdir(parents=True, exist_ok=True)
    return root


def corpora_for(langs: Iterable[str], names: Iterable[str] = ()) -> list[Corpus]:
    """The corpora of the given languages: those named, or without names all but the
    extra ones."""
    wanted_langs, wanted_names = set(langs), set(names)
    return [
        c
        for c in CORPORA
        if c.lang in wanted_langs and (c.name in wanted_names if wanted_names else not c.extra)
    ]


def _log(message: str) -> None:
    print(f"[corpora] {message}", file=sys.stderr, flush=True)


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)


def _download_pypi(corpus: Corpus, into: Path, sdist: bool = False) -> Path:
    """The wheel (or, with ``sdist``, the source archive) of a pinned PyPI release."""
    argv = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary=:all:" if sdist else "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(into),
        f"{corpus.package}=={corpus.version}",
    ]
    proc = _run(argv)
    found = sorted(into.glob("*.tar.gz" if sdist else "*.whl"))
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"pip download {corpus.package}: {proc.stderr.strip()[-500:]}")
    return found[0]


def _unpack_wheel(wheel: Path, dest: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            top = info.filename.split("/", 1)[0]
            if top.endswith((".dist-info", ".data")) or info.is_dir():
                continue
            zf.extract(info, dest)


def _apt_download(corpus: Corpus, into: Path) -> Path:
    for spec in (f"{corpus.package}={corpus.version}", corpus.package):
        for attempt in range(2):
            proc = _run(["apt-get", "download", spec], cwd=into)
            debs = sorted(into.glob(f"{corpus.package}_*.deb"))
            if proc.returncode == 0 and debs:
                if spec == corpus.package:
                    _log(
                        f"warning: {corpus.package}={corpus.version} is gone; using {debs[0].name}"
                    )
                return debs[0]
            if attempt == 0:
                _log("apt-get download failed; running apt-get update once")
                _run(["apt-get", "update", "-q"])
    raise RuntimeError(f"apt-get download {corpus.package}: {proc.stderr.strip()[-500:]}")


def _deb_data(deb: Path) -> tarfile.TarFile:
    """The data.tar.* member of a .deb (an ``ar`` archive), opened as a tar file."""
    raw = deb.read_bytes()
    if not raw.startswith(b"!<arch>\n"):
        raise RuntimeError(f"{deb} is not a Debian package")
    pos = 8
    while pos + 60 <= len(raw):
        header = raw[pos : pos + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        body = raw[pos + 60 : pos + 60 + size]
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body), mode="r:*")
        pos += 60 + size + (size % 2)
    raise RuntimeError(f"{deb} has no data.tar member")


def _tar_member_bytes(tar: tarfile.TarFile, suffix: str) -> bytes:
    for member in tar.getmembers():
        if member.name.endswith(suffix):
            handle = tar.extractfile(member)
            if handle is not None:
                return handle.read()
    raise RuntimeError(f"no {suffix} in package")


def _unpack_jdk(deb: Path, dest: Path) -> None:
    src_zip = _tar_member_bytes(_deb_data(deb), "/lib/src.zip")
    with zipfile.ZipFile(io.BytesIO(src_zip)) as zf:
        for info in zf.infolist():
            name = info.filename
            if (
                info.is_dir()
                or not name.endswith(".java")
                or not name.startswith(_JDK_SUBSET)
                or name.startswith(_JDK_EXCLUDE)
            ):
                continue
            target = dest / name.split("/", 1)[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))


def _unpack_bsh(deb: Path, dest: Path) -> None:
    inner = _tar_member_bytes(_deb_data(deb), "/bsh.tar.gz")
    with tarfile.open(fileobj=io.BytesIO(inner), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")


_CARGO_REGISTRY = "./usr/share/cargo/registry/"  # where a librust-*-dev package keeps its crate


def _unpack_crate(deb: Path, dest: Path) -> None:
    """A Debian ``librust-*-dev`` package's crate, its folder as the root."""
    with _deb_data(deb) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith(_CARGO_REGISTRY):
                continue
            parts = member.name[len(_CARGO_REGISTRY) :].split("/", 1)
            if len(parts) == 2 and ".." not in parts[1].split("/"):
                target = dest / parts[1]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())


def _npm_pack(corpus: Corpus, into: Path) -> Path:
    proc = _run(
        [
            "npm",
            "pack",
            f"{corpus.package}@{corpus.version}",
            "--silent",
            "--pack-destination",
            str(into),
        ]
    )
    tarballs = sorted(into.glob("*.tgz"))
    if proc.returncode != 0 or not tarballs:
        raise RuntimeError(f"npm pack {corpus.package}: {proc.stderr.strip()[-500:]}")
    return tarballs[0]


def _debian_source(corpus: Corpus, into: Path) -> Path:
    """A Debian source package's upstream archive, checked against its pinned digest."""
    target = into / corpus.package.rsplit("/", 1)[-1]
    if not target.exists():
        with urlopen(DEBIAN_ARCHIVE + corpus.package, timeout=120) as response:
            data = response.read()
        digest = hashlib.sha256(data).hexdigest()
        if digest != corpus.sha256:
            raise RuntimeError(f"{corpus.package}: sha256 {digest}, pinned {corpus.sha256}")
        target.write_bytes(data)
    return target


def _unpack_tar(archive: Path, dest: Path, keep: tuple[str, ...]) -> None:
    """Unpack the files under ``keep`` (prefixes below the archive's top folder)."""
    with tarfile.open(archive, mode="r:*") as tar:
        members = []
        for member in tar.getmembers():
            rel = member.name.split("/", 1)[1] if "/" in member.name else member.name
            if member.isfile() and (not keep or rel.startswith(keep)):
                member.name = rel
                members.append(member)
        tar.extractall(dest, members=members, filter="data")


def _git_commit(root: Path) -> None:
    git = [
        "git",
        "-c",
        "user.name=greprag-bench",
        "-c",
        "user.email=bench@localhost",
        "-c",
        "commit.gpgsign=false",
        "-c",
        "init.defaultBranch=main",
    ]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "corpus snapshot"]):
        proc = _run([*git, *argv], cwd=root)
        if proc.returncode != 0:
            raise RuntimeError(f"git {argv[0]} in {root}: {proc.stderr.strip()}")


def _fetch_into(corpus: Corpus, downloads: Path, dest: Path) -> None:
    if corpus.source == "pypi":
        _unpack_wheel(_download_pypi(corpus, downloads), dest)
    elif corpus.source == "debian":
        deb = _apt_download(corpus, downloads)
        if corpus.lang == "rust":
            _unpack_crate(deb, dest)
        else:
            (_unpack_jdk if corpus.name == "jdk17" else _unpack_bsh)(deb, dest)
    elif corpus.source == "npm":
        _unpack_tar(_npm_pack(corpus, downloads), dest, corpus.keep)
    elif corpus.source == "sdist":
        _unpack_tar(_download_pypi(corpus, downloads, sdist=True), dest, corpus.keep)
    elif corpus.source == "debsrc":
        _unpack_tar(_debian_source(corpus, downloads), dest, corpus.keep)
    else:
        raise ValueError(f"unknown source {corpus.source!r}")


def fetch(corpus: Corpus, cache: Path | None = None) -> Path:
    """The corpus as a git repository in the cache, downloading and unpacking it once."""
    cache = cache or cache_dir()
    root = cache / "repos" / corpus.key
    if (root / ".git" / _MARKER).exists():
        return root
    _log(f"fetching {corpus.package} {corpus.version} ({corpus.source}) ...")
    downloads = cache / "downloads" / corpus.key
    downloads.mkdir(parents=True, exist_ok=True)
    staging = root.with_name(root.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    _fetch_into(corpus, downloads, staging)
    files = sum(1 for p in staging.rglob("*") if p.is_file())
    _log(f"unpacked {corpus.name}: {files} files; making it a git repository")
    _git_commit(staging)
    (staging / ".git" / _MARKER).write_text(corpus.version)
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    return root


def fetch_all(corpora: Iterable[Corpus], cache: Path | None = None) -> dict[str, Path]:
    """Fetch each corpus (cached); name → repository root."""
    return {c.name: fetch(c, cache) for c in corpora}
