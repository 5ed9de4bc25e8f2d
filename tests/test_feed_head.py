"""The signed head on a real mosquitto (issue 13 point 4): retained on
``<prefix>/<table>/casino/head``, ``{table, epoch, seq, hash, time, key_id, sig}``,
published after every committed batch and at least every 5 s; checked against the
journal's rows and with `cryptography` alone, from the cut docs/mqtt.md describes."""

from __future__ import annotations

import hashlib
import json
import threading
import time

import paho.mqtt.client as mqtt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.head import open_table_journal
from shoe_controller.publish.publisher import Publisher
from tests.test_publish_helpers import fixed_key, shoe_batches

pytestmark = pytest.mark.e2e
KEY = fixed_key(52)
HEAD = "shoe/T1/casino/head"


class Heads:
    """A subscriber to the head: (arrival time, payload, retain flag)."""

    def __init__(self, port: int) -> None:
        self.got: list[tuple[float, bytes, bool]] = []
        self.cond = threading.Condition()
        ready = threading.Event()
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.c.on_message = self._message
        self.c.on_subscribe = lambda *_: ready.set()
        self.c.connect("127.0.0.1", port)
        self.c.loop_start()
        self.c.subscribe(HEAD, qos=1)
        assert ready.wait(5)

    def _message(self, _c, _u, msg) -> None:
        with self.cond:
            self.got.append((time.monotonic(), bytes(msg.payload), bool(msg.retain)))
            self.cond.notify_all()

    def wait(self, pred, timeout: float):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for item in self.got:
                    if pred(json.loads(item[1])):
                        return item
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def close(self) -> None:
        self.c.loop_stop()
        self.c.disconnect()


def _verify(payload: bytes) -> dict:
    """docs/mqtt.md, "Signatures": cut '"sig":"<hex>"' and one comma; the rest is the
    canonical JSON without sig; Ed25519 with the raw public key."""
    msg = json.loads(payload)
    sig = msg.pop("sig")
    cut = payload.replace(b'"sig":"' + sig.encode() + b'",', b"", 1)
    assert cut == json.dumps(msg, sort_keys=True, separators=(",", ":"),
                             ensure_ascii=False).encode()
    Ed25519PublicKey.from_public_bytes(KEY.public.raw).verify(bytes.fromhex(sig), cut)
    assert msg["key_id"] == hashlib.sha256(KEY.public.raw).hexdigest()[:32]
    return msg


def test_the_head_is_retained_and_signed_after_every_batch_and_every_5_s(broker, tmp_path):
    journal = open_table_journal(str(tmp_path / "journal.sqlite3"), "T1", key=KEY)
    pub = Publisher(journal, MqttConfig(url=broker.url, release="per_card",
                                        display_feed=False), "T1", key=KEY)
    heads = Heads(broker.port)
    late = None
    pub.start()
    try:
        for batch in shoe_batches(9, max_rounds=3):
            pub.append(batch)
            seq = journal.last_seq
            assert heads.wait(lambda h, s=seq: h["seq"] == s, 5), (
                f"no head for seq {seq} after its batch was committed")
        last = journal.last_seq
        entry = journal.entry(last)
        t_last, payload, _ = heads.wait(lambda h: h["seq"] == last, 1)
        msg = _verify(payload)
        assert set(msg) == {"table", "epoch", "seq", "hash", "time", "key_id"}
        assert (msg["table"], msg["epoch"], msg["hash"]) == ("T1", journal.epoch, entry.hash)
        # nothing more is committed: the head still comes again within 5 s
        again = heads.wait(lambda h: h["seq"] == last and h["time"] != msg["time"], 7)
        assert again is not None, "no head within 7 s of the last batch"
        assert again[0] - t_last <= 5.0 + 0.8, f"{again[0] - t_last:.2f} s between heads"
        _verify(again[1])
        # retained: a casino system that connects now gets it at once
        late = Heads(broker.port)
        got = late.wait(lambda h: True, 2)
        assert got is not None and got[2], "the head is not retained"
        assert json.loads(got[1])["seq"] == last
        _verify(got[1])
    finally:
        heads.close()
        if late is not None:
            late.close()
        pub.stop()
        journal.close()
