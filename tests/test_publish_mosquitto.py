"""The example mosquitto set-up (systemd/mosquitto/) run for real: TLS, passwords, the
ACL separating the casino feed from the public display feed, WebSockets, the bridge."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from shoe_controller.journal import Journal
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.payloads import verify_casino_payload
from shoe_controller.publish.publisher import Publisher
from tests.support.broker import Mosquitto, free_port
from tests.support.example_broker import (
    EXAMPLES,
    USERS,
    Client,
    ExampleBroker,
    have_tools,
    install_secret,
    make_pki,
)
from tests.test_publish_helpers import eventually, fixed_key, shoe_batches

KEY = fixed_key(1)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not have_tools(), reason="needs openssl and mosquitto_passwd"),
]


def controller_config(eb: ExampleBroker, **kw) -> MqttConfig:
    """The controller as docs/deploy.md sets it up: user shoe-controller on the loopback
    listener, its password in a 0640 file."""
    pw = eb.dir / "controller.pw"
    pw.write_text(USERS["shoe-controller"][1] + "\n")
    install_secret(pw)
    return MqttConfig(url=f"mqtt://127.0.0.1:{eb.local}", username="shoe-controller",
                      password_file=str(pw), release="per_card", reconnect_min_delay=1,
                      reconnect_max_delay=2, **kw)


def publish_rounds(tmp: Path, config: MqttConfig, rounds: int = 2) -> tuple[Journal, int]:
    journal = Journal.open(tmp / "journal.sqlite3", table_id="T1")
    pub = Publisher(journal, config, "T1", key=KEY)
    pub.start()
    for batch in shoe_batches(4, max_rounds=rounds):
        pub.append(batch)
    assert pub.flush(20), f"not delivered: {pub.pending()} pending, {pub.last_error}"
    pub.stop()
    return journal, journal.last_seq


def on(client: Client, suffix: str) -> list[bytes]:
    return [p for t, p, _ in client.messages if t.endswith(suffix)]


def test_tls_passwords_and_the_acl_keep_the_casino_feed_private(tmp_path):
    with ExampleBroker() as eb:
        casino = Client(**eb.listener("tls"), user="casino")
        casino.subscribe("shoe/#")
        display = Client(**eb.listener("ws"), user="display")  # a display page
        display.subscribe("shoe/#")
        display.subscribe("shoe/T1/casino/events")          # asks explicitly: still nothing

        journal, last = publish_rounds(tmp_path, controller_config(eb))
        eventually(lambda: len(on(casino, "events")) >= last, what="the casino feed")
        eventually(lambda: on(display, "display/state") and on(display, "status"),
                   what="the public topics on a display")
        time.sleep(0.3)  # a leak, if any, would have arrived with the rest

        # the casino gets every event, signed, over TLS
        seqs = sorted({verify_casino_payload(p, KEY.public)["seq"] for p in on(casino, "events")})
        assert seqs == list(range(1, last + 1))
        # the display gets the public topics and never the casino feed
        topics = display.topics()
        assert "shoe/T1/display/state" in topics, topics
        assert "shoe/T1/status" in topics
        assert not any("casino" in t for t in topics), topics
        # nobody but the controller may write the public state
        assert not display.publish("shoe/T1/display/state", b'{"fake":true}', retain=True)
        state = json.loads(on(casino, "display/state")[-1])
        assert state["table"] == "T1" and "fake" not in state
        for c in (casino, display):
            c.close()
        journal.close()


def test_the_secured_listeners_refuse_strangers(tmp_path):
    with ExampleBroker() as eb:
        anon_tls = Client(**eb.listener("tls"))
        assert not anon_tls.connected.is_set()
        assert anon_tls.connect_reason is not None and "authori" in anon_tls.connect_reason
        anon_tls.close()
        # the controller with a wrong password cannot publish: the outbox keeps everything
        bad = eb.dir / "bad.pw"
        bad.write_text("wrong\n")
        install_secret(bad)
        cfg = MqttConfig(url=f"mqtt://127.0.0.1:{eb.local}", username="shoe-controller",
                         password_file=str(bad), reconnect_min_delay=1,
                         reconnect_max_delay=1)
        journal = Journal.open(tmp_path / "j.sqlite3", table_id="T1")
        pub = Publisher(journal, cfg, "T1", key=KEY)
        pub.start()
        pub.append([{"type": "shoe_started", "shoe": 1, "decks": 8}])
        eventually(lambda: "refused" in (pub.last_error or ""), what="the refusal")
        assert not pub.connected and pub.pending() == 2
        pub.stop()
        journal.close()


@pytest.fixture
def central_dir():
    """A folder mosquitto can read: pytest's own tmp_path lies under a 0700 folder, and
    mosquitto drops to its own user when started as root."""
    d = Path(tempfile.mkdtemp(prefix="mosquitto-central-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_the_bridge_forwards_the_feeds_to_a_central_broker(tmp_path, central_dir):
    # the central broker takes the bridge by its client certificate (CN = the bridge's
    # user), as the shipped bridge.conf is set up: no password in any file
    pki = make_pki(central_dir, client="shoe-bridge-T1")
    for path in pki.values():
        install_secret(path)
    central_port = free_port()
    central = Mosquitto(port=free_port())  # a plain loopback listener for the test's reader
    central.conf_path.write_text("\n".join([
        "per_listener_settings true",
        f"listener {central.port} 127.0.0.1",
        "allow_anonymous true",
        f"listener {central_port} 127.0.0.1",
        f"certfile {pki['server']}", f"keyfile {pki['server_key']}", f"cafile {pki['ca']}",
        "require_certificate true", "use_identity_as_username true",
        "allow_anonymous false", "",
    ]))
    with central, ExampleBroker() as eb:
        bridge = (EXAMPLES / "bridge.conf").read_text()
        bridge = bridge.replace("central.casino.lan:8883", f"127.0.0.1:{central_port}")
        bridge = bridge.replace("/etc/mosquitto/certs/central-ca.crt", str(pki["ca"]))
        bridge = bridge.replace("/etc/mosquitto/certs/bridge.crt", str(pki["client"]))
        bridge = bridge.replace("/etc/mosquitto/certs/bridge.key", str(pki["client_key"]))
        eb.broker.conf_path.write_text(eb.broker.conf_path.read_text() + "\n" + bridge)
        eb.broker.restart()
        reader = Client(central.port)
        reader.subscribe("shoe/#")
        reader.subscribe("$SYS/broker/connection/+/state")  # the bridge's notification
        eventually(lambda: any(t.startswith("$SYS/broker/connection/") and p == b"1"
                               for t, p, _ in reader.messages), what="the bridge to connect")
        journal, last = publish_rounds(tmp_path, controller_config(eb), rounds=1)
        eventually(lambda: len(on(reader, "casino/events")) >= last, 15, "the bridged feed")
        seqs = sorted({verify_casino_payload(p, KEY.public)["seq"] for p in on(reader, "events")})
        assert seqs == list(range(1, last + 1))
        assert on(reader, "display/state")
        # a central casino system's replay request comes in to the controller
        controller = Client(**eb.listener("local"), user="shoe-controller")
        controller.subscribe("shoe/T1/casino/replay")
        eventually(lambda: reader.publish("shoe/T1/casino/replay", b'{"from_seq":1}')
                   and on(controller, "casino/replay"), what="the bridged replay request")
        controller.close()
        reader.close()
        journal.close()
