"""The public display state projection: folded over released events, schema-valid."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.game.display_state import DisplayState, fold, project, to_payload
from shoe_controller.game.roads import build_roads, roads_to_dict
from shoe_controller.keys import SigningKey
from shoe_controller.publish.payloads import display_payload

SCHEMA = json.loads(
    resources.files("shoe_controller.publish")
    .joinpath("schemas/display_state.schema.json")
    .read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


KEY = SigningKey.generate()


def valid(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` is plain JSON, and the message published from it (signed, as the
    publisher sends it) matches the schema."""
    assert json.loads(json.dumps(payload)) == payload
    VALIDATOR.validate(json.loads(display_payload(payload, KEY)))
    return payload


def value(code: str) -> int:
    return {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}.get(code[0], 0) or (
        int(code[0]) if code[0].isdigit() else 0)


def round_events(shoe: int, rnd: int, player: list[str], banker: list[str], winner: str,
                 confirm: bool = True) -> list[dict[str, Any]]:
    """The contract's events for one round, in deal order P B P B then third cards."""
    order = [("player", 1, player[0]), ("banker", 1, banker[0]),
             ("player", 2, player[1]), ("banker", 2, banker[1])]
    if len(player) > 2:
        order.append(("player", 3, player[2]))
    if len(banker) > 2:
        order.append(("banker", 3, banker[2]))
    pt = sum(value(c) for c in player) % 10
    bt = sum(value(c) for c in banker) % 10
    evs: list[dict[str, Any]] = [{"type": "round_started", "shoe": shoe, "round": rnd}]
    evs += [{"type": "card_dealt", "shoe": shoe, "round": rnd, "hand": h, "position": p,
             "card": c, "orientation": None} for h, p, c in order]
    evs.append({
        "type": "round_result", "shoe": shoe, "round": rnd, "player": player, "banker": banker,
        "player_total": pt, "banker_total": bt, "winner": winner,
        "natural": (len(player) == 2 and pt >= 8) or (len(banker) == 2 and bt >= 8),
        "player_pair": player[0][0] == player[1][0], "banker_pair": banker[0][0] == banker[1][0],
        "settlement": {}, "insurance": [],
    })
    if confirm:
        evs.append({"type": "result_confirmed", "shoe": shoe, "round": rnd})
    return evs


START = [
    {"type": "shoe_started", "shoe": 1, "decks": 8},
    {"type": "burn_indicator", "shoe": 1, "card": "3H", "burn_count": 3},
    *[{"type": "card_burned", "shoe": 1, "card": c, "reason": "burn"} for c in ("2S", "KD", "4C")],
]
P_WINS = (["9H", "KD"], ["2C", "3C"], "player")            # player natural 9 v 5
B_WINS = (["2S", "3S"], ["4D", "4H"], "banker")           # banker 8 (natural, pair) v 5
TIE = (["7S", "KC"], ["5H", "2D"], "tie")                 # 7 v 7


def test_a_round_as_it_is_released() -> None:
    s = fold(START, table="T7")
    assert s.phase == "new_shoe" and s.cards_out == 4
    s = project(s, {"type": "bets_open", "shoe": 1, "round": 1, "bets": ["player", "banker"]})
    p = valid(to_payload(s))
    assert p["bets_open"] and p["bets"] == ["player", "banker"] and p["bets_round"] == 1
    evs = round_events(1, 1, *P_WINS)
    s = project(s, evs[0])  # round_started: no more bets
    assert not to_payload(s)["bets_open"]
    s = project(s, evs[1])
    p = valid(to_payload(s))
    assert p["cards_round"] == 1 and p["player"] == {"cards": ["9H"], "score": 9}
    assert p["banker"] == {"cards": [], "score": None}
    for ev in evs[2:5]:
        s = project(s, ev)
    s = project(s, {"type": "draw_prompt", "shoe": 1, "round": 1, "prompt": "stand"})
    assert to_payload(s)["prompt"] == "stand"
    s = project(s, evs[5])  # round_result: the banner, not yet in the roads
    p = valid(to_payload(s))
    assert p["phase"] == "result" and p["prompt"] is None
    assert p["result"]["winner"] == "player" and not p["result"]["confirmed"]
    assert p["result"]["player_natural"] and not p["result"]["banker_natural"]
    assert p["roads"]["big_road"] == [] and p["statistics"]["rounds"] == 0
    s = project(s, evs[6])  # result_confirmed
    p = valid(to_payload(s))
    assert p["result"]["confirmed"]
    assert p["statistics"]["player"] == 1 and p["statistics"]["natural"] == 1
    assert [c["outcome"] for c in p["roads"]["bead_plate"]] == ["player"]
    assert p["shoe_progress"] == {"cards_dealt": 8, "cards_total": 416}
    assert p["table"] == "T7" and p["shoe"] == 1 and p["round"] == 1


def test_the_last_result_stays_while_the_next_round_is_held_back() -> None:
    # on_result release: round 2 starts (its first card) but its cards are not released
    s = fold([*START, *round_events(1, 1, *P_WINS),
              {"type": "bets_open", "shoe": 1, "round": 2, "bets": ["player"]}])
    assert to_payload(s)["bets_open"]
    s = project(s, {"type": "round_started", "shoe": 1, "round": 2})
    p = valid(to_payload(s))
    assert p["round"] == 2 and p["cards_round"] == 1 and not p["bets_open"]
    assert p["result"]["round"] == 1 and p["player"]["cards"] == ["9H", "KD"]
    # then the whole round is released at once
    for ev in round_events(1, 2, *B_WINS)[1:]:
        s = project(s, ev)
    p = valid(to_payload(s))
    assert p["cards_round"] == 2 and p["result"]["round"] == 2
    assert p["banker"]["cards"] == ["4D", "4H"] and p["statistics"]["rounds"] == 2
    assert p["shoe_progress"]["cards_dealt"] == 4 + 4 + 4


def test_per_card_release_replaces_the_last_cards_with_the_first_new_one() -> None:
    s = fold([*START, *round_events(1, 1, *P_WINS)])
    evs = round_events(1, 2, *B_WINS)
    s = project(project(s, evs[0]), evs[1])
    p = valid(to_payload(s))
    assert p["cards_round"] == 2 and p["result"] is None
    assert p["player"]["cards"] == ["2S"] and p["banker"]["cards"] == []
    for ev in evs[2:]:
        s = project(s, ev)
    assert s.cards_out == 4 + 4 + 4  # cards dealt one by one are not counted twice


def test_statistics_and_roads_over_several_rounds() -> None:
    evs = list(START)
    for i, r in enumerate([P_WINS, B_WINS, TIE, B_WINS, P_WINS], start=1):
        evs += round_events(1, i, *r)
    p = valid(to_payload(fold(evs)))
    st_ = p["statistics"]
    assert (st_["rounds"], st_["banker"], st_["player"], st_["tie"]) == (5, 2, 2, 1)
    assert st_["banker_pair"] == 2 and st_["player_pair"] == 0
    assert (st_["natural"], st_["player_natural"], st_["banker_natural"]) == (4, 2, 2)
    expected = roads_to_dict(build_roads("PBTBP"))
    assert p["roads"]["big_road"][1]["ties"] == 1
    assert [(c["col"], c["row"], c["outcome"]) for c in p["roads"]["big_road"]] == [
        (c["col"], c["row"], c["outcome"]) for c in expected["big_road"]]
    assert p["ask"] == expected["ask"]
    assert p["shoe_progress"]["cards_dealt"] == 4 + 5 * 4


def test_a_voided_round_never_reaches_the_roads() -> None:
    evs = [*START, *round_events(1, 1, *P_WINS)]
    evs += round_events(1, 2, *B_WINS, confirm=False)
    evs.append({"type": "round_voided", "shoe": 1, "round": 2, "reason": "supervisor"})
    s = fold(evs)
    p = valid(to_payload(s))
    assert p["phase"] == "voided" and p["result"] is None and "void" in p["notice"]
    assert p["statistics"]["rounds"] == 1 and len(p["roads"]["bead_plate"]) == 1
    s = fold([*evs, *round_events(1, 3, *TIE)])
    assert s.statistics.rounds == 2 and s.notice is None
    assert [r.outcome for r in s.results] == ["player", "tie"]


def test_a_result_the_game_moved_past_is_kept_once() -> None:
    # confirm mode without result_confirmed events: the next round makes the result final
    evs = [*START, *round_events(1, 1, *P_WINS, confirm=False),
           *round_events(1, 2, *B_WINS, confirm=False)]
    s = fold(evs)
    assert [r.outcome for r in s.results] == ["player"]
    s = project(s, {"type": "shoe_ended", "shoe": 1, "rounds": 2, "reason": "cut_card"})
    assert [r.outcome for r in s.results] == ["player", "banker"]
    assert s.phase == "shoe_ended"
    # a duplicate confirmation or result counts nothing twice
    again = project(project(s, {"type": "result_confirmed", "shoe": 1, "round": 2}),
                    round_events(1, 2, *B_WINS)[-2])
    assert again.statistics == s.statistics


def test_cut_card_last_round_and_a_new_shoe() -> None:
    evs = [*START, *round_events(1, 1, *P_WINS),
           {"type": "cut_card", "shoe": 1, "round": None, "when": "between_rounds"},
           {"type": "last_round", "shoe": 1, "round": 2}]
    p = valid(to_payload(fold(evs, "T1")))
    assert p["cut_card"] and p["last_round"] and p["last_round_number"] == 2
    s = fold([*evs, {"type": "shoe_ended", "shoe": 1, "rounds": 1, "reason": "cut_card"},
              {"type": "shoe_started", "shoe": 2, "decks": 6}], "T1")
    p = valid(to_payload(s))
    assert p["table"] == "T1" and p["shoe"] == 2 and p["phase"] == "new_shoe"
    assert not p["cut_card"] and not p["last_round"]
    assert p["statistics"]["rounds"] == 0 and p["roads"]["bead_plate"] == []
    assert p["shoe_progress"] == {"cards_dealt": 0, "cards_total": 312}


def test_pause_misdeal_and_unknown_events() -> None:
    evs = [*START, *round_events(1, 1, *P_WINS)[:3]]
    s = fold(evs)
    s = project(s, {"type": "round_paused", "shoe": 1, "round": 1, "reason": "fault"})
    assert to_payload(s)["paused"]
    s = project(s, {"type": "integrity_alert", "shoe": 1, "round": 1, "kind": "x",
                    "evidence": {"secret": 1}})
    s = project(s, {"type": "something_new", "shoe": 1})
    s = project(s, {"type": "round_resumed", "shoe": 1, "round": 1})
    p = valid(to_payload(s))
    assert not p["paused"] and "secret" not in json.dumps(p)
    before = s.cards_out
    s = project(s, {"type": "misdeal", "shoe": 1, "round": 1, "kind": "extra_card",
                    "card": "5S", "policy": "burn"})
    assert s.cards_out == before + 1 and s.notice == "Misdeal"
    s = project(s, {"type": "misdeal", "shoe": 1, "round": 1, "kind": "extra_card",
                    "card": "6S", "policy": "carry"})
    assert s.cards_out == before + 1  # counted when it is dealt


def test_burn_cards_are_counted_never_shown() -> None:
    p = to_payload(fold(START))
    assert "KD" not in json.dumps(p) and p["shoe_progress"]["cards_dealt"] == 4


class RoundStarted(msgspec.Struct, frozen=True, tag="round_started", tag_field="type"):
    shoe: int
    round: int


def test_msgspec_structs_are_accepted_like_dicts() -> None:
    s = project(fold(START), RoundStarted(shoe=1, round=4))
    assert s.round == 4 and s.phase == "dealing"


THREE = (["AS", "AH", "5C"], ["3C", "KC", "2D"], "player")  # 7 v 5, third cards, P pair
HANDS = st.sampled_from([P_WINS, B_WINS, TIE, THREE])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(HANDS, st.booleans()), max_size=30))
def test_projection_matches_the_roads_of_the_kept_results(rounds) -> None:
    evs = list(START)
    kept = []
    for i, (hands, void) in enumerate(rounds, start=1):
        evs += round_events(1, i, *hands, confirm=not void)
        if void:
            evs.append({"type": "round_voided", "shoe": 1, "round": i, "reason": "test"})
        else:
            kept.append(hands[2][0].upper())
    s = fold(evs, "T1")
    p = valid(to_payload(s))
    expected = roads_to_dict(build_roads("".join(kept)))
    for key in ("big_road", "big_eye_boy", "small_road", "cockroach_pig", "grids"):
        got = p["roads"][key]
        if key == "big_road":
            got = [{k: v for k, v in c.items() if not k.endswith("pair")} for c in got]
            exp = [{k: v for k, v in c.items() if not k.endswith("pair")} for c in expected[key]]
            assert got == exp
        else:
            assert got == expected[key]
    assert p["statistics"]["rounds"] == len(kept)
    assert p["statistics"]["banker"] == kept.count("B")
    assert p["statistics"]["tie"] == kept.count("T")


def test_initial_payload_is_valid() -> None:
    valid(to_payload(DisplayState(table="T1")))


def test_pause_reason_and_misdeal_are_shown_until_resumed_or_the_next_round() -> None:
    """What the table display needs to say why play stopped and what a misdeal means."""
    start = [{"type": "shoe_started", "shoe": 1, "decks": 8},
             {"type": "round_started", "shoe": 1, "round": 1}]
    s = fold([*start, {"type": "round_paused", "shoe": 1, "round": 1,
                       "reason": "foreign_card"}], table="T1")
    p = valid(to_payload(s))
    assert (p["paused"], p["pause_reason"]) == (True, "foreign_card")
    p = valid(to_payload(project(s, {"type": "round_resumed", "shoe": 1, "round": 1})))
    assert (p["paused"], p["pause_reason"]) == (False, None)

    s = fold([*start, {"type": "misdeal", "shoe": 1, "round": 1, "kind": "extra_card",
                       "card": "QH", "policy": "burn"}], table="T1")
    p = valid(to_payload(s))
    assert p["misdeal"] == {"round": 1, "kind": "extra_card", "policy": "burn"}
    assert "QH" not in json.dumps(p)  # a discarded card's face is never shown
    p = valid(to_payload(project(s, {"type": "round_started", "shoe": 1, "round": 2})))
    assert p["misdeal"] is None and p["pause_reason"] is None
