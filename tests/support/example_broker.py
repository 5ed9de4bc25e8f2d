"""The shipped mosquitto set-up (systemd/mosquitto/) in a real mosquitto, for tests.

Only the paths (``/etc/mosquitto/...`` -> a temporary folder) and the ports (free
loopback ports) of a temporary copy are rewritten; the passwords are made with
``mosquitto_passwd`` and the certificates with ``openssl``, as docs/deploy.md says.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from tests.support.broker import Mosquitto, free_port

EXAMPLES = Path(__file__).resolve().parents[2] / "systemd" / "mosquitto"
#: user -> (password file, password); each user lives in its own listener's file
USERS: dict[str, tuple[str, str]] = {
    "shoe-controller": ("passwd.controller", "pw-controller"),
    "casino": ("passwd.casino", "pw-casino"),
    "display": ("passwd.display", "pw-display"),
}


def run(*cmd: str | Path) -> None:
    subprocess.run([str(c) for c in cmd], check=True, capture_output=True, timeout=60)


def have_tools() -> bool:
    return bool(shutil.which("openssl") and shutil.which("mosquitto_passwd"))


def make_pki(d: Path, client: str | None = None) -> dict[str, Path]:
    """A throw-away CA and a server certificate for 127.0.0.1 / localhost (EC keys);
    with ``client``, a client certificate with that CN too."""
    ca_key, ca_crt = d / "ca.key", d / "ca.crt"
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-nodes", "-keyout", ca_key, "-out", ca_crt, "-days", "2", "-subj", "/CN=test CA")
    out = {"ca": ca_crt}
    ext = d / "san.ext"
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, cn in (("server", "localhost"), ("client", client)):
        if cn is None:
            continue
        key, csr, crt = d / f"{name}.key", d / f"{name}.csr", d / f"{name}.crt"
        run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-keyout", key, "-out", csr, "-subj", f"/CN={cn}")
        run("openssl", "x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key,
            "-CAcreateserial", "-out", crt, "-days", "2", "-extfile", ext)
        out[name] = crt
        out[f"{name}_key"] = key
    return out


def install_secret(path: Path) -> None:
    """As docs/deploy.md: 0640, group mosquitto where that group exists (mosquitto drops
    to its own user when started as root, and must still read it)."""
    os.chmod(path, 0o640)
    with contextlib.suppress(LookupError, PermissionError):
        shutil.chown(path, group="mosquitto")


class ExampleBroker:
    """A mosquitto running systemd/mosquitto/shoe-controller.conf and acl, its paths moved
    to a temporary folder and its three listeners to free loopback ports.

    ``edit(conf)`` may change the config text further (a test's control case).
    """

    def __init__(self, edit: Callable[[str], str] | None = None) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="mosquitto-example-"))
        os.chmod(self.tmp, 0o755)  # pytest's tmp_path lies under a 0700 folder
        self.dir = self.tmp / "etc-mosquitto"
        (self.dir / "certs").mkdir(parents=True)
        for d in (self.dir, self.dir / "certs"):
            os.chmod(d, 0o755)
        pki = make_pki(self.dir / "certs")
        self.ca = pki["ca"]
        for path in pki.values():  # (certificates too: the umask may be 0027)
            install_secret(path)
        for user, (file, pw) in USERS.items():
            path = self.dir / file
            if not path.exists():  # the documented commands: an empty 0640 file first
                path.touch()
                install_secret(path)
            run("mosquitto_passwd", "-b", path, user, pw)
        shutil.copy(EXAMPLES / "acl", self.dir / "acl")
        install_secret(self.dir / "acl")
        self.local, self.tls, self.ws = free_port(), free_port(), free_port()
        conf = (EXAMPLES / "shoe-controller.conf").read_text()
        conf = conf.replace("/etc/mosquitto/", f"{self.dir}/")
        conf = conf.replace("listener 1883 127.0.0.1", f"listener {self.local} 127.0.0.1")
        conf = conf.replace("listener 8883", f"listener {self.tls} 127.0.0.1")
        conf = conf.replace("listener 9001", f"listener {self.ws} 127.0.0.1")
        if edit is not None:
            conf = edit(conf)
        self.broker = Mosquitto(port=self.local)
        self.broker.conf_path.write_text(conf)

    def listener(self, name: str) -> dict[str, Any]:
        """Connection settings of listener ``name`` (local, tls, ws) for :class:`Client`."""
        return {"local": {"port": self.local},
                "tls": {"port": self.tls, "tls_ca": self.ca},
                "ws": {"port": self.ws, "websockets": True}}[name]

    def __enter__(self) -> ExampleBroker:
        self.broker.start()
        for port in (self.tls, self.ws):
            _wait_port(port)
        return self

    def __exit__(self, *exc: object) -> None:
        self.broker.__exit__(*exc)
        shutil.rmtree(self.tmp, ignore_errors=True)


def _wait_port(port: int) -> None:
    import socket

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on {port}")


class Client:
    """An MQTT 5 client as ``user`` (its right password unless ``password`` is given;
    ``password=""`` claims the user with no password) on one listener."""

    def __init__(self, port: int, *, user: str | None = None, password: str | None = None,
                 tls_ca: Path | None = None, websockets: bool = False,
                 client_id: str = "", wait: bool = True) -> None:
        self.messages: list[tuple[str, bytes, bool]] = []
        self.acks: dict[int, bool] = {}
        self.connected = threading.Event()
        self.answered = threading.Event()
        self.subscribed = threading.Event()
        self.granted: list[Any] = []
        self.disconnects = 0
        self.connect_reason: str | None = None
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                             protocol=mqtt.MQTTv5,
                             transport="websockets" if websockets else "tcp")
        if user is not None:
            pw = USERS[user][1] if password is None and user in USERS else password
            self.c.username_pw_set(user, pw if pw else None)
        if tls_ca is not None:
            self.c.tls_set(ca_certs=str(tls_ca))
        self.c.on_message = lambda c, u, m: self.messages.append(
            (m.topic, bytes(m.payload), bool(m.retain)))
        self.c.on_connect = self._on_connect
        self.c.on_disconnect = self._on_disconnect
        self.c.on_publish = self._on_publish
        self.c.on_subscribe = self._on_subscribe
        self.c.reconnect_delay_set(60, 60)  # a refused client must not retry in the test
        try:
            self.c.connect("127.0.0.1", port)
        except OSError as exc:  # TLS handshake refused, connection reset
            self.connect_reason = f"connection failed: {exc}"
            self.answered.set()
            return
        self.c.loop_start()
        if wait:
            self.answered.wait(10)

    def _on_connect(self, client, userdata, flags, reason, properties) -> None:
        self.connect_reason = str(reason)
        if reason.is_failure:
            client.disconnect()  # no retry: the network thread ends
        else:
            self.connected.set()
        self.answered.set()

    def _on_disconnect(self, client, userdata, flags, reason, properties) -> None:
        if self.connected.is_set():
            self.disconnects += 1
        if self.connect_reason is None:
            self.connect_reason = f"disconnected: {reason}"
        self.answered.set()

    def _on_publish(self, client, userdata, mid, reason, properties) -> None:
        self.acks[mid] = not reason.is_failure

    def _on_subscribe(self, client, userdata, mid, reasons, properties) -> None:
        self.granted = list(reasons)
        self.subscribed.set()

    def subscribe(self, topic: str) -> None:
        assert self.connected.wait(10), f"not connected: {self.connect_reason}"
        self.subscribed.clear()
        self.c.subscribe(topic, qos=1)
        assert self.subscribed.wait(10), f"subscription to {topic} not acknowledged"

    def publish(self, topic: str, payload: bytes, retain: bool = False) -> bool:
        """Publish with QoS 1; True when the broker acknowledged it without failure."""
        info = self.c.publish(topic, payload, qos=1, retain=retain)
        deadline = time.monotonic() + 10
        while info.mid not in self.acks and time.monotonic() < deadline:
            time.sleep(0.01)
        assert info.mid in self.acks, f"no PUBACK for {topic}"
        return self.acks[info.mid]

    def topics(self) -> set[str]:
        return {t for t, _, _ in self.messages}

    def close(self) -> None:
        self.c.disconnect()  # first: it wakes the network thread, which then ends at once
        self.c.loop_stop()
