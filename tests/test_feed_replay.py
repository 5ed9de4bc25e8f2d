"""Replay requests (gap fill) against a real mosquitto: byte-identical answers, the
10,000-event bound, another epoch, beyond the head, a response topic outside the
table's replay/response/ folder, answered in the order asked."""

from __future__ import annotations

import json
import threading
import time

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from shoe_controller.journal import Journal
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.publisher import Publisher
from tests.test_publish_helpers import fixed_key, shoe_batches

pytestmark = pytest.mark.e2e
KEY = fixed_key(21)
RESP = "shoe/T1/casino/replay/response/tester"


class Asker:
    """A casino system: records (correlation, payload) of everything on its response
    topic, in arrival order, and the live feed."""

    def __init__(self, port: int) -> None:
        self.got: list[tuple[bytes, bytes]] = []
        self.feed: list[bytes] = []
        self.ready = threading.Event()
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.c.on_message = self._on_message
        self.c.on_subscribe = lambda *a: self.ready.set()
        self.c.connect("127.0.0.1", port)
        self.c.subscribe([(RESP, 1), ("shoe/T1/casino/events", 1),
                          ("shoe/elsewhere/#", 1)])
        self.c.loop_start()
        assert self.ready.wait(5)

    def _on_message(self, client, userdata, msg) -> None:
        corr = getattr(msg.properties, "CorrelationData", None) or b""
        if msg.topic == "shoe/T1/casino/events":
            self.feed.append(bytes(msg.payload))
        else:
            self.got.append((bytes(corr), bytes(msg.payload)))

    def ask(self, body: dict, corr: bytes, response: str = RESP) -> None:
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = response
        props.CorrelationData = corr
        self.c.publish("shoe/T1/casino/replay", json.dumps(body).encode(), qos=1,
                       properties=props).wait_for_publish(5)

    def done(self) -> list[dict]:
        return [json.loads(p) for _, p in self.got if b'"replay":"done"' in p]

    def close(self) -> None:
        self.c.loop_stop()
        self.c.disconnect()


def test_replay_requests_are_answered_in_order_byte_identical_and_bounded(broker, tmp_path):
    journal = Journal.open(tmp_path / "j.sqlite3", table_id="T1")
    pub = Publisher(journal, MqttConfig(url=broker.url, release="per_card",
                                        display_feed=False), "T1", key=KEY)
    asker = Asker(broker.port)
    pub.start()
    try:
        for batch in shoe_batches(4, max_rounds=4):
            pub.append(batch)
        assert pub.flush(20)
        deadline = time.monotonic() + 10
        while len({json.loads(p)["seq"] for p in asker.feed}) < journal.last_seq and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        live = {json.loads(p)["seq"]: p for p in asker.feed}
        last = journal.last_seq
        ep = journal.epoch
        asker.ask({"epoch": ep, "from_seq": 3, "to_seq": 12}, b"A")
        asker.ask({"epoch": "0" * 32, "from_seq": 1, "to_seq": 2}, b"B")
        asker.ask({"epoch": ep, "from_seq": 1, "to_seq": 10_001}, b"C")
        asker.ask({"epoch": ep, "from_seq": last + 1, "to_seq": last + 5}, b"D")
        asker.ask({"epoch": ep, "from_seq": last - 1, "to_seq": last + 50}, b"E")
        asker.ask({"epoch": ep, "from_seq": 1, "to_seq": 2}, b"F",
                  response="shoe/elsewhere/x")  # not under replay/response/: ignored
        asker.ask({"epoch": ep, "from_seq": "1", "to_seq": 2}, b"G")
        asker.ask({"epoch": ep, "from_seq": 1, "to_seq": 10_000}, b"H")  # the bound itself
        deadline = time.monotonic() + 30
        while len(asker.done()) < 7 and time.monotonic() < deadline:
            time.sleep(0.05)
        done = asker.done()
        assert [d["error"] is None for d in done] == [True, False, False, False, True,
                                                      False, True], done
        # answered in the order asked: the markers' correlation data A, B, C, D, E, G, H
        order = [c for c, p in asker.got if b'"replay":"done"' in p]
        assert order == [b"A", b"B", b"C", b"D", b"E", b"G", b"H"]
        assert "at most 10000" in done[2]["error"] and "epoch" in done[1]["error"]
        assert "beyond the head" in done[3]["error"]
        assert done[4]["to_seq"] == last and done[4]["count"] == 2  # clamped to the head
        assert done[6]["count"] == last  # 1..10000 asked, the journal has `last`
        # A's answer: seqs 3..12, each byte-identical to the live feed's message
        a = [p for c, p in asker.got if c == b"A" and b'"replay"' not in p]
        assert [json.loads(p)["seq"] for p in a] == list(range(3, 13))
        assert all(p == live[json.loads(p)["seq"]] for p in a)
        assert not any(c == b"F" for c, _ in asker.got)
    finally:
        asker.close()
        pub.stop()
        journal.close()
