"""Gap fill: answer MQTT 5 replay requests on ``<prefix>/<table>/casino/replay``.

A casino system that misses events (a broker lost them, it was away too long) publishes
``{"epoch": E, "from_seq": A, "to_seq": B}`` with an MQTT 5 Response Topic (under
``<prefix>/<table>/casino/replay/response/``, so the broker ACL that guards the casino
feed guards the answers too) and Correlation Data. The daemon answers on that topic,
each message carrying the request's Correlation Data:

1. the journal's envelopes A..B, byte-identical to what the feed carried (the same row
   gives the same bytes: canonical JSON, deterministic Ed25519), never past the head
   (what the release policy still holds back is not replayed);
2. then one ``{"replay": "done", "epoch", "from_seq", "to_seq", "count", "error"}``:
   ``to_seq`` as answered (clamped to the head), or ``error`` saying why nothing was
   sent (another epoch, a bad range, more than :data:`MAX_EVENTS`, beyond the head...).

Requests are answered one at a time, in the order they arrived, on a thread of their
own (at most :data:`MAX_QUEUED` wait; more are refused with ``error: busy``), paced by the
broker's acknowledgements, so a replay never holds up the live feed or the game.

>>> parse_request(b'{"epoch":"ab","from_seq":1,"to_seq":5}', "ab")
(1, 5)
>>> parse_request(b'{"epoch":"cd","from_seq":1,"to_seq":5}', "ab")
Traceback (most recent call last):
...
ValueError: epoch cd is not this journal's (ab)
>>> parse_request(b'{"epoch":"ab","from_seq":1,"to_seq":20000}', "ab")
Traceback (most recent call last):
...
ValueError: at most 10000 events per request (asked 20000)
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from shoe_controller.journal import Journal, canonical_json
from shoe_controller.publish.payloads import casino_payload
from shoe_controller.publish.topics import Topics

__all__ = ["MAX_EVENTS", "MAX_QUEUED", "ReplayServer", "done_payload", "parse_request"]

log = logging.getLogger("shoe_controller.publish")

#: The most events one request may ask for.
MAX_EVENTS = 10_000
#: Requests waiting beyond this are refused (``busy``).
MAX_QUEUED = 64
#: Wait for the broker's acknowledgement of every this many messages (pacing).
_PACE = 100


def parse_request(payload: bytes, epoch: str) -> tuple[int, int]:
    """``(from_seq, to_seq)`` of a replay request, or ValueError saying what is wrong."""
    if len(payload) > 4096:
        raise ValueError("request too large")
    try:
        req = json.loads(payload)
    except (ValueError, RecursionError):
        raise ValueError("not JSON") from None
    if not isinstance(req, dict) or set(req) != {"epoch", "from_seq", "to_seq"}:
        raise ValueError("a request is {\"epoch\", \"from_seq\", \"to_seq\"}")
    a, b = req["from_seq"], req["to_seq"]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b)):
        raise ValueError("from_seq and to_seq must be integers")
    if req["epoch"] != epoch:
        raise ValueError(f"epoch {str(req['epoch'])[:40]} is not this journal's ({epoch})")
    if a < 1 or b < a:
        raise ValueError("need 1 <= from_seq <= to_seq")
    if b - a + 1 > MAX_EVENTS:
        raise ValueError(f"at most {MAX_EVENTS} events per request (asked {b - a + 1})")
    return a, b


def done_payload(epoch: str | None, a: int | None, b: int | None, count: int,
                 error: str | None) -> bytes:
    """The last message of an answer.

    >>> done_payload("ab", 1, 5, 5, None)
    b'{"count":5,"epoch":"ab","error":null,"from_seq":1,"replay":"done","to_seq":5}'
    """
    return canonical_json({"replay": "done", "epoch": epoch, "from_seq": a, "to_seq": b,
                           "count": count, "error": error}).encode()


class ReplayServer:
    """Answers replay requests from ``journal`` through ``link`` (an MqttLink), signing
    with ``key`` (a :class:`shoe_controller.keys.Keyring`, or None: unsigned);
    ``head()`` gives the last released seq (nothing beyond it is replayed)."""

    def __init__(self, journal: Journal, topics: Topics, epoch: str, key: Any | None,
                 head: Callable[[], int]) -> None:
        self.journal, self.topics, self.epoch, self.key = journal, topics, epoch, key
        self._head = head
        self.link: Any = None
        self._queue: queue.Queue[tuple[str, bytes, bytes | None] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.answered = 0

    def start(self, link: Any) -> None:
        self.link = link
        self._thread = threading.Thread(target=self._run, name="mqtt-replay", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def on_message(self, topic: str, payload: bytes, properties: Any) -> None:
        """(the network thread) Queue a request; refuse at once what cannot be answered."""
        if topic != self.topics.casino_replay:
            return
        response = getattr(properties, "ResponseTopic", None)
        correlation = getattr(properties, "CorrelationData", None)
        if not isinstance(response, str) or not response.startswith(
                self.topics.replay_responses) or any(c in response for c in "+#\0"):
            log.warning("replay request without a Response Topic under %s: ignored",
                        self.topics.replay_responses)
            return
        if self._queue.qsize() >= MAX_QUEUED:
            self._send(response, done_payload(self.epoch, None, None, 0, "busy"),
                       correlation)
            return
        self._queue.put((response, payload, correlation))

    def _send(self, topic: str, payload: bytes, correlation: bytes | None) -> Any:
        return self.link.publish_response(topic, payload, correlation)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self._answer(*item)
            except Exception:  # never let one request stop the others
                log.exception("replay request failed")

    def _answer(self, response: str, payload: bytes, correlation: bytes | None) -> None:
        try:
            a, b = parse_request(payload, self.epoch)
        except ValueError as exc:
            self._send(response, done_payload(self.epoch, None, None, 0, str(exc)),
                       correlation)
            return
        head = self._head()
        if a > head:
            self._send(response, done_payload(self.epoch, a, b, 0,
                                              f"from_seq {a} is beyond the head ({head})"),
                       correlation)
            return
        b = min(b, head)
        count, last = 0, None
        for entry in self.journal.replay(a, b):
            key = None if self.key is None else self.key.for_seq(entry.seq)
            info = self._send(response, casino_payload(entry, self.topics.table, self.epoch,
                                                       key), correlation)
            count += 1
            if count % _PACE == 0:
                _wait(info)
            last = info
        if last is not None:
            _wait(last)
        self._send(response, done_payload(self.epoch, a, b, count, None), correlation)
        self.answered += 1
        log.info("replay: seq %d-%d (%d events) to %s", a, b, count, response)


def _wait(info: Any, timeout: float = 10.0) -> None:
    """Wait for the broker's acknowledgement (pacing); a lost connection just ends it."""
    with contextlib.suppress(RuntimeError, ValueError):
        info.wait_for_publish(timeout)
