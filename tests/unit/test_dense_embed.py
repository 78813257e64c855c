"""Handing the C heap's free pages back to the system between embedding batches."""

from __future__ import annotations

import platform
import sys

from greprag.dense.embed import release_freed_memory


def test_release_freed_memory_where_the_c_library_can():
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert release_freed_memory() is glibc
