"""The dealer panel projection, over every event type and every starting panel."""

from __future__ import annotations

import itertools

import pytest

from shoe_controller.dealer.config import LED_NAMES
from shoe_controller.dealer.lights import Lights, event_type, project, supervisor_key

PROMPTS = {"player_draws", "banker_draws"}
RESULTS = {"player_wins", "banker_wins", "tie"}

# Every starting panel: each subset of LEDs, buzzer on/off, key on/off (128 * 4).
ALL_PANELS = [
    Lights(frozenset(leds), buzzer, key)
    for n in range(len(LED_NAMES) + 1)
    for leds in itertools.combinations(LED_NAMES, n)
    for buzzer in (False, True)
    for key in (False, True)
]

# event -> (LEDs it must put out, LEDs it must light, buzzer after: True/False/None=unchanged)
# "ALL_BUT_FAULT" is spelled out so the table reads as the rules in lights.py's docstring.
TABLE: list[tuple[dict, set[str], set[str], bool | None]] = [
    ({"type": "shoe_started", "shoe": 2, "decks": 8}, set(LED_NAMES) - {"fault"}, set(), None),
    ({"type": "round_started", "shoe": 1, "round": 4}, PROMPTS | RESULTS, set(), None),
    ({"type": "shoe_ended", "shoe": 1, "rounds": 80, "reason": "cut_card"},
     PROMPTS | RESULTS, set(), None),
    ({"type": "draw_prompt", "prompt": "player_draws"}, {"banker_draws"}, {"player_draws"}, None),
    ({"type": "draw_prompt", "prompt": "banker_draws"}, {"player_draws"}, {"banker_draws"}, None),
    ({"type": "draw_prompt", "prompt": "stand"}, PROMPTS, set(), None),
    ({"type": "card_dealt", "hand": "player", "position": 3, "card": "5H"},
     {"player_draws"}, set(), None),
    ({"type": "card_dealt", "hand": "banker", "position": 3, "card": "5H"},
     {"banker_draws"}, set(), None),
    ({"type": "round_result", "winner": "player"}, PROMPTS | RESULTS - {"player_wins"},
     {"player_wins"}, None),
    ({"type": "round_result", "winner": "banker"}, PROMPTS | RESULTS - {"banker_wins"},
     {"banker_wins"}, None),
    ({"type": "round_result", "winner": "tie"}, PROMPTS | RESULTS - {"tie"}, {"tie"}, None),
    ({"type": "cut_card", "round": 70, "when": "mid_round"}, set(), {"last_round"}, None),
    ({"type": "last_round", "round": 71}, set(), {"last_round"}, None),
    ({"type": "round_voided", "reason": "supervisor"}, PROMPTS | RESULTS | {"fault"}, set(),
     False),
    ({"type": "round_voided", "reason": "misdeal"}, PROMPTS | RESULTS, set(), None),
    ({"type": "round_resumed"}, {"fault"}, set(), False),
    ({"type": "misdeal", "kind": "extra_card", "card": "4D", "policy": "burn"}, set(),
     {"fault"}, True),
    ({"type": "fault", "kind": "link_down", "detail": ""}, set(), {"fault"}, True),
    ({"type": "fault", "kind": "unreadable", "detail": ""}, set(), {"fault"}, True),
    ({"type": "integrity_alert", "kind": "foreign_card", "evidence": {}}, set(), {"fault"},
     True),
    ({"type": "integrity_alert", "kind": "repeated_sequence", "evidence": {}}, set(),
     {"fault"}, True),
    ({"type": "integrity_alert", "kind": "advantage", "evidence": {}}, set(), set(), None),
    # Events the panel has nothing to show for.
    ({"type": "card_dealt", "hand": "player", "position": 1, "card": "KD"},
     {"player_draws"}, set(), None),
    ({"type": "result_confirmed"}, set(), set(), None),
    ({"type": "card_burned", "card": "2C", "reason": "burn"}, set(), set(), None),
    ({"type": "burn_indicator", "card": "2C", "burn_count": 2}, set(), set(), None),
    ({"type": "round_paused", "reason": "supervisor"}, set(), set(), None),
    ({"type": "bets_open", "bets": ["player"]}, set(), set(), None),
    ({"type": "shoe_analysis", "probabilities": {}}, set(), set(), None),
    ({"type": "some_future_event"}, set(), set(), None),
]


@pytest.mark.parametrize(("event", "off", "on", "buzzer"), TABLE,
                         ids=[f"{e['type']}-{i}" for i, (e, *_r) in enumerate(TABLE)])
def test_every_event_from_every_panel(event: dict, off: set, on: set, buzzer: bool | None):
    assert not (off & on)
    for before in ALL_PANELS:
        after = project(before, event)
        assert after.lit == (before.lit - off) | on, (before, event)
        assert after.key_on == before.key_on
        if buzzer is None:
            assert after.buzzer == before.buzzer
        elif buzzer and before.key_on:
            # The supervisor is already at the table with the key on: no alarm sound.
            assert after.buzzer is False
        else:
            assert after.buzzer is buzzer


def test_table_covers_every_event_of_the_contract():
    contract = {
        "shoe_started", "burn_indicator", "card_burned", "round_started", "card_dealt",
        "draw_prompt", "round_result", "result_confirmed", "cut_card", "last_round",
        "shoe_ended", "misdeal", "round_paused", "round_resumed", "round_voided",
        "integrity_alert", "bets_open", "fault",
    }
    assert contract <= {e["type"] for e, *_ in TABLE}


def test_supervisor_key_from_every_panel():
    for before in ALL_PANELS:
        on = supervisor_key(before, on=True)
        assert on.lit == before.lit and on.buzzer is False and on.key_on
        off = supervisor_key(before, on=False)
        assert off.lit == before.lit - {"fault"} and off.buzzer is False and not off.key_on


def test_a_round_with_a_fault_walks_the_panel():
    s = Lights()
    s = project(s, {"type": "round_started"})
    s = project(s, {"type": "draw_prompt", "prompt": "player_draws"})
    assert s.led("player_draws") and not s.led("banker_draws")
    s = project(s, {"type": "fault", "kind": "camera_lost"})
    assert s.led("fault") and s.buzzer
    s = supervisor_key(s, on=True)
    assert s.led("fault") and not s.buzzer
    s = project(s, {"type": "round_paused", "reason": "supervisor key"})
    s = project(s, {"type": "round_resumed"})
    assert not s.led("fault")
    s = supervisor_key(s, on=False)
    s = project(s, {"type": "card_dealt", "hand": "player", "position": 3})
    s = project(s, {"type": "draw_prompt", "prompt": "banker_draws"})
    assert s.lit == {"banker_draws"}
    s = project(s, {"type": "round_result", "winner": "tie"})
    assert s.lit == {"tie"}


def test_events_as_structs_are_read_by_their_tag():
    msgspec = pytest.importorskip("msgspec")

    class DrawPrompt(msgspec.Struct, tag="draw_prompt", tag_field="type", frozen=True):
        prompt: str

    assert event_type(DrawPrompt("banker_draws")) == "draw_prompt"
    assert project(Lights(), DrawPrompt("banker_draws")).lit == {"banker_draws"}


def test_unknown_led_name_is_an_error():
    with pytest.raises(KeyError, match="no LED named 'bogus'"):
        Lights().led("bogus")
