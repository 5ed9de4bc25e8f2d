"""Write the JSON Schemas of the MQTT payloads: ``python -m shoe_controller.publish.schemagen``.

The schema of each event type is derived from the game core's event Structs
(``shoe_controller.game.events``), so it cannot drift from what is journaled and sent;
tests check the committed files equal what this module generates (run it after changing
an event and commit the result). The envelope and status schemas are written out here.
``display_state.schema.json`` belongs to the display projection and is not touched.

Layout of ``shoe_controller/publish/schemas/`` (draft 2020-12, references are relative
file paths, so the folder can be copied as is)::

    casino_event.schema.json     envelope on .../casino/events
    status.schema.json           .../status
    display_state.schema.json    .../display/state (game/display_state.py)
    events/event.schema.json     any domain event (oneOf the files below)
    events/<type>.schema.json    one per event type

>>> docs = generate()
>>> sorted(docs)[:3]
['casino_event.schema.json', 'events/bets_open.schema.json', 'events/burn_indicator.schema.json']
>>> docs["events/card_dealt.schema.json"]["properties"]["card"]["pattern"]
'^[A2-9TJQK][SHDC]$'
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

__all__ = ["SCHEMA_DIR", "generate", "main", "write"]

SCHEMA_DIR = Path(__file__).with_name("schemas")
DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: Base of every schema's ``$id`` (a reserved .invalid name: identifiers, not addresses;
#: the display state schema uses the same base).
ID_BASE = "https://smart-shoe-controller.invalid/schemas/"
CARD_PATTERN = "^[A2-9TJQK][SHDC]$"
HEX64 = "^[0-9a-f]{64}$"
HEX32 = "^[0-9a-f]{32}$"
TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$"
#: Fields holding one card code (or null where the struct allows it).
_CARD_FIELDS = ("card",)
#: Fields holding a list of card codes.
_CARD_LIST_FIELDS = ("player", "banker")


def _event_schema(cls: type[msgspec.Struct]) -> dict[str, Any]:
    raw = msgspec.json.schema(cls)
    name = raw["$ref"].rsplit("/", 1)[-1]
    defs = raw["$defs"]
    body = defs.pop(name)
    tag = cls.__struct_config__.tag  # type: ignore[attr-defined]
    props: dict[str, Any] = body["properties"]
    for key, prop in props.items():
        prop.pop("default", None)  # every field is always on the wire
        if key in _CARD_FIELDS:
            _with_card_pattern(prop)
        if key in _CARD_LIST_FIELDS and prop.get("type") == "array":
            prop["items"] = {"type": "string", "pattern": CARD_PATTERN}
    props["type"] = {"const": tag}
    schema: dict[str, Any] = {
        "$schema": DRAFT,
        "title": tag,
        "description": " ".join(str(body.get("description", tag)).split()),
        "type": "object",
        "properties": props,
        # The canonical encoder writes every field, defaults included, except the
        # optional ones (msgspec.UNSET: e.g. a supervisor action's source and operator).
        "required": [k for k in props if k not in _unset_fields(cls)],
        "additionalProperties": False,
    }
    for sub in defs.values():
        sub.pop("title", None)
        sub["additionalProperties"] = False
        sub["required"] = list(sub.get("properties", {}))
        for prop in sub.get("properties", {}).values():
            prop.pop("default", None)
    if defs:
        schema["$defs"] = defs
    return schema


def _unset_fields(cls: type[msgspec.Struct]) -> set[str]:
    """Fields of ``cls`` left out of the JSON unless set (default ``msgspec.UNSET``)."""
    fields = cls.__struct_fields__
    defaults = cls.__struct_defaults__
    tail = fields[len(fields) - len(defaults):]
    return {f for f, d in zip(tail, defaults, strict=True) if d is msgspec.UNSET}


def _with_card_pattern(prop: dict[str, Any]) -> None:
    if prop.get("type") == "string":
        prop["pattern"] = CARD_PATTERN
    for alt in prop.get("anyOf", ()):
        if alt.get("type") == "string":
            alt["pattern"] = CARD_PATTERN


def generate() -> dict[str, dict[str, Any]]:
    """Every schema this module owns, by path relative to the schemas folder."""
    from shoe_controller.game.events import EVENT_TYPES

    docs: dict[str, dict[str, Any]] = {}
    for tag, cls in sorted(EVENT_TYPES.items()):
        docs[f"events/{tag}.schema.json"] = _event_schema(cls)
    from shoe_controller.journal import JOURNAL_EVENT_TYPES

    docs.update(_journal_event_schemas())
    all_types = sorted(set(EVENT_TYPES) | JOURNAL_EVENT_TYPES)
    docs["events/event.schema.json"] = {
        "$schema": DRAFT,
        "title": "domain event",
        "description": "Any domain event of the game core, told apart by its type field.",
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": all_types}},
        # if/then on the type rather than oneOf: one schema checked per event, and an
        # error about that type's fields rather than about every other type's.
        "allOf": [{"if": {"properties": {"type": {"const": tag}}},
                   "then": {"$ref": f"{tag}.schema.json"}} for tag in all_types],
    }
    sig_desc = ("Ed25519 (RFC 8032) signature by the device key, lowercase hex, over the "
                "UTF-8 bytes of the canonical JSON of this message without its sig member "
                "(= the message's bytes with the member \"sig\":\"...\" and one adjoining "
                "comma cut out); null only when the device runs --unsigned.")
    signature = {
        "key_id": {"type": ["string", "null"], "pattern": HEX32,
                   "description": "Fingerprint of the signing key: first 16 bytes of "
                                  "SHA-256 of the raw 32-byte public key, hex."},
        "sig": {"type": ["string", "null"], "pattern": "^[0-9a-f]{128}$",
                "description": sig_desc},
        "unsigned": {"const": True,
                     "description": "Present (true) only in messages of a device run with "
                                    "--unsigned: do not trust them."},
    }
    docs["casino_event.schema.json"] = {
        "$schema": DRAFT,
        "title": "casino event envelope",
        "description": (
            "One journaled domain event on <prefix>/<table>/casino/events (and, byte-"
            "identical, in a replay response), in journal order. hash = sha256(prev_hash + "
            "'\\n' + seq + '\\n' + time + '\\n' + type + '\\n' + canonical_json(event)); "
            "canonical JSON = sorted keys, no whitespace, UTF-8. Delivered at least once: "
            "de-duplicate by (epoch, seq)."),
        "type": "object",
        "properties": {
            "seq": {"type": "integer", "minimum": 1,
                    "description": "Per-journal sequence number, contiguous from 1."},
            "type": {"enum": all_types,
                     "description": "Same as event.type."},
            "table": {"type": "string", "minLength": 1},
            "shoe": {"type": ["integer", "null"], "minimum": 1},
            "round": {"type": ["integer", "null"], "minimum": 1},
            "time": {"type": "string", "pattern": TIME_PATTERN,
                     "description": "When the event was journaled, UTC."},
            "event": {"$ref": "events/event.schema.json"},
            "hash": {"type": "string", "pattern": HEX64},
            "prev_hash": {"type": "string", "pattern": HEX64,
                          "description": "hash of seq - 1; 64 zeros for seq 1."},
            "epoch": {"type": "string", "pattern": HEX32,
                      "description": "The journal's epoch: 128 random bits made when the "
                                     "journal was created."},
            **signature,
        },
        "required": ["seq", "type", "table", "shoe", "round", "time", "event", "hash",
                     "prev_hash", "epoch", "key_id", "sig"],
        "additionalProperties": False,
    }
    docs["head.schema.json"] = {
        "$schema": DRAFT,
        "title": "casino feed head",
        "description": (
            "Retained on <prefix>/<table>/casino/head after every batch of released events "
            "and at least every 5 s: the last released event's seq and hash in this epoch "
            "(seq 0 and 64 zeros before the first). A consumer that has less than seq is "
            "missing events (ask for them on .../casino/replay)."),
        "type": "object",
        "properties": {
            "table": {"type": "string", "minLength": 1},
            "epoch": {"type": "string", "pattern": HEX32},
            "seq": {"type": "integer", "minimum": 0},
            "hash": {"type": "string", "pattern": HEX64},
            "time": {"type": "string", "pattern": TIME_PATTERN,
                     "description": "When this head was signed, UTC."},
            **signature,
        },
        "required": ["table", "epoch", "seq", "hash", "time", "key_id", "sig"],
        "additionalProperties": False,
    }
    docs["replay_request.schema.json"] = {
        "$schema": DRAFT,
        "title": "replay request",
        "description": (
            "An MQTT 5 request on <prefix>/<table>/casino/replay with a Response Topic under "
            "<prefix>/<table>/casino/replay/response/ and Correlation Data. The daemon "
            "answers, in order of the requests, with the journal's envelopes from_seq.."
            "to_seq (byte-identical to the feed; at most 10000, never past the head), each "
            "with the request's Correlation Data, then one replay_done message."),
        "type": "object",
        "properties": {
            "epoch": {"type": "string", "pattern": HEX32},
            "from_seq": {"type": "integer", "minimum": 1},
            "to_seq": {"type": "integer", "minimum": 1},
        },
        "required": ["epoch", "from_seq", "to_seq"],
        "additionalProperties": False,
    }
    docs["replay_done.schema.json"] = {
        "$schema": DRAFT,
        "title": "end of a replay response",
        "description": (
            "The last message of a replay response (same Correlation Data): how many "
            "envelopes were sent, or why the request was refused (error non-null, nothing "
            "sent). Not signed: the envelopes are; it only ends the wait."),
        "type": "object",
        "properties": {
            "replay": {"const": "done"},
            "epoch": {"type": ["string", "null"]},
            "from_seq": {"type": ["integer", "null"]},
            "to_seq": {"type": ["integer", "null"]},
            "count": {"type": "integer", "minimum": 0},
            "error": {"type": ["string", "null"]},
        },
        "required": ["replay", "epoch", "from_seq", "to_seq", "count", "error"],
        "additionalProperties": False,
    }
    docs["status.schema.json"] = {
        "$schema": DRAFT,
        "title": "table status",
        "description": (
            "Retained on <prefix>/<table>/status: online on every connect; offline as the "
            "last will (reason 'connection lost', time null) or on a clean stop."),
        "type": "object",
        "properties": {
            "status": {"enum": ["online", "offline"]},
            "table": {"type": "string", "minLength": 1},
            "time": {"type": ["string", "null"], "pattern": TIME_PATTERN},
            "reason": {"type": ["string", "null"]},
        },
        "required": ["status", "table", "time", "reason"],
        "additionalProperties": False,
    }
    for rel, doc in docs.items():
        docs[rel] = {"$schema": doc.pop("$schema"), "$id": ID_BASE + rel, **doc}
    return docs


def _journal_event_schemas() -> dict[str, dict[str, Any]]:
    """The journal's own events (not the game core's): written out here."""
    link = {"type": "object", "properties": {
        "epoch": {"type": "string", "pattern": HEX32},
        "seq": {"type": "integer", "minimum": 0},
        "hash": {"type": "string", "pattern": HEX64}},
        "required": ["epoch", "seq", "hash"], "additionalProperties": False}
    return {"events/journal_started.schema.json": {
        "$schema": DRAFT,
        "title": "journal_started",
        "description": (
            "Seq 1 of every journal the daemon creates: its epoch, and the journal it "
            "follows (the last head this device announced: epoch, seq, hash) when known, "
            "else null."),
        "type": "object",
        "properties": {
            "type": {"const": "journal_started"},
            "epoch": {"type": "string", "pattern": HEX32},
            "table": {"type": "string", "minLength": 1},
            "previous": {"oneOf": [{"type": "null"}, link]},
        },
        "required": ["type", "epoch", "table", "previous"],
        "additionalProperties": False,
    }, "events/key_rotated.schema.json": {
        "$schema": DRAFT,
        "title": "key_rotated",
        "description": (
            "The device key changed (`shoe-controller keys rotate`). This event's envelope "
            "is signed by the old key; every later seq by the new one. endorsement = the old "
            "key's Ed25519 signature (hex) over the canonical JSON of this event without "
            "endorsement."),
        "type": "object",
        "properties": {
            "type": {"const": "key_rotated"},
            "epoch": {"type": "string", "pattern": HEX32},
            "table": {"type": "string", "minLength": 1},
            "old_key_id": {"type": "string", "pattern": HEX32},
            "new_key_id": {"type": "string", "pattern": HEX32},
            "new_public_key": {"type": "string", "pattern": "^ed25519:[A-Za-z0-9+/]{43}=$"},
            "endorsement": {"type": "string", "pattern": "^[0-9a-f]{128}$"},
        },
        "required": ["type", "epoch", "table", "old_key_id", "new_key_id",
                     "new_public_key", "endorsement"],
        "additionalProperties": False,
    }}


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write(directory: Path = SCHEMA_DIR) -> list[Path]:
    """(Re)write the generated schemas under ``directory``; return the paths written."""
    written = []
    for rel, doc in generate().items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(doc), encoding="utf-8")
        written.append(path)
    return written


def main() -> int:
    for path in write():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
