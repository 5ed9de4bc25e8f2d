"""The events' JSON and dict forms against the documented form, written out by hand.

The journal and the feeds store an event as canonical JSON: keys sorted, no whitespace,
the ``type`` tag among the keys, fields never set left out (docs/journal.md's ``body``,
the events module's doc). A bad event is refused with one line saying what and where.
The dicts below are that form typed in from the field lists, not produced by the code
under test.
"""

from __future__ import annotations

import json

import pytest

from shoe_controller.game.events import (
    CardDealt,
    EventDecodeError,
    Operator,
    RoundStarted,
    ShoeStarted,
    decode_event,
    encode_event,
    event_to_dict,
)

MANUAL = CardDealt(shoe=2, round=7, hand="banker", position=3, card="9D", source="manual",
                   operator=Operator(uid=1000, gid=1000, pid=42, user="ana"))
MANUAL_DICT = {
    "card": "9D", "hand": "banker",
    "operator": {"uid": 1000, "gid": 1000, "pid": 42, "user": "ana"},
    "orientation": None, "position": 3, "round": 7, "shoe": 2, "source": "manual",
    "type": "card_dealt",
}


def test_event_to_dict_is_the_documented_form_with_sorted_keys() -> None:
    d = event_to_dict(MANUAL)
    assert d == MANUAL_DICT
    # sorted at every level: the order the canonical JSON has (a display or a consumer
    # printing the dict shows the same order as the journal)
    assert list(d) == sorted(MANUAL_DICT)
    assert list(d["operator"]) == ["gid", "pid", "uid", "user"]
    assert list(event_to_dict(ShoeStarted(shoe=1, decks=8))) == ["decks", "shoe", "type"]


def test_encode_event_is_canonical_json() -> None:
    text = encode_event(MANUAL)
    assert text == json.dumps(MANUAL_DICT, sort_keys=True, separators=(",", ":")).encode()


def test_decode_event_from_a_dict_and_from_json() -> None:
    assert decode_event(dict(MANUAL_DICT)) == MANUAL
    assert decode_event(json.dumps(MANUAL_DICT)) == MANUAL
    assert decode_event(json.dumps(MANUAL_DICT).encode()) == MANUAL
    assert decode_event({"type": "round_started", "shoe": 3, "round": 1}) == RoundStarted(
        shoe=3, round=1)


@pytest.mark.parametrize("form", ["dict", "json"])
def test_a_bad_event_is_refused_naming_the_value_and_where(form: str) -> None:
    bad = {"type": "card_dealt", "shoe": 1, "round": 1, "hand": "dealer", "position": 1,
           "card": "QH"}
    data = bad if form == "dict" else json.dumps(bad)
    with pytest.raises(EventDecodeError) as info:
        decode_event(data)
    assert "'dealer'" in str(info.value) and "$.hand" in str(info.value)
    unknown = {"type": "nope", "shoe": 1}
    with pytest.raises(EventDecodeError) as info:
        decode_event(unknown if form == "dict" else json.dumps(unknown))
    assert "'nope'" in str(info.value) and "$.type" in str(info.value)


def test_malformed_json_is_refused_saying_so() -> None:
    with pytest.raises(EventDecodeError) as info:
        decode_event(b"not json")
    assert "malformed" in str(info.value) and "byte 4" in str(info.value)
    with pytest.raises(EventDecodeError) as info:
        decode_event(b'{"type": "shoe_started", "shoe": 1,')
    assert "truncated" in str(info.value)
