"""Runtime files: where a running ``greprag serve`` listens, so the CLI can find it.

One small JSON file per served root in ``<cache root>/servers/`` (folder 0700, file 0600,
written atomically): the server's pid, the address to connect to, its bearer token and
token cap. ``find_server(root)`` returns the record only while that process is alive.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from greprag.config import cache_root

__all__ = ["ServerRecord", "find_server", "record_path", "remove_records", "write_records"]


@dataclass(frozen=True)
class ServerRecord:
    """A running server: connect to ``host:port`` with ``token`` (empty: none)."""

    pid: int
    host: str
    port: int
    token: str
    root: str
    max_tokens: int


def _folder() -> Path:
    return cache_root() / "servers"


def record_path(root: Path) -> Path:
    """The runtime file of the server for ``root`` (a real path)."""
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return _folder() / f"{digest}.json"


def connect_host(bound: str) -> str:
    """The address a local client dials for a server bound to ``bound``."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(bound, bound)


def write_records(
    roots: list[Path], host: str, port: int, token: str, max_tokens: int
) -> list[Path]:
    """One runtime file per root (private to the user); their paths."""
    folder = _folder()
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    written = []
    for root in roots:
        record = ServerRecord(os.getpid(), connect_host(host), port, token, str(root), max_tokens)
        path = record_path(root)
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(asdict(record), handle)
        os.replace(tmp, path)
        written.append(path)
    return written


def remove_records(paths: list[Path]) -> None:
    """Remove the runtime files this process wrote (not ones a newer server replaced)."""
    for path in paths:
        record = _read(path)
        if record is not None and record.pid == os.getpid():
            with contextlib.suppress(OSError):
                path.unlink()


def _read(path: Path) -> ServerRecord | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ServerRecord(**data)
    except (OSError, ValueError, TypeError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find_server(root: Path) -> ServerRecord | None:
    """The live server recorded for ``root`` (a real path), or None."""
    record = _read(record_path(root))
    if record is None or record.root != str(root) or not _alive(record.pid):
        return None
    return record
