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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["ArrivalRecorder", "SubscriberProcess", "percentiles", "publish_latency"]


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


class _Arrivals:
    """``arrivals[seq]``: when each seq first arrived; :meth:`wait_for` one of them."""

    def __init__(self) -> None:
        self.arrivals: dict[int, float] = {}
        self._cond = threading.Condition()

    def _record(self, seq: int, at: float) -> bool:
        """Note ``seq`` arriving at ``at``; True if it is its first arrival."""
        with self._cond:
            first = seq not in self.arrivals
            if first:
                self.arrivals[seq] = at
            self._cond.notify_all()
        return first

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


class ArrivalRecorder(_Arrivals):
    """Subscribe to ``topic`` on ``host:port``; ``arrivals[seq] = perf_counter()`` of the
    first arrival of each casino envelope (also passed to ``on_arrival``)."""

    def __init__(self, host: str, port: int, topic: str,
                 on_arrival: Callable[[int, float], None] | None = None) -> None:
        import json

        import paho.mqtt.client as mqtt

        super().__init__()
        self._subscribed = threading.Event()

        def on_message(client: Any, userdata: Any, msg: Any) -> None:
            now = time.perf_counter()
            seq = json.loads(msg.payload)["seq"]
            if self._record(seq, now) and on_arrival is not None:
                on_arrival(seq, now)

        self._client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self._client.on_message = on_message
        self._client.on_subscribe = lambda *a: self._subscribed.set()
        self._client.connect(host, port)
        self._client.subscribe(topic, qos=1)
        self._client.loop_start()
        if not self._subscribed.wait(10):
            raise RuntimeError(f"could not subscribe to {topic} on {host}:{port}")

    def close(self) -> None:
        self._client.loop_stop()
        self._client.disconnect()


class SubscriberProcess(_Arrivals):
    """An :class:`ArrivalRecorder` in a process of its own, as a display or a casino
    system is: its network thread then takes no interpreter time from the process being
    measured (in the same process it does, and adds its wait to the figure). Arrival
    times are ``time.perf_counter()`` in the child: CLOCK_MONOTONIC on Linux, one clock
    for every process of the machine, so they compare with the parent's.
    Same interface as :class:`ArrivalRecorder`: ``arrivals``, ``wait_for(seq)``,
    ``close()``.
    """

    def __init__(self, host: str, port: int, topic: str) -> None:
        import subprocess
        import sys

        super().__init__()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "shoe_controller.publish.probe", host, str(port), topic],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        if self._proc.stdout.readline().strip() != "subscribed":
            self._proc.kill()
            raise RuntimeError(f"could not subscribe to {topic} on {host}:{port}")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            seq, at = line.split()
            self._record(int(seq), float(at))

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()  # the child exits at EOF
        try:
            self._proc.wait(5)
        except Exception:
            self._proc.kill()
        self._reader.join(5)


def _subscriber_main(host: str, port: int, topic: str) -> None:
    """The child of :class:`SubscriberProcess`: one line ``seq perf_counter`` per first
    arrival on stdout, until stdin closes."""
    import sys

    def report(seq: int, at: float) -> None:
        sys.stdout.write(f"{seq} {at!r}\n")
        sys.stdout.flush()

    recorder = ArrivalRecorder(host, port, topic, on_arrival=report)
    print("subscribed", flush=True)
    sys.stdin.read()
    recorder.close()


def publish_latency(host: str, port: int, n: int = 500, warmup: int = 20,
                    directory: str | None = None) -> list[float]:
    """Seconds from "card read" (just before the journal append) to arrival at a
    subscriber (a :class:`SubscriberProcess`), for ``n`` single ``card_dealt`` events
    under ``per_card`` release.
    (The message is handed to paho inside the append call, right after the commit, so
    it may arrive before the call returns.)"""
    from shoe_controller.journal import Journal
    from shoe_controller.keys import SigningKey
    from shoe_controller.publish.config import MqttConfig
    from shoe_controller.publish.publisher import Publisher

    work = tempfile.mkdtemp(prefix="latency-", dir=directory)
    journal = Journal.open(os.path.join(work, "journal.sqlite3"), table_id="BENCH")
    config = MqttConfig(host=host, port=port, release="per_card", display_feed=False)
    publisher = Publisher(journal, config, "BENCH", key=SigningKey.generate())
    recorder = SubscriberProcess(host, port, publisher.topics.casino_events)
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


if __name__ == "__main__":
    import sys

    _subscriber_main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
