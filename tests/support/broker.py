"""A real mosquitto broker on a free loopback port, for tests and benchmarks.

>>> with Mosquitto() as broker:          # doctest: +SKIP
...     broker.port                       # a free TCP port on 127.0.0.1
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def mosquitto_path() -> str:
    path = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.path.exists(
        "/usr/sbin/mosquitto") else None)
    if path is None:
        raise RuntimeError("mosquitto is not installed: apt-get install mosquitto (see .ci/run)")
    return path


class Mosquitto:
    """Start (and stop, restart) a private mosquitto on loopback.

    ``websockets=True`` adds a websockets listener on ``ws_port``. The broker keeps no
    persistence, so a restart is a clean broker: clients with persistent sessions must
    cope, which is exactly what the outage tests want.
    """

    def __init__(self, websockets: bool = False, port: int | None = None,
                 ws_port: int | None = None) -> None:
        self.port = port or free_port()
        self.ws_port = (ws_port or free_port()) if websockets else None
        self._dir = Path(tempfile.mkdtemp(prefix="mosquitto-"))
        self._proc: subprocess.Popen[bytes] | None = None
        conf = [
            "per_listener_settings false",
            "allow_anonymous true",
            f"listener {self.port} 127.0.0.1",
            "max_queued_messages 100000",
            "set_tcp_nodelay true",  # as systemd/mosquitto/shoe-controller.conf
        ]
        if self.ws_port:
            conf += [f"listener {self.ws_port} 127.0.0.1", "protocol websockets"]
        self.conf_path = self._dir / "mosquitto.conf"
        self.conf_path.write_text("\n".join(conf) + "\n")
        self.log_path = self._dir / "mosquitto.log"

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> Mosquitto:
        log = open(self.log_path, "ab")  # noqa: SIM115 (kept open for the child)
        self._proc = subprocess.Popen(
            [mosquitto_path(), "-c", str(self.conf_path)], stdout=log, stderr=log
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log_path.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("mosquitto did not start listening within 10 s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def restart(self, down_seconds: float = 0.0) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)
