"""The daemon's state directory: 0750, its files 0640, whoever starts the daemon.

The journal holds the cards of the open round before the dealer confirms it, so no
local user outside the service's group may read it. systemd's ``StateDirectoryMode=0750``
and ``UMask=0027`` cover the service; :func:`prepare` covers everything else (``run``
or ``simulate --state-dir`` from a shell): it sets the process umask to 0027 (new files
0640, new directories 0750), creates the directory 0750, and refuses a directory or a
file in it that is wider, with one line saying what to chmod (it never loosens or
silently tightens what an operator set up).

>>> import tempfile, os
>>> d = os.path.join(tempfile.mkdtemp(), "state")
>>> prepare(d); oct(os.stat(d).st_mode & 0o777)
'0o750'
>>> os.chmod(d, 0o755)
>>> prepare(d)
Traceback (most recent call last):
...
shoe_controller.statedir.StateDirError: .../state: mode 0755 lets others in ...: chmod 750 .../state
"""

from __future__ import annotations

import os
import stat

__all__ = ["DIR_MODE", "FILE_MODE", "UMASK", "StateDirError", "check", "prepare"]

DIR_MODE = 0o750
FILE_MODE = 0o640
UMASK = 0o027
#: bits that must be clear: group write, and anything for others
_TOO_WIDE = 0o027
#: files meant to be read by anybody (the device's public key, shoe_controller.keys)
PUBLIC_FILES = frozenset({"signing.pub"})


class StateDirError(OSError):
    """The state directory (or a file in it) is unsafe; the message says what to do."""


def check(path: str) -> list[str]:
    """One line per problem: the directory, or a regular file directly in it, with any
    of group-write or other bits set (sockets are left alone: the control socket is
    0660 by design, inside the 0750 directory; so is the public key ``signing.pub``).

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); os.chmod(d, 0o750)
    >>> p = os.path.join(d, "journal.sqlite3"); open(p, "w").close(); os.chmod(p, 0o644)
    >>> for line in check(d): print(line.replace(d, "D"))
    D/journal.sqlite3: mode 0644 lets others read it (...): chmod 640 D/journal.sqlite3
    """
    out: list[str] = []
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        return [f"{path}: not a directory"]
    mode = stat.S_IMODE(st.st_mode)
    if mode & _TOO_WIDE:
        out.append(f"{path}: mode {mode:04o} lets others in (the journal holds unconfirmed "
                   f"cards): chmod {DIR_MODE:o} {path}")
    with os.scandir(path) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            try:
                est = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(est.st_mode) or entry.name in PUBLIC_FILES:
                continue
            fmode = stat.S_IMODE(est.st_mode)
            if fmode & _TOO_WIDE:
                out.append(f"{entry.path}: mode {fmode:04o} lets others read it (the "
                           f"journal holds unconfirmed cards): chmod {FILE_MODE:o} "
                           f"{entry.path}")
    return out


def prepare(path: str) -> None:
    """Set the umask (0027), create ``path`` 0750 if it is missing, and raise
    :class:`StateDirError` (the first problem, one line) if it or a file in it is wider
    than 0750 / 0640."""
    os.umask(UMASK)
    if not os.path.isdir(path):
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
        os.chmod(path, DIR_MODE)  # makedirs' mode is filtered by the umask
    problems = check(path)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise StateDirError(problems[0] + more)
