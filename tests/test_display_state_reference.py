"""The display projection against docs/display.md and a reference computed here from the
cards (issue 15's campaign: pairs on the roads, re-sent cards, a round that starts with its
first card, and what a new round clears had no test; mutants of them survived).

The expected pairs, naturals and winners are worked out in this file from the card codes,
by the rule sheet (a pair: the first two cards of a hand share a rank; a natural: 8 or 9
on a hand's two cards), never read from the module under test.
"""

from __future__ import annotations

from typing import Any

import pytest

from shoe_controller.game.display_state import DisplayState, fold, project, to_payload

VALUE = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}


def total(cards: list[str]) -> int:
    return sum(VALUE.get(c[0], 0) if not c[0].isdigit() else int(c[0]) for c in cards) % 10


def pair(cards: list[str]) -> bool:
    return cards[0][0] == cards[1][0]


def natural(cards: list[str]) -> bool:
    return len(cards) == 2 and total(cards) >= 8


def round_events(rnd: int, player: list[str], banker: list[str],
                 confirm: bool = True) -> list[dict[str, Any]]:
    """One round's released events, the cards in deal order P B P B, then third cards."""
    pt, bt = total(player), total(banker)
    winner = "player" if pt > bt else "banker" if bt > pt else "tie"
    order = [("player", 1, player[0]), ("banker", 1, banker[0]),
             ("player", 2, player[1]), ("banker", 2, banker[1])]
    order += [("player", 3, c) for c in player[2:]] + [("banker", 3, c) for c in banker[2:]]
    evs: list[dict[str, Any]] = [{"type": "round_started", "shoe": 1, "round": rnd}]
    evs += [{"type": "card_dealt", "shoe": 1, "round": rnd, "hand": h, "position": p,
             "card": c} for h, p, c in order]
    evs.append({"type": "round_result", "shoe": 1, "round": rnd, "player": player,
                "banker": banker, "player_total": pt, "banker_total": bt, "winner": winner,
                "natural": natural(player) or natural(banker),
                "player_pair": pair(player), "banker_pair": pair(banker)})
    if confirm:
        evs.append({"type": "result_confirmed", "shoe": 1, "round": rnd})
    return evs


SHOE = [{"type": "shoe_started", "shoe": 1, "decks": 8}]
HANDS = [
    (["AS", "AH", "5C"], ["3C", "KC", "2D"]),  # player pair only: 7 v 5
    (["2S", "3S"], ["4D", "4H"]),              # banker pair only, banker natural 8 v 5
    (["QS", "QD"], ["9C", "9H"]),              # both pairs: 0 v 8, banker natural
    (["7S", "KC"], ["5H", "2D"]),              # no pair: 7 v 7 tie
    (["9H", "KD"], ["2C", "3C"]),              # player natural 9 v 5
    (["3S", "5D"], ["KH", "4C"]),              # player natural 8 v 4
]


def test_the_bead_plate_and_statistics_carry_each_round_s_pairs_and_natural() -> None:
    """docs/display.md: every result, ties included, one bead cell each, with its pair
    dots; statistics count pairs and naturals over the confirmed rounds."""
    evs = list(SHOE)
    for i, (p, b) in enumerate(HANDS, start=1):
        evs += round_events(i, p, b)
    payload = to_payload(fold(evs, "T1"))
    expected = []
    for p, b in HANDS:
        pt, bt = total(p), total(b)
        winner = "player" if pt > bt else "banker" if bt > pt else "tie"
        expected.append((winner, pair(p), pair(b), natural(p) or natural(b)))
    got = [(c["outcome"], c["player_pair"], c["banker_pair"], c["natural"])
           for c in payload["roads"]["bead_plate"]]
    assert got == expected
    big = [(c["player_pair"], c["banker_pair"]) for c in payload["roads"]["big_road"]]
    # the tie (round 4) has no cell of its own on the big road: its pairs are not drawn
    assert big == [(pp, bp) for w, pp, bp, _ in expected if w != "tie"]
    stats = payload["statistics"]
    assert stats["player_pair"] == sum(pair(p) for p, _ in HANDS) == 2
    assert stats["banker_pair"] == sum(pair(b) for _, b in HANDS) == 2
    assert stats["natural"] == sum(natural(p) or natural(b) for p, b in HANDS) == 4
    assert stats["player_natural"] == sum(natural(p) for p, _ in HANDS) == 2
    assert stats["banker_natural"] == sum(natural(b) for _, b in HANDS) == 2


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_a_re_sent_card_replaces_its_position_and_is_never_shown_twice(order) -> None:
    """display_state: a repeated (re-sent) card_dealt replaces the card at its position."""
    player, banker = ["AS", "7H", "5C"], ["3C", "KC", "2D"]
    evs = [*SHOE, *round_events(1, player, banker)[:-2]]  # all six cards, no result yet
    s = fold(evs)
    assert (s.player_cards, s.banker_cards) == (tuple(player), tuple(banker))
    cards = [e for e in evs if e["type"] == "card_dealt"]
    for ev in cards if order == "forward" else cards[::-1]:
        s = project(s, ev)
        assert (s.player_cards, s.banker_cards) == (tuple(player), tuple(banker)), ev
    p = to_payload(s)
    assert p["player"] == {"cards": player, "score": total(player)}
    assert p["banker"] == {"cards": banker, "score": total(banker)}
    # shoe progress counts cards that left the shoe: six, however often they were re-sent
    assert p["shoe_progress"]["cards_dealt"] == len(player) + len(banker) == 6
    s = project(s, round_events(1, player, banker)[-2])  # the result, after the re-sends
    assert to_payload(s)["shoe_progress"]["cards_dealt"] == 6


def test_a_new_round_clears_the_prompt_the_pause_and_the_misdeal() -> None:
    """docs/display.md: the misdeal is "cleared when the next round starts"; so are the
    last round's draw prompt and a pause that was never resumed (a paused table whose
    supervisor opens the next round)."""
    s = fold([*SHOE, *round_events(1, ["AS", "7H"], ["3C", "KC"])[:5],
              {"type": "draw_prompt", "shoe": 1, "round": 1, "prompt": "player_draws"},
              {"type": "misdeal", "shoe": 1, "round": 1, "kind": "extra_card",
               "policy": "burn"},
              {"type": "round_paused", "shoe": 1, "round": 1, "reason": "link_down"}])
    p = to_payload(s)
    assert (p["prompt"], p["paused"], p["pause_reason"]) == ("player_draws", True, "link_down")
    assert p["misdeal"] == {"round": 1, "kind": "extra_card", "policy": "burn"}
    s = project(s, {"type": "round_started", "shoe": 1, "round": 2})
    p = to_payload(s)
    assert (p["round"], p["phase"], p["prompt"]) == (2, "dealing", None)
    assert (p["paused"], p["pause_reason"], s.paused, s.pause_reason) == (False, None, False,
                                                                          None)
    assert (p["misdeal"], p["notice"], p["bets_open"]) == (None, None, False)


def test_a_card_of_a_round_never_announced_starts_that_round() -> None:
    """A display folded from a released stream whose round_started is missing (or
    released later) still shows the new round: its number, dealing, no more bets, the
    last round's result kept once in the roads and the new card alone on the table."""
    s = fold([*SHOE, *round_events(1, ["9H", "KD"], ["2C", "3C"], confirm=False),
              {"type": "bets_open", "shoe": 1, "round": 2, "bets": ["player"]}])
    assert s.round == 1 and s.bets_open
    s = project(s, {"type": "card_dealt", "shoe": 1, "round": 2, "hand": "player",
                    "position": 1, "card": "4S"})
    p = to_payload(s)
    assert (p["round"], p["cards_round"], p["phase"], p["bets_open"]) == (2, 2, "dealing",
                                                                        False)
    assert p["player"] == {"cards": ["4S"], "score": 4}
    assert p["banker"] == {"cards": [], "score": None} and p["result"] is None
    assert [c["outcome"] for c in p["roads"]["bead_plate"]] == ["player"]
    assert p["statistics"]["rounds"] == 1 and p["statistics"]["player"] == 1
    assert p["shoe_progress"]["cards_dealt"] == 5


def test_a_card_on_the_table_is_always_shown_as_dealing() -> None:
    """PHASES: "dealing: a round is open: cards appear as they are released". The one
    event order where the round number is already the card's but its cards are not yet
    shown, apart from a fresh round: a shoe_ended released before that round's first card
    (the card still appears as dealt, not under "shoe ended")."""
    s = fold([*SHOE, {"type": "round_started", "shoe": 1, "round": 1},
              {"type": "shoe_ended", "shoe": 1, "rounds": 0, "reason": "cut_card"}])
    assert s.phase == "shoe_ended" and s.round == 1
    s = project(s, {"type": "card_dealt", "shoe": 1, "round": 1, "hand": "banker",
                    "position": 1, "card": "8D"})
    assert (s.phase, s.banker_cards, s.cards_round) == ("dealing", ("8D",), 1)


def test_a_fresh_fold_is_the_empty_state_and_a_non_event_is_named() -> None:
    assert fold([]) == DisplayState() and fold([]).table == ""
    assert to_payload(fold([]))["table"] == ""
    with pytest.raises(TypeError) as info:
        project(DisplayState(), 42)
    assert str(info.value) == "not a domain event: 42"


def results_only(rnd: int, player: list[str], banker: list[str]) -> dict[str, Any]:
    """A round's round_result alone: a stream released without the card events."""
    return round_events(rnd, player, banker, confirm=False)[-1]


def test_results_released_without_their_cards_are_shown_and_counted() -> None:
    """Every round_result carries the round's cards; a display that never saw them one by
    one (or saw another round's) shows them from the result, counts each card once, keeps
    an unconfirmed earlier result in the roads once, and takes no more bets."""
    p1, b1 = ["9H", "KD"], ["2C", "3C"]
    p2, b2 = ["AS", "2H", "3C"], ["4D", "KC"]  # 6 v 4: three cards against two
    s = fold([*SHOE, *round_events(1, p1, b1, confirm=False)])
    assert s.cards_out == 4
    s = project(s, {"type": "bets_open", "shoe": 1, "round": 2, "bets": ["player"]})
    s = project(s, results_only(2, p2, b2))
    p = to_payload(s)
    assert (p["round"], p["cards_round"], p["phase"]) == (2, 2, "result")
    assert p["player"] == {"cards": p2, "score": total(p2)}
    assert p["banker"] == {"cards": b2, "score": total(b2)}
    assert p["result"]["round"] == 2 and p["result"]["winner"] == "player"
    assert p["bets_open"] is False and p["bets_round"] is None and p["bets"] == []
    assert p["shoe_progress"]["cards_dealt"] == 4 + 5  # round 2's five cards, once
    assert [c["outcome"] for c in p["roads"]["bead_plate"]] == ["player"]  # round 1 kept
    s = project(s, results_only(2, p2, b2))  # re-sent: shown already, nothing twice
    s = project(s, {"type": "result_confirmed", "shoe": 1, "round": 2})
    p = to_payload(s)
    assert [c["outcome"] for c in p["roads"]["bead_plate"]] == ["player", "player"]
    assert p["statistics"]["rounds"] == 2 and p["shoe_progress"]["cards_dealt"] == 9
    s = project(s, results_only(3, ["5S", "3D"], ["KH", "4C"]))  # 8 v 4, player natural
    assert s.result is not None and s.result.player_natural and not s.result.banker_natural
    assert s.cards_out == 13 and len(s.results) == 2


def test_an_unconfirmed_result_is_re_sent_and_counted_once() -> None:
    s = fold([*SHOE, results_only(1, ["9H", "KD"], ["2C", "3C"]),
              results_only(1, ["9H", "KD"], ["2C", "3C"]),
              {"type": "result_confirmed", "shoe": 1, "round": 1}])
    assert s.statistics.rounds == 1 and len(s.results) == 1 and s.cards_out == 4


def test_a_confirmation_with_no_result_shown_changes_nothing() -> None:
    s = fold([*SHOE, *round_events(1, ["9H", "KD"], ["2C", "3C"], confirm=False),
              {"type": "round_voided", "shoe": 1, "round": 2, "reason": "supervisor"}])
    assert s.result is None and len(s.results) == 1  # round 1 kept, then round 2 voided
    assert project(s, {"type": "result_confirmed", "shoe": 1, "round": 2}) == s
    # a confirmation of another round than the one shown commits nothing
    t = fold([*SHOE, results_only(3, ["9H", "KD"], ["2C", "3C"])])
    assert project(t, {"type": "result_confirmed", "shoe": 1, "round": 2}) == t


def test_a_void_clears_the_round_and_keeps_an_earlier_result_once() -> None:
    """docs/display.md: a voided round never reaches the roads; the table shows the void
    notice, no cards, no prompt, and a pause the void ended is over."""
    s = fold([*SHOE, results_only(1, ["9H", "KD"], ["2C", "3C"]),
              {"type": "round_voided", "shoe": 1, "round": 2, "reason": "supervisor"}])
    p = to_payload(s)
    assert (p["round"], p["cards_round"], p["phase"]) == (2, 2, "voided")
    assert [c["outcome"] for c in p["roads"]["bead_plate"]] == ["player"]
    s = fold([*SHOE, *round_events(1, ["AS", "7H"], ["3C", "KC"])[:5],
              {"type": "draw_prompt", "shoe": 1, "round": 1, "prompt": "player_draws"},
              {"type": "round_paused", "shoe": 1, "round": 1, "reason": "link_down"},
              {"type": "round_voided", "shoe": 1, "round": 1, "reason": "supervisor"}])
    p = to_payload(s)
    assert (p["round"], p["cards_round"], p["phase"], p["prompt"]) == (1, 1, "voided", None)
    assert p["paused"] is False and s.pause_reason is None
    assert p["player"]["cards"] == [] and p["banker"]["cards"] == [] and s.results == ()
    assert p["notice"] == "Round 1 void: all bets refunded"


def test_a_pause_reason_is_the_latest_pause_s_own() -> None:
    """docs/display.md: pause_reason is the round_paused reason while paused, else null:
    never a reason left over from an earlier pause, never shown once resumed."""
    s = fold([*SHOE, {"type": "round_started", "shoe": 1, "round": 1},
              {"type": "round_paused", "shoe": 1, "round": 1, "reason": "link_down"},
              {"type": "round_resumed", "shoe": 1, "round": 1}])
    assert s.pause_reason is None and to_payload(s)["pause_reason"] is None
    s = project(s, {"type": "round_paused", "shoe": 1, "round": 1, "reason": ""})
    p = to_payload(s)
    assert (p["paused"], p["pause_reason"]) == (True, None)
    assert to_payload(DisplayState(pause_reason="link_down"))["pause_reason"] is None


def test_the_end_of_the_shoe_closes_bets_pause_and_prompt() -> None:
    s = fold([*SHOE, *round_events(1, ["AS", "7H"], ["3C", "KC"])[:5],
              {"type": "draw_prompt", "shoe": 1, "round": 1, "prompt": "player_draws"},
              {"type": "bets_open", "shoe": 1, "round": 2, "bets": ["player"]},
              {"type": "round_paused", "shoe": 1, "round": 1, "reason": "link_down"},
              {"type": "shoe_ended", "shoe": 1, "rounds": 1, "reason": "cut_card"}])
    p = to_payload(s)
    assert p["phase"] == "shoe_ended" and p["prompt"] is None
    assert p["bets_open"] is False and p["bets_round"] is None and p["bets"] == []
    assert p["paused"] is False and p["pause_reason"] is None and s.pause_reason is None


def test_bets_close_with_a_card_even_if_their_opening_came_late() -> None:
    """docs/display.md: a round that has started takes no more bets; a card shows it has."""
    s = fold([*SHOE, {"type": "round_started", "shoe": 1, "round": 1},
              {"type": "bets_open", "shoe": 1, "round": 1, "bets": ["player"]}])
    assert to_payload(s)["bets_round"] == 1
    s = project(s, {"type": "card_dealt", "shoe": 1, "round": 1, "hand": "player",
                    "position": 1, "card": "4S"})
    p = to_payload(s)
    assert p["bets_open"] is False and p["bets_round"] is None and p["bets"] == []


def test_odd_events_never_hide_a_card_or_show_junk() -> None:
    """A card event without a position is added (never put over the first card); a
    misdeal without kind or policy shows empty strings, not made-up words."""
    s = fold([*SHOE, *round_events(1, ["AS", "7H"], ["3C", "KC"])[:3],
              {"type": "card_dealt", "shoe": 1, "round": 1, "hand": "player", "card": "2D"}])
    assert s.player_cards == ("AS", "2D") and s.banker_cards == ("3C",)
    s = project(s, {"type": "misdeal", "shoe": 1, "round": 1, "card": None})
    assert to_payload(s)["misdeal"] == {"round": 1, "kind": "", "policy": ""}
