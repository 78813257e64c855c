"""A Python child process of this package, talking over a private socket pair."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = ["start_child"]


def start_child(code: str) -> tuple[subprocess.Popen, Connection] | None:
    """Run ``code`` in a new interpreter (``sys.argv[1]``: its end of the socket pair, a
    file descriptor) with this package importable; the process and our end, or None when
    it cannot start. Nothing else can write to the pair."""
    import socket  # with multiprocessing, only once a child is started
    from multiprocessing.connection import Connection

    ours, theirs = socket.socketpair()
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", code, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        ours.close()
        return None
    finally:
        theirs.close()
    return process, Connection(ours.detach())
