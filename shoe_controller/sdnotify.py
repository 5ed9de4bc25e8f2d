"""A tiny sd_notify: tell systemd READY=1, WATCHDOG=1 and STATUS= over $NOTIFY_SOCKET.

No dependency: the protocol is one datagram per message on a unix socket whose path
(or abstract name, when it starts with ``@``) systemd puts in ``$NOTIFY_SOCKET``.
Without that variable (not under systemd, or `simulate`) every call is a no-op.

>>> n = Notifier(env={})
>>> n.enabled, n.notify("READY=1")
(False, False)
>>> Notifier(env={"WATCHDOG_USEC": "20000000"}).watchdog_interval()
10.0
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

__all__ = ["Notifier"]


class Notifier:
    """One process's channel to systemd's notify socket."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        path = env.get("NOTIFY_SOCKET", "")
        self._address = "\0" + path[1:] if path.startswith("@") else path
        self._watchdog_usec = int(env.get("WATCHDOG_USEC", "0") or 0)
        self._sock: socket.socket | None = None

    @property
    def enabled(self) -> bool:
        return bool(self._address)

    def watchdog_interval(self) -> float | None:
        """Seconds between WATCHDOG=1 pings: half systemd's WatchdogSec, None if unset."""
        return self._watchdog_usec / 2e6 if self._watchdog_usec else None

    def notify(self, *lines: str) -> bool:
        """Send ``lines`` (e.g. "READY=1", "STATUS=...") as one message; True if sent.

        A failed send is swallowed: losing a status line must never stop the table.
        """
        if not self._address:
            return False
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto("\n".join(lines).encode(), self._address)
        except OSError:
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1", *( [f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={text}")

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
