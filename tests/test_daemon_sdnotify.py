"""sd_notify over a real unix datagram socket, as systemd would listen on it."""

from __future__ import annotations

import socket
from pathlib import Path

from shoe_controller.sdnotify import Notifier


def test_messages_arrive_on_the_notify_socket(tmp_path: Path):
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(2)
        n = Notifier(env={"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "4000000"})
        assert n.enabled and n.watchdog_interval() == 2.0
        assert n.ready("shoe 1 round 3")
        assert sock.recv(1024) == b"READY=1\nSTATUS=shoe 1 round 3"
        assert n.watchdog()
        assert sock.recv(1024) == b"WATCHDOG=1"
        assert n.stopping()
        assert sock.recv(1024) == b"STOPPING=1"
        n.close()


def test_abstract_socket_names_are_supported():
    name = f"shoe-test-{id(object())}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        n = Notifier(env={"NOTIFY_SOCKET": "@" + name})
        assert n.status("hello")
        assert sock.recv(1024) == b"STATUS=hello"
        n.close()


def test_a_vanished_socket_never_raises(tmp_path: Path):
    n = Notifier(env={"NOTIFY_SOCKET": str(tmp_path / "gone")})
    assert n.watchdog() is False
