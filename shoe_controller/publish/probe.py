"""Measuring the feed: when does each casino message reach a subscriber?

Used by ``bench/journal.py`` and reusable by ``bench/latency.py``: an
:class:`ArrivalRecorder` subscribes (MQTT 5, QoS 1) to a table's casino feed and stamps
each message's arrival with ``time.perf_counter()`` by ``seq``; compare with the
``perf_counter()`` taken when the card was read to get card-to-subscriber latency.
:func:`publish_latency` runs the whole path (journal append with fsync, release, sign,
outbox, MQTT) for single-card events against a broker and returns the latencies.

>>> percentiles([1.0, 2.0, 3.0, 4.0], (50, 100))
{50: 2.5, 100: 4.0}
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["ArrivalRecorder", "percentiles", "publish_latency"]


def percentiles(values: Sequence[float], which: Iterable[int] = (50, 99)) -> dict[int, float]:
    """Percentiles by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    out = {}
    for p in which:
        k = (len(ordered) - 1) * p / 100
        lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
        out[p] = ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
    return out


class ArrivalRecorder:
    """Subscribe to ``topic`` on ``host:port``; ``arrivals[seq] = perf_counter()`` of the
    first arrival of each casino envelope."""

    def __init__(self, host: str, port: int, topic: str) -> None:
        import json

        import paho.mqtt.client as mqtt

        self.arrivals: dict[int, float] = {}
        self._cond = threading.Condition()
        self._subscribed = threading.Event()

        def on_message(client: Any, userdata: Any, msg: Any) -> None:
            now = time.perf_counter()
            seq = json.loads(msg.payload)["seq"]
            with self._cond:
                self.arrivals.setdefault(seq, now)
                self._cond.notify_all()

        self._client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self._client.on_message = on_message
        self._client.on_subscribe = lambda *a: self._subscribed.set()
        self._client.connect(host, port)
        self._client.subscribe(topic, qos=1)
        self._client.loop_start()
        if not self._subscribed.wait(10):
            raise RuntimeError(f"could not subscribe to {topic} on {host}:{port}")

    def wait_for(self, seq: int, timeout: float = 10.0) -> float:
        """The arrival time of ``seq``, waiting for it; TimeoutError if it never comes."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while seq not in self.arrivals:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"seq {seq} did not arrive within {timeout} s")
                self._cond.wait(left)
            return self.arrivals[seq]

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


def publish_latency(host: str, port: int, n: int = 500, warmup: int = 20,
                    directory: str | None = None) -> list[float]:
    """Seconds from "card read" (just before the journal append) to arrival at a
    subscriber, for ``n`` single ``card_dealt`` events under ``per_card`` release.
    (The message is handed to paho inside the append call, right after the commit, so
    it may arrive before the call returns.)"""
    from shoe_controller.journal import Journal
    from shoe_controller.publish.config import MqttConfig
    from shoe_controller.publish.publisher import Publisher

    work = tempfile.mkdtemp(prefix="latency-", dir=directory)
    journal = Journal.open(os.path.join(work, "journal.sqlite3"), table_id="BENCH")
    config = MqttConfig(host=host, port=port, release="per_card", display_feed=False)
    publisher = Publisher(journal, config, "BENCH", hmac_key=b"bench")
    recorder = ArrivalRecorder(host, port, publisher.topics.casino_events)
    publisher.start()
    latencies = []
    try:
        for i in range(n + warmup):
            event = {"type": "card_dealt", "shoe": 1, "round": i + 1, "hand": "player",
                     "position": 1, "card": "QH", "orientation": None}
            t0 = time.perf_counter()
            (entry,) = publisher.append([event])
            arrived = recorder.wait_for(entry.seq)
            if i >= warmup:
                latencies.append(arrived - t0)
    finally:
        publisher.stop()
        recorder.close()
        journal.close()
    return latencies


def summary(latencies: Sequence[float]) -> str:
    """One line: count, p50, p99, max and mean in milliseconds."""
    p = percentiles(latencies, (50, 99))
    return (f"n={len(latencies)} p50={p[50] * 1e3:.2f} ms p99={p[99] * 1e3:.2f} ms "
            f"max={max(latencies) * 1e3:.2f} ms mean={statistics.fmean(latencies) * 1e3:.2f} ms")
