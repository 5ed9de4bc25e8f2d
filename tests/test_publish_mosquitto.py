"""The example mosquitto set-up (systemd/mosquitto/) run for real: TLS, passwords, the
ACL separating the casino feed from the public display feed, WebSockets, the bridge."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from shoe_controller.journal import Journal
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.payloads import verify_casino_payload
from shoe_controller.publish.publisher import Publisher
from tests.support.broker import Mosquitto, free_port
from tests.test_publish_helpers import eventually, shoe_batches

EXAMPLES = Path(__file__).resolve().parents[1] / "systemd" / "mosquitto"
KEY = b"acl test key"
USERS = {"shoe-controller": "pw-controller", "casino": "pw-casino", "display": "pw-display",
         "shoe-bridge-T1": "pw-bridge"}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("openssl") is None or shutil.which("mosquitto_passwd")
                       is None, reason="needs openssl and mosquitto_passwd (mosquitto)"),
]


def run(*cmd: str | Path) -> None:
    subprocess.run([str(c) for c in cmd], check=True, capture_output=True, timeout=60)


def make_pki(d: Path) -> dict[str, Path]:
    """A throw-away CA and a server certificate for 127.0.0.1 / localhost (EC keys)."""
    ca_key, ca_crt = d / "ca.key", d / "ca.crt"
    key, csr, crt = d / "server.key", d / "server.csr", d / "server.crt"
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-nodes", "-keyout", ca_key, "-out", ca_crt, "-days", "2", "-subj", "/CN=test CA")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", key, "-out", csr, "-subj", "/CN=localhost")
    ext = d / "san.ext"
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key,
        "-CAcreateserial", "-out", crt, "-days", "2", "-extfile", ext)
    return {"ca": ca_crt, "crt": crt, "key": key}


def make_passwd(path: Path) -> None:
    first = True
    for user, pw in USERS.items():
        run("mosquitto_passwd", *(["-c"] if first else []), "-b", path, user, pw)
        first = False


@pytest.fixture
def tmp_path():
    """A folder mosquitto can read: pytest's own tmp_path lies under a 0700 folder, and
    mosquitto drops to its own user when started as root."""
    d = Path(tempfile.mkdtemp(prefix="mosquitto-example-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def readable(d: Path) -> None:
    """mosquitto drops to its own user when started as root: let it read the files."""
    os.chmod(d, 0o755)
    for p in d.iterdir():
        os.chmod(p, 0o644)


class ExampleBroker:
    """A mosquitto running systemd/mosquitto/shoe-controller.conf with its paths and ports
    moved to a temporary folder and free loopback ports."""

    def __init__(self, tmp: Path) -> None:
        self.dir = tmp / "etc-mosquitto"
        (self.dir / "certs").mkdir(parents=True)
        os.chmod(self.dir, 0o755)
        pki = make_pki(self.dir / "certs")
        self.ca = pki["ca"]
        make_passwd(self.dir / "passwd")
        shutil.copy(EXAMPLES / "acl", self.dir / "acl")
        readable(self.dir)
        readable(self.dir / "certs")
        self.local, self.tls, self.ws = free_port(), free_port(), free_port()
        conf = (EXAMPLES / "shoe-controller.conf").read_text()
        conf = conf.replace("/etc/mosquitto/", f"{self.dir}/")
        conf = conf.replace("listener 1883 127.0.0.1", f"listener {self.local} 127.0.0.1")
        conf = conf.replace("listener 8883", f"listener {self.tls} 127.0.0.1")
        conf = conf.replace("listener 9001", f"listener {self.ws} 127.0.0.1")
        self.broker = Mosquitto(port=self.local)
        self.broker.conf_path.write_text(conf)

    def __enter__(self) -> ExampleBroker:
        self.broker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.broker.__exit__(*exc)


class Client:
    """A subscriber/publisher as a given user on a given listener."""

    def __init__(self, port: int, *, user: str | None = None, tls_ca: Path | None = None,
                 websockets: bool = False) -> None:
        self.messages: list[tuple[str, bytes]] = []
        self.refused: list[str] = []
        self.acks: list[bool] = []
        self.connected = threading.Event()
        self.subscribed = threading.Event()
        self.connect_reason: str | None = None
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                             transport="websockets" if websockets else "tcp")
        if user is not None:
            self.c.username_pw_set(user, USERS[user])
        if tls_ca is not None:
            self.c.tls_set(ca_certs=str(tls_ca))
        self.c.on_message = lambda c, u, m: self.messages.append((m.topic, bytes(m.payload)))
        self.c.on_connect = self._on_connect
        self.c.on_publish = lambda c, u, mid, rc, p: self.acks.append(not rc.is_failure)
        self.c.on_subscribe = lambda *a: self.subscribed.set()
        self.c.connect("127.0.0.1", port)
        self.c.loop_start()

    def _on_connect(self, client, userdata, flags, reason, properties) -> None:
        self.connect_reason = str(reason)
        if not reason.is_failure:
            self.connected.set()

    def subscribe(self, topic: str) -> None:
        assert self.connected.wait(10), f"not connected: {self.connect_reason}"
        self.subscribed.clear()
        self.c.subscribe(topic, qos=1)
        assert self.subscribed.wait(10), f"subscription to {topic} not acknowledged"

    def on(self, suffix: str) -> list[bytes]:
        return [p for t, p in self.messages if t.endswith(suffix)]

    def close(self) -> None:
        self.c.loop_stop()
        self.c.disconnect()


def controller_config(eb: ExampleBroker, **kw) -> MqttConfig:
    pw = eb.dir / "controller.pw"
    pw.write_text(USERS["shoe-controller"] + "\n")
    return MqttConfig(url=f"mqtts://127.0.0.1:{eb.tls}", ca_file=str(eb.ca),
                      username="shoe-controller", password_file=str(pw),
                      release="per_card", reconnect_min_delay=1, reconnect_max_delay=2, **kw)


def publish_rounds(tmp: Path, config: MqttConfig, rounds: int = 2) -> tuple[Journal, int]:
    journal = Journal.open(tmp / "journal.sqlite3", table_id="T1")
    pub = Publisher(journal, config, "T1", hmac_key=KEY)
    pub.start()
    for batch in shoe_batches(4, max_rounds=rounds):
        pub.append(batch)
    assert pub.flush(20), f"not delivered: {pub.pending()} pending, {pub.last_error}"
    pub.stop()
    return journal, journal.last_seq


def test_tls_passwords_and_the_acl_keep_the_casino_feed_private(tmp_path):
    with ExampleBroker(tmp_path) as eb:
        casino = Client(eb.tls, user="casino", tls_ca=eb.ca)
        casino.subscribe("shoe/#")
        display_ws = Client(eb.ws, websockets=True)          # anonymous display page
        display_ws.subscribe("shoe/#")
        display_ws.subscribe("shoe/T1/casino/events")        # asks explicitly: still nothing
        display_tls = Client(eb.tls, user="display", tls_ca=eb.ca)
        display_tls.subscribe("shoe/#")

        journal, last = publish_rounds(tmp_path, controller_config(eb))
        eventually(lambda: len(casino.on("events")) >= last, what="the casino feed")
        for display in (display_ws, display_tls):
            eventually(lambda d=display: d.on("display/state") and d.on("status"),
                       what="the public topics on a display")
        time.sleep(0.3)  # a leak, if any, would have arrived with the rest

        # the casino gets every event, signed, over TLS
        seqs = sorted({verify_casino_payload(p, KEY)["seq"] for p in casino.on("events")})
        assert seqs == list(range(1, last + 1))
        # the displays get the public topics and never the casino feed
        for display in (display_ws, display_tls):
            topics = {t for t, _ in display.messages}
            assert "shoe/T1/display/state" in topics, topics
            assert "shoe/T1/status" in topics
            assert not any("casino" in t for t in topics), topics
        # nobody but the controller may write the public state
        display_ws.c.publish("shoe/T1/display/state", b'{"fake":true}', qos=1, retain=True)
        eventually(lambda: display_ws.acks, what="the broker's answer to the display")
        assert display_ws.acks == [False]
        state = json.loads(casino.on("display/state")[-1])
        assert state["table"] == "T1" and "fake" not in state
        for c in (casino, display_ws, display_tls):
            c.close()
        journal.close()


def test_the_secured_listeners_refuse_strangers(tmp_path):
    with ExampleBroker(tmp_path) as eb:
        anon_tls = Client(eb.tls, tls_ca=eb.ca)
        eventually(lambda: anon_tls.connect_reason is not None, what="the CONNACK")
        assert not anon_tls.connected.is_set()
        assert anon_tls.connect_reason is not None and "authori" in anon_tls.connect_reason
        anon_tls.close()
        # the controller with a wrong password cannot publish: the outbox keeps everything
        bad = eb.dir / "bad.pw"
        bad.write_text("wrong\n")
        cfg = MqttConfig(url=f"mqtts://127.0.0.1:{eb.tls}", ca_file=str(eb.ca),
                         username="shoe-controller", password_file=str(bad),
                         reconnect_min_delay=1, reconnect_max_delay=1)
        journal = Journal.open(tmp_path / "j.sqlite3", table_id="T1")
        pub = Publisher(journal, cfg, "T1", hmac_key=KEY)
        pub.start()
        pub.append([{"type": "shoe_started", "shoe": 1, "decks": 8}])
        eventually(lambda: "refused" in (pub.last_error or ""), what="the refusal")
        assert not pub.connected and pub.pending() == 2
        pub.stop()
        journal.close()


def test_the_bridge_forwards_the_feeds_to_a_central_broker(tmp_path):
    central_dir = tmp_path / "central"
    central_dir.mkdir()
    pki = make_pki(central_dir)
    make_passwd(central_dir / "passwd")
    readable(central_dir)
    central_port = free_port()
    central = Mosquitto(port=free_port())  # a plain loopback listener for the test's reader
    central.conf_path.write_text("\n".join([
        "per_listener_settings true",
        f"listener {central.port} 127.0.0.1",
        "allow_anonymous true",
        f"listener {central_port} 127.0.0.1",
        f"certfile {pki['crt']}", f"keyfile {pki['key']}", f"cafile {pki['ca']}",
        "allow_anonymous false", f"password_file {central_dir / 'passwd'}", "",
    ]))
    with central, ExampleBroker(tmp_path) as eb:
        bridge = (EXAMPLES / "bridge.conf").read_text()
        bridge = bridge.replace("central.casino.lan:8883", f"127.0.0.1:{central_port}")
        bridge = bridge.replace("/etc/mosquitto/certs/central-ca.crt", str(pki["ca"]))
        bridge = bridge.replace("remote_password change-me",
                                f"remote_password {USERS['shoe-bridge-T1']}")
        eb.broker.conf_path.write_text(eb.broker.conf_path.read_text() + "\n" + bridge)
        eb.broker.restart()
        reader = Client(central.port)
        reader.subscribe("shoe/#")
        reader.subscribe("$SYS/broker/connection/+/state")  # the bridge's notification
        eventually(lambda: any(t.startswith("$SYS/broker/connection/") and p == b"1"
                               for t, p in reader.messages), what="the bridge to connect")
        journal, last = publish_rounds(tmp_path, controller_config(eb), rounds=1)
        eventually(lambda: len(reader.on("casino/events")) >= last, 15, "the bridged feed")
        seqs = sorted({verify_casino_payload(p, KEY)["seq"] for p in reader.on("events")})
        assert seqs == list(range(1, last + 1))
        assert reader.on("display/state")
        reader.close()
        journal.close()
