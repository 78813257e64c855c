"""File watching: debounced batches of changed paths, and a background worker.

``Watcher`` runs watchfiles (inotify and its kin) over one root in a daemon thread. Events
are grouped until ``step_ms`` pass without a new one (at most ``debounce_ms``), so a branch
switch of hundreds of renames arrives as one batch, or a few, each handed whole to
``on_change`` with repo-relative paths. ``Worker`` runs one job in its own thread whenever
asked, coalescing requests that arrive while it runs (the dense index refresh).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["Watcher", "Worker"]

log = logging.getLogger("greprag.server")

DEBOUNCE_MS = 1000
STEP_MS = 100
_TICK_MS = 300  # how often an idle watcher wakes (to notice a stop, to say it is ready)


class Watcher:
    """Calls ``on_change(paths)`` for each debounced batch of changes under ``root``."""

    def __init__(
        self,
        root: Path,
        on_change: Callable[[list[str]], None],
        *,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
    ) -> None:
        self.root = root
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.batches = 0
        self.last_batch: float | None = None  # time.monotonic() of the last batch
        self.error = ""
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, timeout_s: float = 10.0) -> bool:
        """Start watching; True once events are being received (False: could not)."""
        self._thread = threading.Thread(target=self._run, name="greprag-watch", daemon=True)
        self._thread.start()
        self.ready.wait(timeout_s)
        return self.ready.is_set() and not self.error

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self.ready.is_set()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        try:
            from watchfiles import watch

            batches = watch(
                self.root,
                debounce=self.debounce_ms,
                step=self.step_ms,
                stop_event=self._stop,
                rust_timeout=_TICK_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
                ignore_permission_denied=True,
            )
            for changes in batches:
                self.ready.set()
                paths = sorted({p for _, raw in changes if (p := self._relative(raw))})
                if paths:
                    self.batches += 1
                    self.last_batch = time.monotonic()
                    self.on_change(paths)
        except Exception as exc:  # the server keeps answering; status reports it
            self.error = f"file watcher stopped: {exc}"
            log.warning(self.error)
        finally:
            self.ready.set()

    def _relative(self, raw: str) -> str | None:
        relative = os.path.relpath(raw, self.root)
        if relative.startswith("..") or os.path.isabs(relative) or relative == ".":
            return None
        return relative.replace(os.sep, "/")


class Worker:
    """Runs ``job`` in a daemon thread each time ``request`` is called; requests made while
    it runs are coalesced into one more run."""

    def __init__(self, job: Callable[[], object], name: str) -> None:
        self.job = job
        self.error = ""
        self.runs = 0
        self._wanted = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stop = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def request(self) -> None:
        with self._lock:
            self._idle.clear()
            self._wanted.set()

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    def wait_idle(self, timeout_s: float | None = None) -> bool:
        return self._idle.wait(timeout_s)

    def stop(self) -> None:
        self._stop = True
        self._wanted.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while True:
            self._wanted.wait()
            if self._stop:
                return
            self._wanted.clear()
            try:
                self.job()
                self.error = ""
            except Exception as exc:  # reported by status; the next request tries again
                self.error = f"{type(exc).__name__}: {exc}"
                log.warning("background job failed: %s", self.error)
            self.runs += 1
            with self._lock:
                if not self._wanted.is_set():
                    self._idle.set()
