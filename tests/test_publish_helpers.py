"""Helpers shared by the publish tests: a real shoe played through the game core, and an
MQTT subscriber that records everything. (Also tests that the helpers do what they say.)
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import paho.mqtt.client as mqtt

from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.inputs import CardSeen, ConfirmResult, CutCardSeen, NewShoe
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe

BUTTON_CONFIRM = Rules(confirm="button", decks=8)


def shoe_batches(seed: int, rules: Rules = BUTTON_CONFIRM, max_rounds: int | None = None,
                 cut_at: int = 380) -> Iterator[list]:
    """A properly shuffled shoe dealt by the tableau, the dealer confirming each result;
    yields the events of each input (one batch per input, as the daemon journals them)."""
    rng = random.Random(seed)
    cards = [c for _ in range(rules.decks) for c in ALL_CARDS]
    rng.shuffle(cards)
    shoe = Shoe(rules)
    yield list(shoe.apply(NewShoe()))
    rounds = 0
    for i, card in enumerate(cards):
        if i == cut_at:
            yield list(shoe.apply(CutCardSeen()))
        yield list(shoe.apply(CardSeen(card, orientation="up", source="test")))
        if shoe.state.awaiting_confirm:
            rounds += 1
            yield list(shoe.apply(ConfirmResult()))
            if max_rounds is not None and rounds >= max_rounds:
                return
        if shoe.state.phase == "ended":
            return


def shoe_events(seed: int, **kw: object) -> list:
    return [e for batch in shoe_batches(seed, **kw) for e in batch]  # type: ignore[arg-type]


@dataclass
class Recorder:
    """A real MQTT 5 subscriber on ``topic``; ``messages`` as (topic, payload, retain)."""

    port: int
    topic: str = "shoe/#"
    messages: list[tuple[str, bytes, bool]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.content_types: set[str | None] = set()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *a: self._subscribed.set()

    def _on_message(self, client, userdata, msg) -> None:
        with self._lock:
            self.messages.append((msg.topic, bytes(msg.payload), bool(msg.retain)))
            self.content_types.add(getattr(msg.properties, "ContentType", None))

    def start(self) -> Recorder:
        self.client.connect("127.0.0.1", self.port)
        self.client.subscribe(self.topic, qos=1)
        self.client.loop_start()
        assert self._subscribed.wait(5), "subscription not acknowledged"
        return self

    def stop(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()

    def on(self, suffix: str) -> list[bytes]:
        with self._lock:
            return [p for t, p, _ in self.messages if t.endswith(suffix)]

    def wait_for(self, predicate, timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.02)
        return predicate(self)


def eventually(condition, timeout: float = 10.0, what: str = "condition") -> None:
    """Wait until ``condition()`` is true (a loaded CI machine may be slow); fail after
    ``timeout`` seconds naming ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def test_a_shoe_is_dealt_to_the_end_with_confirmations():
    events = shoe_events(7)
    types = [e.type for e in events]
    assert types[0] == "shoe_started"
    assert types[-1] == "shoe_ended"
    results = [e for e in events if e.type == "round_result"]
    assert len(results) > 60
    assert types.count("result_confirmed") == len(results)


def test_the_recorder_records(broker):
    rec = Recorder(broker.port).start()
    pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    pub.connect("127.0.0.1", broker.port)
    pub.loop_start()
    pub.publish("shoe/x", b"hello", qos=1)
    assert rec.wait_for(lambda r: r.on("shoe/x") == [b"hello"], 5)
    pub.loop_stop()
    pub.disconnect()
    rec.stop()


def fixed_key(n: int = 1):
    """A deterministic Ed25519 signing key for tests (seed: the byte n, 32 times)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from shoe_controller.keys import PublicKey, SigningKey

    private = Ed25519PrivateKey.from_private_bytes(bytes([n]) * 32)
    from cryptography.hazmat.primitives import serialization
    raw = private.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
    return SigningKey(private, PublicKey(raw))
