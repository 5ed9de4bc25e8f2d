"""The bytes that go on the wire: the signed casino envelope, the status, the display state.

Casino envelope (topic ``.../casino/events``), one per journaled event::

    {"seq": 42, "type": "card_dealt", "table": "T1", "shoe": 3, "round": 17,
     "time": "2026-11-30T04:28:12.123456Z", "event": {...the domain event...},
     "hash": "...", "prev_hash": "...", "hmac": "..."}

``hash``/``prev_hash`` are the journal's chain (``shoe_controller.journal.chain_hash``
over ``canonical_json(event)``); ``hmac`` is the lowercase hex HMAC-SHA256, keyed with
the table's key file, of the canonical JSON of the envelope *without* the ``hmac`` key.
Every payload is itself canonical JSON (sorted keys, no whitespace, UTF-8), so the same
journal row always gives byte-identical messages: a re-send is indistinguishable from
the first send, and consumers de-duplicate by ``seq``.

>>> from shoe_controller.journal import GENESIS, JournalEntry, chain_hash
>>> body = '{"decks":8,"shoe":1,"type":"shoe_started"}'
>>> t = "2026-11-30T04:00:00.000000Z"
>>> e = JournalEntry(1, t, "shoe_started", body, GENESIS,
...                  chain_hash(GENESIS, 1, t, "shoe_started", body))
>>> p = casino_payload(e, "T1", b"secret")
>>> env = verify_casino_payload(p, b"secret")
>>> env["seq"], env["round"], env["event"]["decks"]
(1, None, 8)
>>> verify_casino_payload(p, b"other key")
Traceback (most recent call last):
...
shoe_controller.publish.payloads.SignatureError: seq 1: HMAC does not match ...
"""

from __future__ import annotations

import hashlib
import hmac as _hmac
import json
from typing import Any

from shoe_controller.journal import JournalEntry, canonical_json, chain_hash

__all__ = [
    "SignatureError",
    "casino_envelope",
    "casino_payload",
    "display_payload",
    "sign",
    "status_payload",
    "verify_casino_payload",
]


class SignatureError(ValueError):
    """A casino message whose HMAC or hash does not check out."""


def casino_envelope(entry: JournalEntry, table: str) -> dict[str, Any]:
    """The envelope of one journal entry, without its ``hmac``."""
    event = entry.data
    return {
        "seq": entry.seq,
        "type": entry.type,
        "table": table,
        "shoe": event.get("shoe"),
        "round": event.get("round"),
        "time": entry.time,
        "event": event,
        "hash": entry.hash,
        "prev_hash": entry.prev_hash,
    }


def sign(envelope: dict[str, Any], key: bytes) -> str:
    """Hex HMAC-SHA256 of the canonical JSON of ``envelope`` minus any ``hmac`` key."""
    unsigned = {k: v for k, v in envelope.items() if k != "hmac"}
    return _hmac.new(key, canonical_json(unsigned).encode(), hashlib.sha256).hexdigest()


def casino_payload(entry: JournalEntry, table: str, key: bytes | None) -> bytes:
    """The message for ``.../casino/events``. Without a key ``hmac`` is null (unsigned)."""
    envelope = casino_envelope(entry, table)
    envelope["hmac"] = sign(envelope, key) if key is not None else None
    return canonical_json(envelope).encode()


def verify_casino_payload(payload: bytes | str, key: bytes) -> dict[str, Any]:
    """Check a received casino message: its HMAC and its own chain hash.

    Returns the envelope; raises :class:`SignatureError` saying what failed. (Chaining
    ``prev_hash`` to the previous ``seq``'s ``hash`` is the consumer's job across
    messages: see docs/mqtt.md.)
    """
    envelope = json.loads(payload)
    seq = envelope.get("seq")
    mac = envelope.get("hmac")
    if not isinstance(mac, str):
        raise SignatureError(f"seq {seq}: message is not signed")
    if not _hmac.compare_digest(mac, sign(envelope, key)):
        raise SignatureError(f"seq {seq}: HMAC does not match (wrong key or altered message)")
    body = canonical_json(envelope["event"])
    want = chain_hash(envelope["prev_hash"], seq, envelope["time"], envelope["type"], body)
    if want != envelope["hash"]:
        raise SignatureError(f"seq {seq}: hash does not match the event")
    return envelope  # type: ignore[no-any-return]


def status_payload(table: str, status: str, *, time: str | None = None,
                   reason: str | None = None) -> bytes:
    """Retained ``.../status``: ``online`` (on every connect) or ``offline`` (the last will
    and a clean stop).

    >>> status_payload("T1", "offline", reason="connection lost")
    b'{"reason":"connection lost","status":"offline","table":"T1","time":null}'
    """
    if status not in ("online", "offline"):
        raise ValueError(f"status must be online or offline, got {status!r}")
    return canonical_json({"status": status, "table": table, "time": time,
                           "reason": reason}).encode()


def display_payload(state: dict[str, Any]) -> bytes:
    """Retained ``.../display/state``: the display projection's payload as canonical JSON."""
    return canonical_json(state).encode()
