"""The JSON Schemas and the AsyncAPI document of the MQTT payloads."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from referencing import Registry, Resource

from shoe_controller.game.cards import parse_card
from shoe_controller.game.display_state import DisplayState, project, to_payload
from shoe_controller.game.events import EVENT_TYPES, encode_event
from shoe_controller.game.inputs import (
    CardSeen,
    ConfirmResult,
    CutCardSeen,
    Fault,
    ForeignCard,
    ManualCard,
    NewShoe,
    Pause,
    Resume,
    UnreadableCard,
    Void,
)
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.journal import JOURNAL_EVENT_TYPES, Journal
from shoe_controller.publish import schemagen
from shoe_controller.publish.payloads import (
    casino_payload,
    display_payload,
    head_payload,
    status_payload,
    verify_casino_payload,
)
from tests.test_publish_helpers import fixed_key, shoe_events

KEY = fixed_key(7)

SCHEMAS = schemagen.SCHEMA_DIR
ASYNCAPI = SCHEMAS.parent / "asyncapi.yaml"


def registry() -> Registry:
    resources = []
    for path in SCHEMAS.rglob("*.schema.json"):
        doc = json.loads(path.read_text())
        resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


REGISTRY = registry()


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, registry=REGISTRY)


def test_committed_schemas_are_what_the_event_structs_generate():
    for rel, doc in schemagen.generate().items():
        committed = (SCHEMAS / rel).read_text()
        assert committed == schemagen.render(doc), (
            f"{rel} is stale: run python -m shoe_controller.publish.schemagen")


def test_every_schema_is_a_valid_2020_12_schema():
    for path in SCHEMAS.rglob("*.schema.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))
    assert {p.name.removesuffix(".schema.json") for p in (SCHEMAS / "events").iterdir()} \
        == set(EVENT_TYPES) | JOURNAL_EVENT_TYPES | {"event"}


def rough_shoe_events() -> list:
    """A shoe with the awkward inputs too: unreadable, manual entry, foreign card, pause,
    resume, void, fault, extra card (burn and carry policies)."""
    out = []
    for policy in ("burn", "carry", "void"):
        shoe = Shoe(Rules(confirm="button", extra_card=policy, burn="none"))
        inputs = [NewShoe()]
        cards = ["7S", "KC", "9D", "5D", "3H"]
        inputs += [CardSeen(parse_card(c)) for c in cards]
        inputs += [CardSeen(parse_card("2C"))]  # extra card before the confirmation
        inputs += [ConfirmResult(), UnreadableCard("blur"), ManualCard(parse_card("4H")),
                   ForeignCard("XYZ-123"), Resume(), Pause("supervisor"), Resume(),
                   CardSeen(parse_card("AD")), Fault("camera_lost", "no frames"),
                   Void("camera"), CutCardSeen()]
        inputs += [CardSeen(parse_card(c)) for c in ["8S", "8H", "2D", "3C"]]
        inputs += [ConfirmResult()]
        for inp in inputs:
            out += shoe.apply(inp)
    return out


def insurance_events(rounds: int = 12) -> list:
    """Rounds with insurance on and the dealer's reveal buttons: offers, closures,
    revealed hands, insurance settlements."""
    import random

    from shoe_controller.game.cards import ALL_CARDS
    from shoe_controller.game.inputs import Reveal
    from shoe_controller.game.insurance import InsuranceConfig

    rules = Rules(confirm="button", burn="none",
                  insurance=InsuranceConfig(enabled=True, reveal="button"))
    shoe = Shoe(rules)
    cards = [c for _ in range(8) for c in ALL_CARDS]
    random.Random(5).shuffle(cards)
    out = list(shoe.apply(NewShoe()))
    deck = iter(cards)
    for _ in range(rounds):
        for _ in range(4):
            out += shoe.apply(CardSeen(next(deck)))
        out += shoe.apply(Reveal("player"))
        out += shoe.apply(Reveal("banker"))
        while shoe.state.due() is not None:
            out += shoe.apply(CardSeen(next(deck)))
            if shoe.state.due() is not None:
                out += shoe.apply(Reveal("player"))
        out += shoe.apply(ConfirmResult())
    return out


def test_every_event_of_real_shoes_validates_and_the_envelopes_too(tmp_path):
    events = shoe_events(11) + rough_shoe_events() + insurance_events()
    types = {e.type for e in events}
    assert {"misdeal", "fault", "round_paused", "round_voided", "integrity_alert",
            "card_dealt", "round_result", "result_confirmed", "hand_revealed",
            "insurance_offer", "insurance_closed"} <= types, types
    event_v = validator("events/event.schema.json")
    env_v = validator("casino_event.schema.json")
    with Journal.open(tmp_path / "j.sqlite3", table_id="T1") as journal:
        entries = journal.append(events)
    display = DisplayState(table="T1")
    display_v = validator("display_state.schema.json")
    for i, (event, entry) in enumerate(zip(events, entries, strict=True)):
        assert entry.data == json.loads(encode_event(event))
        event_v.validate(entry.data)
        payload = casino_payload(entry, "T1", journal.epoch, KEY)
        env_v.validate(json.loads(payload))
        assert verify_casino_payload(payload, KEY.public)["seq"] == entry.seq
        display = project(display, entry.data)
        if i % 40 == 0 or i == len(events) - 1:  # (validating it is slow: a sample)
            display_v.validate(json.loads(display_payload(to_payload(display), KEY)))
    # unsigned: null, and marked
    env_v.validate(json.loads(casino_payload(entries[0], "T1", journal.epoch, None)))
    display_v.validate(json.loads(display_payload(to_payload(display), None)))
    head_v = validator("head.schema.json")
    head_v.validate(json.loads(head_payload("T1", journal.epoch, 3, entries[2].hash,
                                            entries[2].time, KEY)))


def test_schemas_reject_what_is_wrong():
    event_v = validator("events/event.schema.json")
    good = {"type": "card_dealt", "shoe": 1, "round": 2, "hand": "player", "position": 1,
            "card": "QH", "orientation": None}
    event_v.validate(good)
    for bad in ({**good, "card": "1X"}, {**good, "hand": "dealer"}, {**good, "extra": 1},
                {k: v for k, v in good.items() if k != "round"}, {**good, "type": "nope"}):
        with pytest.raises(jsonschema.ValidationError):
            event_v.validate(bad)
    status_v = validator("status.schema.json")
    status_v.validate(json.loads(status_payload("T1", "offline", reason="connection lost")))
    with pytest.raises(jsonschema.ValidationError):
        status_v.validate({"status": "maybe", "table": "T1", "time": None, "reason": None})
    env_v = validator("casino_event.schema.json")
    with pytest.raises(jsonschema.ValidationError):
        env_v.validate({"seq": 0, "type": "card_dealt"})


def test_asyncapi_document_names_every_payload_schema():
    doc = yaml.safe_load(ASYNCAPI.read_text())
    assert doc["asyncapi"].startswith("3.")
    messages = doc["components"]["messages"]
    refs = {m["payload"]["$ref"] for m in messages.values()}
    assert refs == {"schemas/status.schema.json", "schemas/casino_event.schema.json",
                    "schemas/display_state.schema.json", "schemas/head.schema.json",
                    "schemas/replay_request.schema.json", "schemas/replay_done.schema.json"}
    for ref in refs:
        assert (ASYNCAPI.parent / ref).is_file(), ref
    addresses = {c["address"] for c in doc["channels"].values()}
    assert addresses == {"{prefix}/{table}/status", "{prefix}/{table}/casino/events",
                         "{prefix}/{table}/display/state", "{prefix}/{table}/casino/head",
                         "{prefix}/{table}/casino/replay",
                         "{prefix}/{table}/casino/replay/response/{client}"}
    for op in doc["operations"].values():
        assert op["bindings"]["mqtt"]["qos"] == 1
    # every internal reference resolves
    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "$ref" and v.startswith("#/"):
                    target = doc
                    for part in v[2:].split("/"):
                        target = target[part]
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)
        yield node
    list(walk(doc))
    # the examples are valid payloads, and the casino example really is signed
    for name, schema in (("status", "status.schema.json"),
                         ("casinoEvent", "casino_event.schema.json"),
                         ("casinoHead", "head.schema.json"),
                         ("replayRequest", "replay_request.schema.json"),
                         ("replayDone", "replay_done.schema.json")):
        for ex in messages[name]["examples"]:
            validator(schema).validate(ex["payload"])
    # the signed examples really are signed by RFC 8032's test vector 1 key: checked
    # with the cryptography package alone, on the canonical JSON without "sig"
    rfc_pub = Ed25519PublicKey.from_public_bytes(bytes.fromhex(
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
    for name in ("casinoEvent", "casinoHead"):
        example = dict(messages[name]["examples"][0]["payload"])
        sig = bytes.fromhex(example.pop("sig"))
        rfc_pub.verify(sig, json.dumps(example, sort_keys=True, separators=(",", ":"),
                                       ensure_ascii=False).encode())


def test_schema_files_are_in_the_package_folder():
    assert Path(schemagen.__file__).parent / "schemas" == SCHEMAS


def test_the_verification_recipe_in_docs_works_on_real_messages(tmp_path):
    """docs/mqtt.md's consumer recipe, run as written, on a real chain (and forgeries)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "mqtt.md").read_text()
    code = text.split("## Verifying the casino feed")[1].split("```python")[1].split("```")[0]
    namespace: dict = {}
    exec(code, namespace)
    check = namespace["check"]
    with Journal.open(tmp_path / "j.sqlite3", table_id="T1") as journal:
        entries = journal.append(shoe_events(3)[:30])
    ep, pub = journal.epoch, KEY.public
    last = None
    for e in entries:
        last = check(casino_payload(e, "T1", ep, KEY), pub.raw, pub.key_id, "T1", ep, last)
    forged = json.loads(casino_payload(entries[5], "T1", ep, KEY))
    forged["event"]["card"] = "AS"
    with pytest.raises(ValueError, match="bad signature"):
        check(json.dumps(forged, sort_keys=True, separators=(",", ":")).encode(),
              pub.raw, pub.key_id, "T1", ep, None)
    other = fixed_key(8)
    with pytest.raises(ValueError, match="pinned key"):
        check(casino_payload(entries[5], "T1", ep, other), pub.raw, pub.key_id, "T1", ep,
              None)
    with pytest.raises(ValueError, match="another table or epoch"):
        check(casino_payload(entries[5], "T2", ep, KEY), pub.raw, pub.key_id, "T1", ep, None)
    with pytest.raises(ValueError, match="chain broken"):
        check(casino_payload(entries[7], "T1", ep, KEY), pub.raw, pub.key_id, "T1", ep,
              {"seq": entries[6].seq, "hash": entries[5].hash})
