"""The warm state of a server: one ``Workspace`` per served root, and the path checks.

A workspace keeps a ``Retriever`` (its file lists, the embedding model and the dense
index stay loaded), an ``AnswerCache`` and a file watcher. Each batch of changes drops
exactly what the changed files invalidate (``Retriever.invalidate``), clears the answers
and asks the background worker to bring the dense index up to date. Requests name a root
(or a file inside one); any path that resolves outside every root is refused.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from greprag.config import REPO_CONFIG
from greprag.errors import GrepRAGError, RetrievalError
from greprag.files import inside
from greprag.server.answers import AnswerCache
from greprag.server.watch import DEBOUNCE_MS, Watcher, Worker

__all__ = ["Pool", "Workspace"]

log = logging.getLogger("greprag.server")

WATCHED_FILE_LIST_TTL_S = 60.0  # file lists live longer when the watcher says what changed
SETTLE_S = 0.5  # no change for this long (and no refresh running): settled
ANSWERS = 512  # answers kept per root


def _under(real: str, root: Path) -> bool:
    return real.startswith(str(root).rstrip(os.sep) + os.sep)


class Workspace:
    """One served root: a warm Retriever, its answers, its watcher and dense refresher."""

    def __init__(
        self, root: Path, settings: dict[str, Any], *, watch: bool, debounce_ms: int
    ) -> None:
        from greprag.pipeline import Retriever

        self.root = root
        self.settings = {k: v for k, v in settings.items() if v is not None}
        self._watched = {"file_list_ttl": WATCHED_FILE_LIST_TTL_S} if watch else {}
        self.retriever = Retriever(root, **{**self._watched, **self.settings})
        self.config_error = ""  # why the latest .greprag.toml edit was not applied
        # without a watcher nothing would clear answers when other files change: keep none
        self.answers = AnswerCache(root, size=ANSWERS if watch else 0)
        self.watcher = Watcher(root, self.changed, debounce_ms=debounce_ms) if watch else None
        self.refresher = Worker(lambda: self.retriever.refresh(), name="greprag-dense")
        self.changed_files = 0
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start watching, and load the dense model and index in the background."""
        if self.watcher is not None and not self.watcher.start():
            # no events (e.g. out of inotify watches): the library's own freshness, no answers
            from greprag.pipeline import Retriever

            self.retriever = Retriever(self.root, **self.settings)
            self.answers = AnswerCache(self.root, size=0)
        self.refresher.request()

    def changed(self, paths: list[str]) -> None:
        """A batch of changed files (repo-relative): invalidate (the root's own
        ``.greprag.toml``: take its new settings), then refresh dense."""
        with self._lock:
            if REPO_CONFIG in paths:
                self._reconfigure()
            self.retriever.invalidate(paths)  # first: an answer begun before is then not kept
            self.answers.clear()
            self.changed_files += len(paths)
        self.refresher.request()

    def _reconfigure(self) -> None:
        """A Retriever with the settings the edited ``.greprag.toml`` gives (the server's
        own options still win); when they are invalid the previous one stays and
        ``config_error`` says why (status shows it)."""
        from greprag.pipeline import Retriever

        try:
            retriever = Retriever(self.root, **{**self._watched, **self.settings})
        except GrepRAGError as exc:
            self.config_error = f"{REPO_CONFIG} not applied, previous settings kept: {exc}"
            log.warning("%s: %s", self.root, self.config_error)
            return
        self.retriever, self.config_error = retriever, ""

    def settled(self) -> bool:
        """No change seen for ``SETTLE_S`` and no dense refresh pending."""
        last = self.watcher.last_batch if self.watcher else None
        quiet = last is None or time.monotonic() - last >= SETTLE_S
        return quiet and not self.refresher.busy

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        self.refresher.stop()


class Pool:
    """The served roots (real paths) and their workspaces."""

    def __init__(
        self,
        roots: Sequence[str | Path],
        *,
        watch: bool = True,
        debounce_ms: int = DEBOUNCE_MS,
        **settings: Any,
    ) -> None:
        if not roots:
            raise RetrievalError("give at least one repository to serve (--repo)")
        self.workspaces: dict[Path, Workspace] = {}
        for given in roots:
            root = Path(os.path.realpath(Path(given).expanduser()))
            if not root.is_dir():
                raise RetrievalError(f"repository not found: {given}")
            if root not in self.workspaces:
                self.workspaces[root] = Workspace(
                    root, settings, watch=watch, debounce_ms=debounce_ms
                )

    @property
    def roots(self) -> list[Path]:
        return list(self.workspaces)

    def start(self) -> None:
        for workspace in self.workspaces.values():
            workspace.start()

    def close(self) -> None:
        for workspace in self.workspaces.values():
            workspace.close()

    def workspace(self, repo: str | None = None, file: str | None = None) -> Workspace:
        """The workspace a request means: ``repo`` (a served root, by path or folder name),
        else the root holding an absolute ``file``, else the only root."""
        if repo:
            real = Path(os.path.realpath(Path(repo).expanduser()))
            if real in self.workspaces:
                return self.workspaces[real]
            named = [ws for root, ws in self.workspaces.items() if root.name == repo]
            if len(named) == 1:
                return named[0]
            raise RetrievalError(f"not a served repository: {repo} (served: {self._listing()})")
        if file and os.path.isabs(file):
            real = os.path.realpath(file)
            holders = [r for r in self.workspaces if _under(real, r)]
            if not holders:
                raise RetrievalError(f"path is outside the served repositories: {file}")
            return self.workspaces[max(holders, key=lambda r: len(str(r)))]
        if len(self.workspaces) == 1:
            return next(iter(self.workspaces.values()))
        served = self._listing()
        raise RetrievalError(f"several repositories are served; name one with repo ({served})")

    def relative(self, workspace: Workspace, path: str) -> str:
        """``path`` (repo-relative or absolute) as a checked repo-relative path; refuses
        anything resolving outside the root (``..``, symlinks out, other absolute paths)."""
        root = workspace.root
        if os.path.isabs(path):
            real = os.path.realpath(path)
            if not _under(real, root):
                raise RetrievalError(f"path is outside the served repository: {path}")
            path = os.path.relpath(real, root).replace(os.sep, "/")
        if inside(root, path) is None:
            raise RetrievalError(f"path is outside the served repository: {path}")
        return path

    def _listing(self) -> str:
        return ", ".join(str(root) for root in self.workspaces)
