"""Docs benchmark corpora: real manuals and the code they document, fetched at run time.

PyPI source distributions carry a project's manual beside its code (Django's reST docs,
click's and Starlette's Markdown); Debian's ``-doc`` packages carry built HTML manuals
(Flask's Sphinx pages, Apache Commons Lang's Javadoc). Each is unpacked once into
``<cache>/docs-repos/<name>-<version>`` (only the folders kept below) and made a git
repository, as ``bench.corpora`` does for the code benchmark. Nothing is committed here.
"""

from __future__ import annotations

import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from bench.corpora import _apt_download, _deb_data, _download_pypi, _git_commit, _log, cache_dir

__all__ = ["DOCS_CORPORA", "DocsCorpus", "docs_corpora_for", "fetch_docs"]

_MARKER = "greprag-bench-ok"


@dataclass(frozen=True)
class DocsCorpus:
    """A manual and (for an sdist) its code. ``keep``/``drop``: path prefixes inside the
    archive (after its top folder for an sdist); ``strip`` is removed from kept paths."""

    name: str
    source: str  # "pypi" (an sdist) or "debian"
    package: str
    version: str
    keep: tuple[str, ...]
    drop: tuple[str, ...] = ()
    strip: str = ""
    code: str = ""  # the package folder whose docstrings make code questions

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


DOCS_CORPORA: tuple[DocsCorpus, ...] = (
    # ~115k lines of Python (django/ without contrib) and a 164k-line reST manual
    DocsCorpus(
        "django",
        "pypi",
        "django",
        "5.2.19",
        keep=("docs/", "django/"),
        drop=("django/contrib/", "django/conf/locale/", "docs/_theme/", "docs/_ext/"),
        code="django",
    ),
    DocsCorpus("click", "pypi", "click", "8.5.1", keep=("docs/", "src/"), code="src/click"),
    DocsCorpus(
        "starlette", "pypi", "starlette", "1.10.0", keep=("docs/", "starlette/"), code="starlette"
    ),
    # the same two with their test suites: a mixed repository's tests call the API that a
    # question asks about, many times over (the questions are the same kinds)
    DocsCorpus(
        "click-tests", "pypi", "click", "8.5.1", keep=("docs/", "src/", "tests/"), code="src/click"
    ),
    DocsCorpus(
        "starlette-tests",
        "pypi",
        "starlette",
        "1.10.0",
        keep=("docs/", "starlette/", "tests/"),
        code="starlette",
    ),
    DocsCorpus(
        "flask-html",
        "debian",
        "python-flask-doc",
        "2.2.2-3",
        keep=("usr/share/doc/python-flask-doc/html/",),
        drop=("usr/share/doc/python-flask-doc/html/_",),
        strip="usr/share/doc/python-flask-doc/html/",
    ),
    DocsCorpus(
        "commons-lang3-javadoc",
        "debian",
        "libcommons-lang3-java-doc",
        "3.12.0-2+deb12u1",
        keep=("usr/share/doc/libcommons-lang3-java/api/org/",),
        drop=("usr/share/doc/libcommons-lang3-java/api/src-html/",),
        strip="usr/share/doc/libcommons-lang3-java/api/",
    ),
    # held out: added in the thirty-sixth session, after docs mode's tuning on the above
    DocsCorpus(
        "werkzeug", "pypi", "werkzeug", "3.1.3", keep=("docs/", "src/"), code="src/werkzeug"
    ),
    DocsCorpus("attrs", "pypi", "attrs", "26.1.0", keep=("docs/", "src/"), code="src/attr"),
    DocsCorpus(
        "jinja2-html",
        "debian",
        "python-jinja2-doc",
        "3.1.2-1+deb12u3",
        keep=("usr/share/doc/python-jinja2-doc/html/",),
        drop=("usr/share/doc/python-jinja2-doc/html/_",),
        strip="usr/share/doc/python-jinja2-doc/html/",
    ),
    DocsCorpus(
        "commons-io-javadoc",
        "debian",
        "libcommons-io-java-doc",
        "2.11.0-2",
        keep=("usr/share/doc/libcommons-io-java/api/org/",),
        drop=("usr/share/doc/libcommons-io-java/api/src-html/",),
        strip="usr/share/doc/libcommons-io-java/api/",
    ),
)


def docs_corpora_for(names: list[str]) -> list[DocsCorpus]:
    return [c for c in DOCS_CORPORA if not names or c.name in names]


def _wanted(name: str, corpus: DocsCorpus) -> str | None:
    """The repository path of archive member ``name``, or None to leave it out."""
    if not name.startswith(corpus.keep) or name.startswith(corpus.drop):
        return None
    if "/class-use/" in name or name.endswith("/"):
        return None
    relative = name[len(corpus.strip) :] if corpus.strip else name
    return relative or None


def _extract(tar: tarfile.TarFile, corpus: DocsCorpus, dest: Path, top: bool) -> int:
    count = 0
    for member in tar.getmembers():
        if not member.isfile():
            continue  # links (Debian's shared JavaScript) and folders
        name = member.name.removeprefix("./")
        if top:
            name = name.split("/", 1)[1] if "/" in name else ""
        relative = _wanted(name, corpus)
        handle = tar.extractfile(member) if relative else None
        if handle is None or ".." in Path(relative).parts:
            continue
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(handle.read())
        count += 1
    return count


def fetch_docs(corpus: DocsCorpus, cache: Path | None = None) -> Path:
    """The corpus as a git repository in the cache, downloaded and unpacked once."""
    cache = cache or cache_dir()
    root = cache / "docs-repos" / corpus.key
    if (root / ".git" / _MARKER).exists():
        return root
    _log(f"fetching {corpus.package} {corpus.version} ({corpus.source}) ...")
    downloads = cache / "downloads" / f"docs-{corpus.key}"
    downloads.mkdir(parents=True, exist_ok=True)
    staging = root.with_name(root.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    if corpus.source == "pypi":
        with tarfile.open(_download_pypi(corpus, downloads, sdist=True), mode="r:gz") as tar:
            files = _extract(tar, corpus, staging, top=True)
    else:
        with _deb_data(_apt_download(corpus, downloads)) as tar:
            files = _extract(tar, corpus, staging, top=False)
    _log(f"unpacked {corpus.name}: {files} files; making it a git repository")
    _git_commit(staging)
    (staging / ".git" / _MARKER).write_text(corpus.version)
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    return root
