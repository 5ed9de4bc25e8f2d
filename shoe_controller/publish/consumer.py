"""The reference consumer of the casino feed: what every casino system must check, as an
importable module (``shoe-controller feed verify | follow`` are thin shells over it).

Each message is checked on its own (:func:`check_message`): a JSON object of the
documented shape, on the right topic of the right table, signed by a pinned key
(:func:`shoe_controller.publish.payloads.verify_signed`), and, for an event, its hash
recomputed from its content. Across messages (:class:`FeedVerifier`): one table; seqs
contiguous per epoch with each ``prev_hash`` the previous ``hash``; a seq seen twice
with other bytes is a **fork**; an epoch other than the current one is **foreign**
unless a ``journal_started`` at seq 1 names the current one as its ``previous`` (and
then the old epoch must be complete up to the seq it names); a head beyond the last
event means events are **withheld**. Nothing raises on any payload: every problem is a
:class:`Finding`.

>>> from shoe_controller.keys import SigningKey
>>> from shoe_controller.journal import GENESIS, JournalEntry, chain_hash
>>> from shoe_controller.publish.payloads import casino_payload
>>> key = SigningKey.generate()
>>> def entry(seq, prev):
...     body = '{"shoe":1,"type":"fault"}'
...     h = chain_hash(prev, seq, "t", "fault", body)
...     return JournalEntry(seq, "t", "fault", body, prev, h)
>>> e1 = entry(1, GENESIS); e2 = entry(2, e1.hash); e3 = entry(3, e2.hash)
>>> v = FeedVerifier([key.public], table="T1")
>>> for e in (e1, e3):
...     _ = v.message("shoe/T1/casino/events", casino_payload(e, "T1", "ab" * 16, key))
>>> v.message("shoe/T1/casino/events", b"[]")[0].kind
'malformed'
>>> r = v.report(); r.ok, r.counts()
(False, {'gap': 1, 'malformed': 1})
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from shoe_controller.journal import GENESIS, canonical_json
from shoe_controller.publish.payloads import SignatureError, verify_signed

__all__ = [
    "KINDS",
    "Checked",
    "FeedVerifier",
    "Finding",
    "Report",
    "check_message",
    "parse_capture_line",
    "verify_capture",
]

#: Every kind of finding, in the order the summary names them.
KINDS = ("malformed", "bad_signature", "unsigned", "wrong_table", "wrong_topic",
         "bad_hash", "foreign_epoch", "fork", "chain", "reordered", "gap", "withheld")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_ENVELOPE_KEYS = {"seq", "type", "table", "shoe", "round", "time", "event", "hash",
                  "prev_hash", "epoch", "key_id", "sig"}
_HEAD_KEYS = {"table", "epoch", "seq", "hash", "time", "key_id", "sig"}
#: The most bytes of a message looked at (a casino envelope is well under 64 kB).
MAX_PAYLOAD = 1 << 20


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong with the feed: ``kind`` (one of :data:`KINDS`), where, what."""

    kind: str
    detail: str
    seq: int | None = None
    epoch: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "seq": self.seq, "epoch": self.epoch,
                "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Checked:
    """A message that passed the per-message checks: ``kind`` "event" or "head"."""

    kind: str
    message: dict[str, Any]
    payload: bytes


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _topic_parts(topic: str) -> tuple[str, str, str] | None:
    """``(prefix, table, what)`` of ``<prefix>/<table>/casino/<what...>``."""
    parts = topic.split("/")
    if len(parts) < 4 or "casino" not in parts[1:]:
        return None
    i = parts.index("casino", 1)
    if i < 2 or i + 1 >= len(parts):
        return None
    return "/".join(parts[:i - 1]), parts[i - 1], "/".join(parts[i + 1:])


def _shape(msg: dict[str, Any], head: bool) -> str | None:
    """What is wrong with the fields of an envelope or a head, or None."""
    keys = _HEAD_KEYS if head else _ENVELOPE_KEYS
    extra = set(msg) - keys - {"unsigned"}
    missing = keys - set(msg)
    if missing or extra:
        return (f"fields missing {sorted(missing)}" if missing else "") + \
               (f" unexpected {sorted(extra)[:5]}" if extra else "")
    if not _is_int(msg["seq"]) or msg["seq"] < (0 if head else 1):
        return "seq is not a positive integer"
    if not isinstance(msg["table"], str) or not isinstance(msg["time"], str):
        return "table and time must be strings"
    if not isinstance(msg["epoch"], str) or not _HEX32.match(msg["epoch"]):
        return "epoch is not 32 hex digits"
    if not isinstance(msg["hash"], str) or not _HEX64.match(msg["hash"]):
        return "hash is not 64 hex digits"
    if head:
        return None
    if not isinstance(msg["prev_hash"], str) or not _HEX64.match(msg["prev_hash"]):
        return "prev_hash is not 64 hex digits"
    ev = msg["event"]
    if not isinstance(ev, dict) or ev.get("type") != msg["type"] or \
            not isinstance(msg["type"], str):
        return "event is not an object of the envelope's type"
    return None


def check_message(topic: str, payload: bytes | str, keys: Iterable[Any], table: str | None
                  ) -> Checked | Finding:
    """One message of the casino feed (``.../casino/events``, ``.../casino/head`` or a
    replay response under ``.../casino/replay/response/``) checked on its own."""
    data = payload.encode("utf-8", "surrogateescape") if isinstance(payload, str) \
        else bytes(payload)
    parts = _topic_parts(topic) if isinstance(topic, str) else None
    if parts is None:
        return Finding("wrong_topic", f"not a casino feed topic: {str(topic)[:80]!r}")
    _prefix, topic_table, what = parts
    head = what == "head"
    if what == "replay":
        return Checked("replay_request", {}, data)  # a consumer's request: not the feed
    if not (head or what == "events" or what.startswith("replay/response/")):
        return Finding("wrong_topic", f"not an event or head topic: {topic[:80]!r}")
    if table is not None and topic_table != table:
        return Finding("wrong_topic", f"topic {topic[:80]!r} is of table {topic_table!r}, "
                                      f"not {table!r}")
    if len(data) > MAX_PAYLOAD:
        return Finding("malformed", f"{len(data)} bytes on {topic[:80]}")
    try:
        msg = json.loads(data)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        return Finding("malformed", f"not JSON ({type(exc).__name__}) on {topic[:80]}")
    if not isinstance(msg, dict):
        return Finding("malformed", f"a JSON {type(msg).__name__}, not an object, on "
                                    f"{topic[:80]}")
    if head is False and "replay" in msg and what.startswith("replay/"):
        return Checked("replay_done", msg, data)
    problem = _shape(msg, head)
    seq = msg.get("seq") if _is_int(msg.get("seq")) else None
    epoch = msg.get("epoch") if isinstance(msg.get("epoch"), str) else None
    if problem is not None:
        return Finding("malformed", f"{'head' if head else 'envelope'}: {problem}", seq)
    if msg.get("unsigned") is True or msg.get("sig") is None:
        return Finding("unsigned", "not signed (the device runs --unsigned)", seq, epoch)
    try:
        verify_signed(data, keys)
    except (SignatureError, ValueError, RecursionError) as exc:
        return Finding("bad_signature", str(exc)[:160], seq, epoch)
    if msg["table"] != topic_table or (table is not None and msg["table"] != table):
        return Finding("wrong_table", f"message of table {msg['table'][:40]!r} on "
                                      f"{topic[:80]}", seq, epoch)
    if not head:
        try:
            body = canonical_json(msg["event"])
        except (ValueError, RecursionError):
            return Finding("malformed", "event is not canonical JSON", seq, epoch)
        chained = f"{msg['prev_hash']}\n{seq}\n{msg['time']}\n{msg['type']}\n{body}"
        if hashlib.sha256(chained.encode()).hexdigest() != msg["hash"]:
            return Finding("bad_hash", "hash does not match the event", seq, epoch)
    return Checked("head" if head else "event", msg, data)


@dataclass
class _Epoch:
    epoch: str
    events: dict[int, tuple[bytes, dict[str, Any]]] = field(default_factory=dict)
    max_seen: int = 0
    head: tuple[int, str] | None = None
    #: the seq this epoch ended at, named by its successor's journal_started
    ended_at: int | None = None
    started_here: bool = False


@dataclass
class Report:
    """What :class:`FeedVerifier` found."""

    table: str | None
    epochs: list[dict[str, Any]]
    findings: list[Finding]
    verified: int
    duplicates: int
    messages: int

    @property
    def ok(self) -> bool:
        return not self.findings and self.verified > 0

    def counts(self) -> dict[str, int]:
        c = Counter(f.kind for f in self.findings)
        return {k: c[k] for k in sorted(c)}

    def summary(self) -> str:
        """The one-line summary."""
        span = "; ".join(f"epoch {e['epoch'][:8]} seq {e['first']}-{e['last']}"
                         + (f" head {e['head']}" if e["head"] is not None else "")
                         for e in self.epochs if e["first"] is not None) or "no events"
        c = Counter(f.kind for f in self.findings)
        if self.ok:
            return (f"OK: {self.verified} events of table {self.table} verified ({span}), "
                    f"{self.duplicates} duplicate(s) ignored")
        found = ", ".join(f"{c[k]} {k}" for k in KINDS if c[k])
        return (f"FAILED: {found or 'no verified event'}; {self.verified} events verified "
                f"of table {self.table} ({span}), {self.messages} message(s) read")

    def to_json(self) -> dict[str, Any]:
        c = Counter(f.kind for f in self.findings)
        return {"ok": self.ok, "table": self.table, "verified": self.verified,
                "duplicates": self.duplicates, "messages": self.messages,
                "epochs": self.epochs, "findings": {k: c[k] for k in KINDS},
                "details": [f.to_json() for f in self.findings[:1000]],
                "summary": self.summary()}


class FeedVerifier:
    """Checks a stream of casino-feed messages (a capture, or what a follower receives)
    against the pinned ``keys`` (:class:`shoe_controller.keys.PublicKey`)."""

    def __init__(self, keys: Iterable[Any], table: str | None = None) -> None:
        self.keys = list(keys)
        self.table = table
        self.findings: list[Finding] = []
        self._epochs: dict[str, _Epoch] = {}
        self._order: list[str] = []
        self.current: str | None = None
        self.duplicates = 0
        self.messages = 0

    def _find(self, f: Finding) -> list[Finding]:
        self.findings.append(f)
        return [f]

    def _epoch(self, epoch: str) -> _Epoch:
        if epoch not in self._epochs:
            self._epochs[epoch] = _Epoch(epoch)
            self._order.append(epoch)
        return self._epochs[epoch]

    def message(self, topic: str, payload: bytes | str) -> list[Finding]:
        """Feed one message; returns the findings it raised (also kept)."""
        self.messages += 1
        try:
            checked = check_message(topic, payload, self.keys, self.table)
        except Exception as exc:  # never crash on a payload: a bug here is a finding too
            return self._find(Finding("malformed", f"unexpected {type(exc).__name__}"))
        if isinstance(checked, Finding):
            return self._find(checked)
        if checked.kind in ("replay_done", "replay_request"):
            self.messages -= 1  # not part of the feed
            return []
        msg = checked.message
        if self.table is None:
            self.table = msg["table"]
        if checked.kind == "head":
            return self._head(msg)
        return self._event(msg, checked.payload)

    def _switch(self, msg: dict[str, Any]) -> bool:
        """Whether ``msg`` (of another epoch) starts the epoch that follows the current."""
        ev = msg["event"]
        prev = ev.get("previous") if isinstance(ev, dict) else None
        if not (msg["type"] == "journal_started" and msg["seq"] == 1
                and isinstance(prev, dict) and prev.get("epoch") == self.current
                and _is_int(prev.get("seq"))):
            return False
        old = self._epoch(self.current)  # type: ignore[arg-type]
        old.ended_at = prev["seq"]
        new = self._epoch(msg["epoch"])
        new.started_here = True
        self.current = msg["epoch"]
        have = old.events.get(prev["seq"])
        if have is not None and have[1]["hash"] != prev.get("hash"):
            self._find(Finding("fork", f"journal_started names seq {prev['seq']} of epoch "
                                       f"{old.epoch[:8]} with another hash", 1, new.epoch))
        beyond = [s for s in old.events if s > prev["seq"]]
        if beyond:
            self._find(Finding("fork", f"epoch {old.epoch[:8]} went on to seq {max(beyond)} "
                                       f"after its successor started at its seq "
                                       f"{prev['seq']}", max(beyond), old.epoch))
        return True

    def _event(self, msg: dict[str, Any], payload: bytes) -> list[Finding]:
        epoch, seq = msg["epoch"], msg["seq"]
        if self.current is None:
            self.current = epoch
        elif epoch != self.current and not (epoch not in self._epochs and self._switch(msg)):
            if epoch in self._epochs and self._order.index(epoch) < \
                    self._order.index(self.current):
                return self._find(Finding("foreign_epoch", f"an event of the earlier epoch "
                                  f"{epoch[:8]} after epoch {self.current[:8]} started",
                                  seq, epoch))
            return self._find(Finding("foreign_epoch", f"an event of epoch {epoch[:8]}, "
                                      f"which does not follow epoch {self.current[:8]}",
                                      seq, epoch))
        st = self._epoch(epoch)
        have = st.events.get(seq)
        if have is not None:
            if have[0] == payload:
                self.duplicates += 1
                return []
            return self._find(Finding("fork", "seq seen twice with different content", seq,
                                      epoch))
        out = []
        if seq < st.max_seen:
            out += self._find(Finding("reordered", f"arrived after seq {st.max_seen}", seq,
                                      epoch))
        st.max_seen = max(st.max_seen, seq)
        if st.head is not None and st.head[0] == seq and st.head[1] != msg["hash"]:
            out += self._find(Finding("fork", "the head names another hash for this seq",
                                      seq, epoch))
        st.events[seq] = (payload, msg)
        self._rotation(msg)
        return out

    def _rotation(self, msg: dict[str, Any]) -> None:
        """A verified ``key_rotated``: trust the new key it introduces from now on."""
        _adopt_rotation(msg, self.keys)

    def _head(self, msg: dict[str, Any]) -> list[Finding]:
        epoch, seq = msg["epoch"], msg["seq"]
        if self.current is None:
            self.current = epoch
        if epoch != self.current and epoch not in self._epochs:
            return self._find(Finding("foreign_epoch", f"a head of epoch {epoch[:8]}, which "
                                      f"does not follow epoch {self.current[:8]}", seq,
                                      epoch))
        st = self._epoch(epoch)
        have = st.events.get(seq)
        if have is not None and have[1]["hash"] != msg["hash"]:
            return self._find(Finding("fork", "the head names another hash for this seq",
                                      seq, epoch))
        # An older head is no finding by itself: a broker restarted from its persistence
        # retains the head it last saved. Its hash must still match (checked above).
        if st.head is None or seq >= st.head[0]:
            st.head = (seq, msg["hash"])
        return []

    def report(self) -> Report:
        """The findings of the whole stream so far, with the checks only the end can
        make (gaps, chain links, withheld tails)."""
        end: list[Finding] = []
        epochs = []
        verified = 0
        for name in self._order:
            st = self._epochs[name]
            seqs = sorted(st.events)
            first = 1 if st.started_here else (seqs[0] if seqs else None)
            last = max([*seqs, st.ended_at or 0]) if (seqs or st.ended_at) else None
            if first is not None and last is not None:
                missing = _ranges(s for s in range(first, last + 1) if s not in st.events)
                for a, b in missing:
                    end.append(Finding("gap", f"seq {a}-{b} missing", a, name))
                prev_hash: str | None = None
                for s in range(first, last + 1):
                    item = st.events.get(s)
                    if item is None:
                        prev_hash = None
                        continue
                    env = item[1]
                    want = GENESIS if s == 1 else prev_hash
                    if want is not None and env["prev_hash"] != want:
                        end.append(Finding("chain", "prev_hash is not the hash of the seq "
                                           "before", s, name))
                    prev_hash = env["hash"]
                    verified += 1
            top = max(seqs) if seqs else 0
            if st.head is not None and st.head[0] > max(top, st.ended_at or 0):
                end.append(Finding("withheld", f"the head says seq {st.head[0]} but the "
                                   f"last event is seq {top}", top + 1, name))
            epochs.append({"epoch": name, "first": first, "last": last,
                           "head": None if st.head is None else st.head[0],
                           "events": len(seqs)})
        return Report(self.table, epochs, self.findings + end, verified, self.duplicates,
                      self.messages)


def _adopt_rotation(msg: dict[str, Any], keys: list[Any]) -> None:
    """(a verified envelope) If it is a ``key_rotated`` endorsed by the key that signed
    it, add the new key to ``keys``."""
    if msg.get("type") != "key_rotated":
        return
    from shoe_controller.keys import check_rotation

    signer = next((k for k in keys if k.key_id == msg.get("key_id")), None)
    new = check_rotation(msg["event"], signer.public if hasattr(signer, "public")
                         else signer) if signer is not None else None
    if new is not None and all(k.key_id != new.key_id for k in keys):
        keys.append(new)


def _ranges(seqs: Iterable[int]) -> Iterator[tuple[int, int]]:
    start = prev = None
    for s in seqs:
        if start is None:
            start = prev = s
        elif s == prev + 1:  # type: ignore[operator]
            prev = s
        else:
            yield start, prev  # type: ignore[misc]
            start = prev = s
    if start is not None:
        yield start, prev  # type: ignore[misc]


def parse_capture_line(line: bytes) -> tuple[str, bytes] | None:
    """``topic payload`` as ``mosquitto_sub -v`` prints it (one line per message); None
    for a line without a space."""
    line = line.rstrip(b"\r\n")
    if b" " not in line:
        return None
    topic, payload = line.split(b" ", 1)
    return topic.decode("utf-8", "replace"), payload


def verify_capture(lines: Iterable[bytes], keys: Iterable[Any],
                   table: str | None = None) -> Report:
    """Check a capture (lines of ``mosquitto_sub -v``) of the casino feed."""
    v = FeedVerifier(keys, table)
    for line in lines:
        if not line.strip():
            continue
        parsed = parse_capture_line(line)
        if parsed is None:
            v.messages += 1
            v._find(Finding("malformed", f"not a 'topic payload' line: {line[:60]!r}"))
            continue
        v.message(*parsed)
    return v.report()


class Follower:
    """``feed follow``: a live, verified, gap-filled copy of one table's casino feed.

    Subscribes to ``casino/events`` and ``casino/head``; checks every message
    (:func:`check_message`); writes the events in seq order, each exactly once, as the
    JSON lines they arrived as (so the output verifies again with ``feed verify``);
    asks for what is missing (a gap before a buffered event, or up to the head) with an
    MQTT 5 replay request (one at a time, <= 10,000 events, answer on
    ``casino/replay/response/<client id>``); follows a new epoch when its
    ``journal_started`` names the current one, once the old one is complete. Findings
    (bad signatures, forks, foreign epochs...) go to ``on_finding`` and are never
    written out.
    """

    #: seconds a gap may stay open before it is asked for
    GAP_WAIT = 0.3
    #: seconds before an unanswered replay request is asked again
    REQUEST_TIMEOUT = 5.0

    def __init__(self, config: Any, table: str, keys: Iterable[Any], write: Any, *,
                 prefix: str = "shoe", from_seq: int = 1, epoch: str | None = None,
                 client_id: str | None = None, on_finding: Any = None) -> None:
        import secrets
        import threading

        self.config, self.table, self.keys = config, table, list(keys)
        self.prefix = prefix
        self.write = write
        self.on_finding = on_finding or (lambda f: None)
        self.client_id = client_id or f"feed-follow-{secrets.token_hex(4)}"
        base = f"{prefix}/{table}/casino"
        self.topics = (f"{base}/events", f"{base}/head")
        self.response_topic = f"{base}/replay/response/{self.client_id}"
        self.request_topic = f"{base}/replay"
        self.epoch = epoch
        self.next_seq = from_seq
        self.last_hash: str | None = None
        self.head: tuple[str, int] | None = None
        self.head_hashes: dict[int, str] = {}
        self.buffer: dict[int, tuple[bytes, dict[str, Any]]] = {}
        self.later: list[tuple[str, bytes]] = []  # the next epoch's, until this one ends
        self.successor: tuple[str, int] | None = None
        self.gap_since: float | None = None
        self.request: tuple[bytes, float] | None = None
        self.written = 0
        self.requests = 0
        self.findings: list[Finding] = []
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self.client: Any = None

    # -- the network ------------------------------------------------------------------

    def run(self, seconds: float | None = None) -> int:
        """Follow until :meth:`stop` (or ``seconds``); 0, or 1 when anything was found."""
        import time

        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        from shoe_controller.publish.mqtt import configure_client

        self._props = (Properties, PacketTypes)
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.client_id,
                        protocol=mqtt.MQTTv5)
        configure_client(c, self.config)
        c.reconnect_delay_set(1, 2)

        def on_connect(client: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
            if not getattr(reason, "is_failure", False):
                for t in (*self.topics, self.response_topic):
                    client.subscribe(t, qos=1)
                with self._lock:
                    self.request = None  # ask again on the new connection

        def on_message(_c: Any, _u: Any, msg: Any) -> None:
            self.receive(msg.topic, bytes(msg.payload))

        c.on_connect, c.on_message = on_connect, on_message
        self.client = c
        host, port, _tls = self.config.endpoint()
        c.connect_async(host, port, keepalive=15, clean_start=True)
        c.loop_start()
        deadline = None if seconds is None else time.monotonic() + seconds
        try:
            while not self._stop.wait(0.1):
                self.tick(time.monotonic())
                if deadline is not None and time.monotonic() >= deadline:
                    break
        finally:
            c.disconnect()
            c.loop_stop()
        return 1 if self.findings else 0

    def stop(self) -> None:
        self._stop.set()

    def _ask(self, a: int, b: int, now: float) -> None:
        import secrets

        if self.client is None or self.epoch is None:
            return
        Properties, PacketTypes = self._props
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = self.response_topic
        corr = secrets.token_bytes(8)
        props.CorrelationData = corr
        b = min(b, a + 9_999)
        payload = canonical_json({"epoch": self.epoch, "from_seq": a, "to_seq": b})
        self.client.publish(self.request_topic, payload.encode(), qos=1, properties=props)
        self.request = (corr, now)
        self.requests += 1

    # -- the logic (no network: tests drive it directly) ------------------------------

    def _finding(self, f: Finding) -> None:
        self.findings.append(f)
        self.on_finding(f)

    def receive(self, topic: str, payload: bytes) -> None:
        """One message from the broker (any thread). Never raises: paho's network
        thread calls it, and no payload may stop the follower."""
        try:
            self._receive(topic, payload)
        except Exception as exc:
            self._finding(Finding("malformed", f"unexpected {type(exc).__name__} on "
                                               f"{str(topic)[:80]}"))

    def _receive(self, topic: str, payload: bytes) -> None:
        with self._lock:
            checked = check_message(topic, payload, self.keys, self.table)
            if isinstance(checked, Finding):
                self._finding(checked)
                return
            if checked.kind == "replay_request":
                return
            if checked.kind == "replay_done":
                self.request = None
                err = checked.message.get("error")
                if err:
                    self._finding(Finding("gap", f"replay refused: {str(err)[:120]}"))
                return
            msg = checked.message
            if checked.kind == "head":
                if self.epoch is None:
                    self.epoch = msg["epoch"]
                if msg["epoch"] == self.epoch:
                    # older heads come back from a broker's persistence: keep the highest
                    if self.head is None or msg["seq"] >= self.head[1]:
                        self.head = (msg["epoch"], msg["seq"])
                    self.head_hashes[msg["seq"]] = msg["hash"]
                    self._check_head(msg["seq"])
                return
            self._event(msg, checked.payload, topic)

    def _event(self, msg: dict[str, Any], payload: bytes, topic: str) -> None:
        epoch, seq = msg["epoch"], msg["seq"]
        if self.epoch is None:
            self.epoch = epoch
        if epoch != self.epoch:
            ev = msg["event"]
            prev = ev.get("previous") if isinstance(ev, dict) else None
            if msg["type"] == "journal_started" and seq == 1 and isinstance(prev, dict) \
                    and prev.get("epoch") == self.epoch and _is_int(prev.get("seq")):
                self.successor = (epoch, prev["seq"])
                self.later.append((topic, payload))
                self._maybe_switch()
            elif self.successor is not None and epoch == self.successor[0]:
                self.later.append((topic, payload))
            else:
                self._finding(Finding("foreign_epoch", f"event of epoch {epoch[:8]}", seq,
                                      epoch))
            return
        if seq < self.next_seq:
            return  # already written (a duplicate, or a replay overlapping the feed)
        have = self.buffer.get(seq)
        if have is not None and have[0] != payload:
            self._finding(Finding("fork", "seq seen twice with different content", seq,
                                  epoch))
            return
        self.buffer[seq] = (payload, msg)
        _adopt_rotation(msg, self.keys)
        self._drain()

    def _drain(self) -> None:
        while self.next_seq in self.buffer:
            payload, msg = self.buffer.pop(self.next_seq)
            want = GENESIS if self.next_seq == 1 else self.last_hash
            if want is not None and msg["prev_hash"] != want:
                self._finding(Finding("chain", "prev_hash is not the hash of the seq before",
                                      self.next_seq, msg["epoch"]))
                return  # never write past a broken link
            self.write(payload)
            self.written += 1
            self.last_hash = msg["hash"]
            self.next_seq += 1
            self._check_head(self.next_seq - 1)
        self._maybe_switch()

    def _check_head(self, seq: int) -> None:
        """A head and the event written at its seq must agree (else a fork)."""
        want = self.head_hashes.get(seq)
        if want is not None and seq < self.next_seq and seq == self.next_seq - 1 \
                and self.last_hash is not None and want != self.last_hash:
            self._finding(Finding("fork", "the head names another hash for this seq", seq,
                                  self.epoch))
        if len(self.head_hashes) > 64:  # only recent heads matter
            for s in sorted(self.head_hashes)[:-32]:
                del self.head_hashes[s]

    def _maybe_switch(self) -> None:
        if self.successor is None or self.next_seq <= self.successor[1]:
            return
        self.epoch, _ = self.successor
        self.successor, self.next_seq, self.last_hash = None, 1, None
        self.buffer.clear()
        self.head = None
        self.head_hashes = {}
        later, self.later = self.later, []
        for topic, payload in later:
            self._receive(topic, payload)

    def missing(self) -> tuple[int, int] | None:
        """The range to ask for now, if any: up to the next buffered event, else up to
        the head (or the end the next epoch names)."""
        if self.epoch is None:
            return None
        if self.buffer:
            return self.next_seq, min(self.buffer) - 1
        target = self.head[1] if self.head is not None and self.head[0] == self.epoch else 0
        if self.successor is not None:
            target = max(target, self.successor[1])
        return (self.next_seq, target) if target >= self.next_seq else None

    def tick(self, now: float) -> None:
        """Every 0.1 s: ask for a gap that stayed open past GAP_WAIT."""
        with self._lock:
            gap = self.missing()
            if gap is None:
                self.gap_since = None
                return
            if self.gap_since is None:
                self.gap_since = now
            if self.request is not None and now - self.request[1] < self.REQUEST_TIMEOUT:
                return
            if now - self.gap_since >= self.GAP_WAIT:
                self._ask(gap[0], gap[1], now)
