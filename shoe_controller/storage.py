"""Free space on the state filesystem: the reserve the daemon keeps so that a full disk
stops play cleanly instead of failing a write in the middle of a round.

:class:`DiskGuard` answers "is free space below the reserve?" for the filesystem holding
the journal (``os.statvfs``: the blocks an unprivileged writer may still use). The daemon
asks before each round opens and after every failed write (see docs/daemon.md, "A full
disk"); what to do about it is the daemon's.

>>> import tempfile
>>> g = DiskGuard(tempfile.gettempdir(), reserve_bytes=0)
>>> g.low(), g.free() > 0
(False, True)
>>> DiskGuard(tempfile.gettempdir(), reserve_bytes=1 << 62).low()
True
>>> mb(3 * 1024 * 1024 + 1)
'3.0 MB'
"""

from __future__ import annotations

import errno
import os
import sqlite3

__all__ = ["DiskGuard", "is_storage_full", "mb"]


def mb(n: int) -> str:
    """Bytes as megabytes (MiB), one decimal."""
    return f"{n / (1024 * 1024):.1f} MB"


def is_storage_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) says the disk or database is full.

    >>> is_storage_full(sqlite3.OperationalError("database or disk is full"))
    True
    >>> is_storage_full(OSError(errno.ENOSPC, "No space left on device"))
    True
    >>> is_storage_full(ValueError("x"))
    False
    """
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(exc, sqlite3.Error):
            code = getattr(exc, "sqlite_errorcode", None)
            if code == sqlite3.SQLITE_FULL or "full" in str(exc):
                return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


class DiskGuard:
    """Free space of the filesystem holding ``path`` against a reserve of
    ``reserve_bytes``."""

    def __init__(self, path: str, reserve_bytes: int) -> None:
        self.dir = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        self.reserve = int(reserve_bytes)
        #: the last figure read by :meth:`free` (bytes), for status and metrics
        self.last_free: int | None = None

    def free(self) -> int:
        """Bytes still available to the daemon on that filesystem (0 if unknown)."""
        try:
            st = os.statvfs(self.dir)
        except OSError:
            return 0
        self.last_free = int(st.f_bavail * st.f_frsize)
        return self.last_free

    def low(self) -> bool:
        """Free space is below the reserve."""
        return self.free() < self.reserve

    def describe(self) -> str:
        """``"1.2 MB free, reserve 50.0 MB"``."""
        return f"{mb(self.free())} free, reserve {mb(self.reserve)}"
