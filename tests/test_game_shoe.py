"""Scenarios of the shoe state machine: burn rules, cut card policies, misdeal policies,
missing card, pause/resume/void, unreadable, foreign and excess cards, resume from events."""

from __future__ import annotations

import pytest

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.events import decode_event, encode_event
from shoe_controller.game.replay_text import replay_inputs
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe, fold


def run(text: str, *extra: I.Input, **rules):
    """Run a replay text (plus extra inputs) on a shoe with these rules; (shoe, events)."""
    shoe = Shoe(Rules(**rules))
    events = [e for inp in [*replay_inputs(text), *extra] for e in shoe.apply(inp)]
    return shoe, events


def types(events):
    return [e.type for e in events]


def of(events, kind):
    return [e for e in events if e.type == kind]


# ---------------------------------------------------------------- burn rules


@pytest.mark.parametrize(("indicator", "burn"), [("AS", 1), ("9D", 9), ("KH", 10), ("TC", 10)])
def test_first_card_burn(indicator, burn):
    cards = " ".join(["2C"] * burn)
    shoe, events = run(f"{indicator} {cards} 9H 2C KD 3S")
    ind = of(events, "burn_indicator")[0]
    assert (ind.card, ind.burn_count) == (indicator, burn)
    assert len(of(events, "card_burned")) == burn
    assert of(events, "bets_open")[0].round == 1
    (result,) = of(events, "round_result")
    assert result.player == ("9H", "KD")
    assert shoe.state.burned == burn + 1 and shoe.state.dealt == 4


def test_burn_by_decks_fixed_and_none():
    _, ev = run("2C 3C 4C 5C 6C 7C 9H 2C KD 3S", burn="decks", decks=6)
    assert len(of(ev, "card_burned")) == 6 and not of(ev, "burn_indicator")
    _, ev = run("2C 3C 9H 2C KD 3S", burn="fixed", burn_cards=2)
    assert len(of(ev, "card_burned")) == 2
    _, ev = run("9H 2C KD 3S", burn="none")
    assert types(ev)[:3] == ["shoe_started", "bets_open", "round_started"]


def test_unreadable_burn_card_is_burned_unread_but_indicator_waits_for_manual_entry():
    shoe = Shoe(Rules(burn="fixed", burn_cards=2))
    shoe.apply(I.NewShoe())
    ev = shoe.apply(I.UnreadableCard("glare"))
    assert ev[0].type == "card_burned" and ev[0].card is None
    assert shoe.state.unread == 1

    shoe = Shoe(Rules())
    shoe.apply(I.NewShoe())
    assert types(shoe.apply(I.UnreadableCard("glare"))) == ["fault", "round_paused"]
    assert types(shoe.apply(I.Void())) == ["fault"]  # cannot void the indicator
    assert types(shoe.apply(I.Resume())) == ["fault"]  # a manual entry is required
    ev = shoe.apply(I.ManualCard(parse_card("3H")))
    assert types(ev) == ["round_resumed", "burn_indicator"] and ev[1].burn_count == 3


# ---------------------------------------------------------------- cut card


@pytest.mark.parametrize(
    ("policy", "text", "last"),
    [
        # cut card mid-round (after round 2's first card)
        ("last_round", "9H 2C KD 3S  9H CUT 2C KD 3S  9H 2C KD 3S", 2),
        ("one_more_round", "9H 2C KD 3S  9H CUT 2C KD 3S  9H 2C KD 3S", 3),
        # between rounds: the next round is the last under both policies
        ("last_round", "9H 2C KD 3S  CUT 9H 2C KD 3S  9H 2C KD 3S", 2),
        ("one_more_round", "9H 2C KD 3S  CUT 9H 2C KD 3S  9H 2C KD 3S", 2),
    ],
)
def test_cut_card_policies(policy, text, last):
    shoe, ev = run(text, burn="none", cut_card=policy)
    cut = of(ev, "cut_card")[0]
    assert cut.when == ("mid_round" if "9H CUT" in text else "between_rounds")
    assert of(ev, "last_round")[0].round == last
    assert of(ev, "shoe_ended")[0].rounds == last
    assert [r.round for r in of(ev, "round_result")] == list(range(1, last + 1))
    # whatever follows the end of the shoe is a misdeal, never a round
    assert all(m.kind == "after_shoe_end" for m in of(ev, "misdeal"))
    assert len(of(ev, "misdeal")) == 4 * (3 - last)
    assert shoe.state.phase == "ended"


def test_second_cut_card_is_an_alert():
    _, ev = run("9H CUT 2C CUT KD 3S", burn="none")
    assert [a.kind for a in of(ev, "integrity_alert")] == ["duplicate_cut_card"]


# ---------------------------------------------------------------- misdeals


def test_extra_card_burn_policy_with_confirm_button():
    shoe, ev = run("9H 2C KD 3S 7H RESULT 5S", burn="none", confirm="button")
    (m,) = of(ev, "misdeal")
    assert (m.kind, m.card, m.policy, m.round) == ("extra_card", "7H", "burn", 1)
    assert of(ev, "result_confirmed")[0].round == 1
    assert of(ev, "round_started")[-1].round == 2 and shoe.state.discarded == 1


def test_extra_card_void_policy_voids_the_round_and_it_never_settles():
    _shoe, ev = run("9H 2C KD 3S 7H RESULT 5S", burn="none", confirm="button",
                   extra_card="void")
    (m,) = of(ev, "misdeal")
    assert m.policy == "void"
    assert of(ev, "round_voided")[0].round == 1
    assert not of(ev, "result_confirmed")  # RESULT after the void confirms nothing
    assert of(ev, "round_started")[-1].round == 2


def test_extra_card_carry_policy_makes_it_the_next_first_card():
    shoe, ev = run("9H 2C KD 3S 7H RESULT 5S 8D 4C", burn="none", confirm="button",
                   extra_card="carry")
    (m,) = of(ev, "misdeal")
    assert m.policy == "carry" and m.card == "7H"
    r2 = [e for e in of(ev, "card_dealt") if e.round == 2]
    assert [(e.hand, e.position, e.card) for e in r2] == [
        ("player", 1, "7H"), ("banker", 1, "5S"), ("player", 2, "8D"), ("banker", 2, "4C")]
    assert shoe.state.carried == () and shoe.state.dealt == 8


def test_card_with_no_round_open_in_button_mode():
    for policy, applied in (("burn", "burn"), ("void", "burn"), ("carry", "carry")):
        _, ev = run("NEW 9H 2C KD 3S 7H NEW 5S 8D 4C", burn="none", rounds="button",
                    extra_card=policy)
        (m,) = of(ev, "misdeal")
        assert (m.kind, m.round, m.policy) == ("no_round_open", None, applied)
        assert not of(ev, "round_voided")  # there is no round to void between rounds


def test_missing_card_is_a_fault_that_pauses():
    shoe, ev = run("NEW AH 2C 3D 4S NEW", burn="none", rounds="button")
    assert types(ev)[-2:] == ["fault", "round_paused"]
    assert ev[-2].kind == "missing_card" and "player card 3" in ev[-2].detail
    ev = shoe.apply(I.Void())
    assert types(ev) == ["round_voided", "bets_open"]


# ---------------------------------------------------------------- supervisor


def test_pause_resume_holds_the_round():
    _shoe, ev = run("9H 2C PAUSE 7D RESUME KD 3S", burn="none")
    assert of(ev, "round_paused")[0].round == 1
    (m,) = of(ev, "misdeal")
    assert (m.kind, m.card) == ("card_while_paused", "7D")
    assert of(ev, "round_resumed")[0].round == 1
    assert of(ev, "round_result")[0].player == ("9H", "KD")


def test_void_refunds_the_round_and_play_goes_on():
    _shoe, ev = run("9H 2C KD VOID 5S 8D 4C 2H", burn="none")
    assert of(ev, "round_voided")[0].round == 1
    assert not [r for r in of(ev, "round_result") if r.round == 1]
    assert of(ev, "round_result")[0].round == 2


def test_unreadable_round_card_pauses_until_manual_entry():
    shoe = Shoe(Rules(burn="none"))
    for inp in replay_inputs("9H 2C"):
        shoe.apply(inp)
    ev = shoe.apply(I.UnreadableCard("blurred"))
    assert types(ev) == ["fault", "round_paused"] and ev[0].kind == "unreadable_card"
    assert shoe.state.due() is None  # nothing is dealt while paused
    ev = shoe.apply(I.ManualCard(parse_card("KD")))
    assert types(ev) == ["round_resumed", "card_dealt"] and ev[1].card == "KD"
    assert shoe.state.due() == ("banker", 2)


def test_a_read_while_waiting_for_a_manual_entry_is_never_taken_for_the_unread_card():
    shoe = Shoe(Rules(burn="none"))
    for inp in replay_inputs("9H 2C"):
        shoe.apply(inp)
    shoe.apply(I.UnreadableCard("blurred"))
    ev = shoe.apply(I.CardSeen(parse_card("3S")))  # the dealer dealt on
    assert types(ev) == ["misdeal"] and ev[0].kind == "card_while_paused"
    assert shoe.state.pending and shoe.state.due() is None
    ev = shoe.apply(I.ManualCard(parse_card("KD")))
    assert types(ev) == ["round_resumed", "card_dealt"] and ev[1].card == "KD"


def test_unreadable_round_card_then_void():
    shoe = Shoe(Rules(burn="none"))
    for inp in replay_inputs("9H 2C"):
        shoe.apply(inp)
    shoe.apply(I.UnreadableCard())
    ev = shoe.apply(I.Void())
    assert types(ev) == ["misdeal", "round_voided", "bets_open"]
    assert ev[0].card is None and shoe.state.unread == 1


def test_foreign_card_alerts_and_pauses():
    shoe = Shoe(Rules(burn="none"))
    for inp in replay_inputs("9H"):
        shoe.apply(inp)
    ev = shoe.apply(I.ForeignCard("EAN:4006381333931"))
    assert types(ev) == ["integrity_alert", "round_paused"]
    assert ev[0].kind == "foreign_card" and ev[0].evidence == {"payload": "EAN:4006381333931"}
    assert types(shoe.apply(I.Resume())) == ["round_resumed"]


def test_excess_card_alert():
    _, ev = run("AS AS AS", burn="none", decks=2)
    (alert,) = of(ev, "integrity_alert")
    assert alert.kind == "excess_card"
    assert alert.evidence == {"card": "AS", "seen": 3, "decks": 2}


def test_fault_input_pauses_an_open_round_only():
    shoe, ev = run("9H", I.Fault("camera_lost", "no frames"), burn="none")
    assert types(ev)[-2:] == ["fault", "round_paused"]
    shoe, ev = run("9H 2C KD 3S", I.Fault("camera_lost"), burn="none")
    assert types(ev)[-1:] == ["fault"] and shoe.state.paused is None


@pytest.mark.parametrize("kind", ["lid_opened", "shoe_empty"])
def test_the_shoe_opened_is_routine_between_shoes_and_a_fault_during_one(kind):
    opened = I.ShoeOpened(kind)
    assert Shoe(Rules(burn="none")).apply(opened) == []  # loading the first shoe
    shoe, ev = run("9H", opened, burn="none")  # mid-round: fault and pause
    assert types(ev)[-2:] == ["fault", "round_paused"] and ev[-2].kind == kind
    shoe, ev = run("9H 2C KD 3S", opened, burn="none")  # between rounds: fault
    assert types(ev)[-1:] == ["fault"] and shoe.state.paused is None
    shoe, ev = run("9H 2C KD 3S  CUT 9H 2C KD 3S", burn="none", cut_card="last_round")
    assert types(ev)[-1] == "shoe_ended"
    assert shoe.apply(opened) == []  # unloading the finished shoe


def test_new_shoe_mid_round_voids_and_ends_the_shoe():
    shoe, ev = run("9H 2C SHOE", burn="none")
    assert types(ev)[-4:] == ["round_voided", "shoe_ended", "shoe_started", "bets_open"]
    assert of(ev, "shoe_ended")[0].reason == "new_shoe" and shoe.state.shoe == 2


def test_confirm_button_and_round_button():
    shoe, ev = run("NEW 9H 2C KD 3S", burn="none", rounds="button", confirm="button")
    assert types(ev)[-1] == "round_result" and shoe.state.awaiting_confirm
    assert types(shoe.apply(I.NewRound())) == ["fault"]  # confirm first
    assert types(shoe.apply(I.ConfirmResult())) == ["result_confirmed", "bets_open"]
    assert types(shoe.apply(I.NewRound())) == ["round_started"]


# ---------------------------------------------------------------- event sourcing


def test_resume_mid_round_from_journaled_events():
    rules = Rules()
    text = "5H 2C 3D 4S 9H 5C  7S KC 9D 5D 3H  9H 2C KD"
    shoe = Shoe(rules)
    journal = [encode_event(e) for inp in replay_inputs(text) for e in shoe.apply(inp)]
    resumed = Shoe.from_events(rules, (decode_event(b) for b in journal))
    assert resumed.state == shoe.state
    assert resumed.state.due() == ("banker", 2)
    a = shoe.apply(I.CardSeen(parse_card("3S")))
    b = resumed.apply(I.CardSeen(parse_card("3S")))
    assert a == b and types(a)[-3:] == ["round_result", "result_confirmed", "bets_open"]
    assert fold(rules, []) == Shoe(rules).state
