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

import contextlib
import errno
import os
import sqlite3

__all__ = ["BALLAST_BYTES", "BALLAST_FILE", "DiskGuard", "is_storage_full", "mb"]

#: the ballast: space the daemon holds on its own filesystem while there is room, and
#: gives back when the disk is full at start, so the journal can open (SQLite must create
#: its -wal and -shm files) and the ``disk_full`` fault reaches the journal at once
BALLAST_FILE = "disk-ballast"
BALLAST_BYTES = 4 * 1024 * 1024


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
    ``reserve_bytes``, and (``ballast_bytes`` > 0) a ballast file of that size in the
    same folder, kept while there is room for it above the reserve.

    While the ballast is missing, free space counts as low until there is room for the
    reserve *and* the ballast, so a disk that was full at start stops play until the
    ballast can be put back.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> g = DiskGuard(d, reserve_bytes=0, ballast_bytes=65536)
    >>> g.keep_ballast(), os.path.getsize(g.ballast_path)
    (True, 65536)
    >>> g.release_ballast(), g.release_ballast(), os.path.exists(g.ballast_path)
    (True, False, False)
    """

    def __init__(self, path: str, reserve_bytes: int, ballast_bytes: int = 0) -> None:
        self.dir = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        self.reserve = int(reserve_bytes)
        self.ballast = int(ballast_bytes)
        self.ballast_path = os.path.join(self.dir, BALLAST_FILE)
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

    def has_ballast(self) -> bool:
        """The ballast file is there, whole."""
        try:
            return os.path.getsize(self.ballast_path) >= self.ballast > 0
        except OSError:
            return False

    def low(self) -> bool:
        """Free space is below the reserve (plus the ballast, while it is missing)."""
        need = self.reserve
        if self.ballast and not self.has_ballast():
            need += self.ballast
        return self.free() < need

    def keep_ballast(self) -> bool:
        """Put the ballast back if it is missing and there is room for it above the
        reserve (allocated for real, not sparse). True when it is there."""
        if self.ballast <= 0:
            return False
        if self.has_ballast():
            return True
        if self.free() < self.reserve + self.ballast:
            return False
        tmp = self.ballast_path + ".new"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
            try:
                os.posix_fallocate(fd, 0, self.ballast)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.ballast_path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return False
        return True

    def release_ballast(self) -> bool:
        """Give the ballast's space back to the filesystem. True when there was one."""
        try:
            os.unlink(self.ballast_path)
        except FileNotFoundError:
            return False
        return True

    def describe(self) -> str:
        """``"1.2 MB free, reserve 50.0 MB"``."""
        return f"{mb(self.free())} free, reserve {mb(self.reserve)}"
