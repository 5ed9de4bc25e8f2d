"""The start-time head check on a broker that binds client ids to users (issue 13).

systemd/mosquitto/ ships ``use_username_as_clientid true``: every connection of the
controller's user gets the client id ``shoe-controller``, the daemon's own. The start
check used to read the retained head over a clean-start connection of "its own"
(``<client_id>-head``), which on such a broker was the daemon's session, thrown away:
the replay requests casino systems had queued for the daemon while it was down were
lost. Now the check connects as the daemon (its session resumed), acknowledges only
the head and unsubscribes. A real mosquitto with a password file checks it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from shoe_controller.daemon import StartRefused, open_daemon_journal
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.publisher import Publisher
from tests.support.broker import Mosquitto
from tests.test_publish_helpers import fixed_key, shoe_batches

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(
    shutil.which("mosquitto_passwd") is None, reason="needs mosquitto_passwd")]
KEY = fixed_key(41)
RESP = "shoe/T1/casino/replay/response/casino"


def _broker(tmp_path) -> tuple[Mosquitto, str]:
    """A mosquitto with users (controller, casino) and client ids bound to them."""
    broker = Mosquitto()
    passwd = broker.conf_path.parent / "passwd"  # where mosquitto's own user can read it
    for i, (user, pw) in enumerate((("shoe-controller", "s3cret-c"), ("casino", "s3cret-k"))):
        subprocess.run(["mosquitto_passwd", "-b"] + (["-c"] if i == 0 else []) +
                       [str(passwd), user, pw], check=True, capture_output=True)
    os.chmod(passwd, 0o644)  # mosquitto drops to its own user when started as root
    os.chmod(broker.conf_path.parent, 0o755)
    broker.conf_path.write_text(
        "per_listener_settings false\n"
        f"listener {broker.port} 127.0.0.1\n"
        "allow_anonymous false\n"
        f"password_file {passwd}\n"
        "use_username_as_clientid true\n"
        "max_queued_messages 1000\n")
    secret = tmp_path / "controller.pw"
    secret.write_text("s3cret-c\n")
    os.chmod(secret, 0o600)
    return broker.start(), str(secret)


def _casino(port: int) -> tuple[mqtt.Client, list[dict]]:
    got: list[dict] = []
    ready = threading.Event()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    c.username_pw_set("casino", "s3cret-k")
    c.on_message = lambda _c, _u, m: got.append(json.loads(m.payload))
    c.on_subscribe = lambda *_: ready.set()
    c.connect("127.0.0.1", port)
    c.loop_start()
    c.subscribe(RESP, qos=1)
    assert ready.wait(5)
    return c, got


def test_the_start_check_leaves_the_replay_requests_queued_for_the_daemon(tmp_path):
    broker, secret = _broker(tmp_path)
    config = MqttConfig(url=broker.url, username="shoe-controller", password_file=secret,
                        release="per_card", display_feed=False)
    path = str(tmp_path / "journal.sqlite3")
    casino = None
    try:
        # a first run: the daemon publishes, then stops; its session (subscribed to
        # replay requests) stays on the broker
        journal = open_daemon_journal(path, "T1", config, KEY)
        pub = Publisher(journal, config, "T1", key=KEY)
        pub.start()
        for batch in shoe_batches(7, max_rounds=2):
            pub.append(batch)
        assert pub.flush(20)
        last = journal.last_seq
        pub.stop()
        journal.close()
        # while it is down, a casino system asks for seq 1..last (once: no re-asking)
        casino, got = _casino(broker.port)
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = RESP
        props.CorrelationData = b"while-down"
        casino.publish("shoe/T1/casino/replay", json.dumps(
            {"epoch": journal.epoch, "from_seq": 1, "to_seq": last}).encode(), qos=1,
            properties=props).wait_for_publish(5)
        # the next start: the head check (over the broker, as the daemon), then the daemon
        journal = open_daemon_journal(path, "T1", config, KEY)
        pub = Publisher(journal, config, "T1", key=KEY)
        pub.start()
        try:
            deadline = time.monotonic() + 8
            while not any(m.get("replay") == "done" for m in got) and \
                    time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            pub.stop()
            journal.close()
        done = [m for m in got if m.get("replay") == "done"]
        assert done, "the request queued while the daemon was down was never answered"
        assert done[0]["count"] == last and done[0]["error"] is None, done
        assert sorted(m["seq"] for m in got if "seq" in m) == list(range(1, last + 1))
    finally:
        if casino is not None:
            casino.loop_stop()
            casino.disconnect()
        broker.stop()


def test_the_start_check_still_refuses_a_journal_behind_the_brokers_head(tmp_path):
    """The same connection still reads the retained head: a journal restored from an
    older copy (head file and all) is refused by the broker's head."""
    broker, secret = _broker(tmp_path)
    config = MqttConfig(url=broker.url, username="shoe-controller", password_file=secret,
                        release="per_card", display_feed=False)
    state = tmp_path / "state"
    state.mkdir()
    path = str(state / "journal.sqlite3")
    try:
        journal = open_daemon_journal(path, "T1", config, KEY)
        pub = Publisher(journal, config, "T1", key=KEY)
        pub.start()
        batches = list(shoe_batches(8, max_rounds=3))
        pub.append(batches[0])
        assert pub.flush(20)
        pub.stop()
        journal.close()
        backup = tmp_path / "backup"
        shutil.copytree(state, backup)
        journal = open_daemon_journal(path, "T1", config, KEY)
        pub = Publisher(journal, config, "T1", key=KEY)
        pub.start()
        for batch in batches[1:]:
            pub.append(batch)
        assert pub.flush(20)
        pub.stop()
        journal.close()
        with pytest.raises(StartRefused, match="the head retained on the broker"):
            open_daemon_journal(str(backup / "journal.sqlite3"), "T1", config, KEY)
    finally:
        broker.stop()
