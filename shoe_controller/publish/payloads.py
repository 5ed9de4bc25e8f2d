"""The bytes that go on the wire: the signed casino envelope, the signed head, the signed
display state, the status.

Casino envelope (topic ``.../casino/events``), one per journaled event::

    {"epoch": "5f0c...", "event": {...the domain event...}, "hash": "...",
     "key_id": "dec19ca66c37eb1c91bb4b0b082d7a11", "prev_hash": "...", "round": 17,
     "seq": 42, "shoe": 3, "sig": "<128 hex>", "table": "T1",
     "time": "2026-11-30T04:28:12.123456Z", "type": "card_dealt"}

``hash``/``prev_hash`` are the journal's chain (``shoe_controller.journal.chain_hash``
over ``canonical_json(event)``); ``epoch`` is the journal's random id. Every payload is
canonical JSON (sorted keys, no whitespace, UTF-8), and Ed25519 signatures are
deterministic, so the same journal row always gives byte-identical messages: a re-send
or a replay is indistinguishable from the first send.

**The signature** (casino envelope, head and display state alike): ``sig`` is the
lowercase hex of the 64-byte Ed25519 signature (RFC 8032) by the device key, over the
UTF-8 bytes of the canonical JSON of the message *without its* ``sig`` *member*;
``key_id`` (inside the signed bytes) is the key's fingerprint
(:func:`shoe_controller.keys.fingerprint`). Because the message is canonical JSON, those
signed bytes are exactly the message's own bytes with the member ``"sig":"<hex>"`` and
the one comma that joined it to its neighbour cut out: a consumer can verify without
re-encoding JSON. Unsigned (``--unsigned``, never on a casino table): ``"sig": null``,
``"key_id": null`` and ``"unsigned": true`` in every message.

>>> from shoe_controller.journal import GENESIS, JournalEntry, chain_hash
>>> from shoe_controller.keys import SigningKey
>>> key, other = SigningKey.generate(), SigningKey.generate()
>>> body = '{"decks":8,"shoe":1,"type":"shoe_started"}'
>>> t = "2026-11-30T04:00:00.000000Z"
>>> e = JournalEntry(1, t, "shoe_started", body, GENESIS,
...                  chain_hash(GENESIS, 1, t, "shoe_started", body))
>>> p = casino_payload(e, "T1", "00" * 16, key)
>>> p == casino_payload(e, "T1", "00" * 16, key)          # deterministic
True
>>> env = verify_casino_payload(p, key.public)
>>> env["seq"], env["round"], env["event"]["decks"], env["key_id"] == key.key_id
(1, None, 8, True)
>>> signed_part(p) == canonical_json({k: v for k, v in env.items() if k != "sig"}).encode()
True
>>> verify_casino_payload(p, other.public)
Traceback (most recent call last):
...
shoe_controller.publish.payloads.SignatureError: seq 1: signed by key ..., not by the pinned key ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from shoe_controller.journal import JournalEntry, canonical_json, chain_hash

__all__ = [
    "SignatureError",
    "casino_envelope",
    "casino_payload",
    "display_payload",
    "head_payload",
    "sign_canonical",
    "signed_part",
    "status_payload",
    "verify_casino_payload",
    "verify_signed",
]


class SignatureError(ValueError):
    """A message whose signature or hash does not check out."""


#: Stands for the signature in the canonical text until it is known (a NUL-framed
#: string: no real value holds one in practice; if one does, we encode twice).
SIG_PLACEHOLDER = "\x00sig\x00"
_SIG_MEMBER = '"sig":' + canonical_json(SIG_PLACEHOLDER)
#: ``"sig":"<128 hex>"`` as it sits in a message.
_SIG_RE = re.compile(rb'"sig":"[0-9a-f]{128}"')


def _unsigned_text(text: str) -> str:
    """``text`` (canonical, holding the sig placeholder member once) without it."""
    if _SIG_MEMBER + "," in text:
        return text.replace(_SIG_MEMBER + ",", "", 1)
    return text.replace("," + _SIG_MEMBER, "", 1)


def sign_canonical(message: dict[str, Any], key: Any | None) -> bytes:
    """The canonical JSON of ``message`` plus ``key_id`` and ``sig`` (see the module
    docstring), signed with ``key`` (a :class:`shoe_controller.keys.SigningKey`), or
    marked unsigned when ``key`` is None. Encodes the JSON once.

    >>> sign_canonical({"a": 1}, None)
    b'{"a":1,"key_id":null,"sig":null,"unsigned":true}'
    """
    if key is None:
        return canonical_json({**message, "key_id": None, "sig": None,
                               "unsigned": True}).encode()
    return sign_text(canonical_json({**message, "key_id": key.key_id, "sig": SIG_PLACEHOLDER}),
                     key, message)


def sign_text(text: str, key: Any, message: dict[str, Any] | None = None) -> bytes:
    """Finish a canonical text made with ``"sig"`` set to the placeholder: sign the text
    without that member, put the signature in its place. (``message``: to re-encode
    in the unlikely case the placeholder also occurs in a value.)"""
    if text.count(_SIG_MEMBER) != 1 or text.count(canonical_json(SIG_PLACEHOLDER)) != 1:
        if message is None:
            raise ValueError("sign_text: the signature placeholder is ambiguous")
        unsigned = canonical_json({**message, "key_id": key.key_id})
        sig = key.sign(unsigned.encode()).hex()
        return canonical_json({**message, "key_id": key.key_id, "sig": sig}).encode()
    sig = key.sign(_unsigned_text(text).encode()).hex()
    return text.replace(_SIG_MEMBER, f'"sig":"{sig}"', 1).encode()


def signed_part(payload: bytes) -> bytes | None:
    """The bytes a message's ``sig`` covers: the message with its ``"sig":"<hex>"``
    member and one adjoining comma cut out (None when there is no such member exactly
    once). Equal to the canonical JSON of the message without ``sig``, for a canonical
    message; :func:`verify_signed` checks that too."""
    found = list(_SIG_RE.finditer(payload))
    if len(found) != 1:
        return None
    a, b = found[0].span()
    if payload[b:b + 1] == b",":
        return payload[:a] + payload[b + 1:]
    if payload[a - 1:a] == b",":
        return payload[:a - 1] + payload[b:]
    return None


def verify_signed(payload: bytes | str, keys: Iterable[Any]) -> dict[str, Any]:
    """Parse a signed message and check its signature against ``keys`` (the pinned
    :class:`shoe_controller.keys.PublicKey` s). Returns the message as a dict; raises
    :class:`SignatureError` (or ValueError for what is not a JSON object)."""
    data = payload.encode() if isinstance(payload, str) else bytes(payload)
    message = json.loads(data)
    if not isinstance(message, dict):
        raise ValueError(f"not a JSON object but {type(message).__name__}")
    seq = message.get("seq")
    what = f"seq {seq}" if isinstance(seq, int) else "message"
    sig, key_id = message.get("sig"), message.get("key_id")
    if sig is None or message.get("unsigned") is True:
        raise SignatureError(f"{what}: not signed (the device runs --unsigned)")
    if not isinstance(sig, str) or not isinstance(key_id, str):
        raise SignatureError(f"{what}: sig and key_id must be strings")
    by_id = {k.key_id: k for k in keys}
    key = by_id.get(key_id)
    if key is None:
        raise SignatureError(f"{what}: signed by key {key_id[:32]}, not by the pinned key "
                             f"{', '.join(sorted(by_id)) or '(none)'}")
    try:
        signature = bytes.fromhex(sig)
    except ValueError:
        raise SignatureError(f"{what}: sig is not hex") from None
    unsigned = {k: v for k, v in message.items() if k != "sig"}
    try:
        signed = canonical_json(unsigned).encode()
    except ValueError as exc:  # NaN and friends: not canonical, never signed by us
        raise SignatureError(f"{what}: not canonical JSON ({exc})") from None
    if signed != signed_part(data) or not key.verify(signature, signed):
        raise SignatureError(f"{what}: signature does not verify (altered message or "
                             "another key)")
    return message


def casino_envelope(entry: JournalEntry, table: str, epoch: str) -> dict[str, Any]:
    """The envelope of one journal entry, without ``key_id``/``sig``."""
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
        "epoch": epoch,
    }


def casino_payload(entry: JournalEntry, table: str, epoch: str, key: Any | None) -> bytes:
    """The message for ``.../casino/events`` (and a replay of it), signed by ``key``."""
    return sign_canonical(casino_envelope(entry, table, epoch), key)


def verify_casino_payload(payload: bytes | str, key: Any) -> dict[str, Any]:
    """Check one received casino message: its signature by ``key`` (a PublicKey, or
    several) and its own chain hash. Returns the envelope; raises
    :class:`SignatureError` saying what failed. The checks across messages (order, gaps,
    forks, epoch, table, head) are the consumer's: :mod:`shoe_controller.publish.consumer`.
    """
    keys = key if isinstance(key, list | tuple | set) else [key]
    envelope = verify_signed(payload, keys)
    seq = envelope.get("seq")
    try:
        body = canonical_json(envelope["event"])
        want = chain_hash(envelope["prev_hash"], seq, envelope["time"],  # type: ignore[arg-type]
                          envelope["type"], body)
    except (KeyError, TypeError, ValueError):
        raise SignatureError(f"seq {seq}: not a casino envelope") from None
    if want != envelope["hash"]:
        raise SignatureError(f"seq {seq}: hash does not match the event")
    return envelope


def head_payload(table: str, epoch: str, seq: int, hash_: str, time: str,
                 key: Any | None) -> bytes:
    """Retained ``.../casino/head``: how far the casino feed has got (the last released
    event's seq and hash), signed.

    >>> head_payload("T1", "ab" * 16, 0, "0" * 64, "2026-11-30T04:00:00.000000Z", None)
    b'{"epoch":"abab...","hash":"000...","key_id":null,"seq":0,"sig":null,"table":"T1",...}'
    """
    return sign_canonical({"table": table, "epoch": epoch, "seq": seq, "hash": hash_,
                           "time": time}, key)


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


def display_payload(state: dict[str, Any], key: Any | None = None) -> bytes:
    """Retained ``.../display/state``: the display projection's payload as canonical
    JSON, with ``key_id`` and ``sig`` (the same signature rule as the casino feed)."""
    return sign_canonical(state, key)
