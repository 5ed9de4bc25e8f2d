"""Supervisor and rare-state paths of the shoe machine (issue 15).

Each input here reaches a state the ordinary scenarios never do: an unreadable card while
the round waits for the confirm button, a foreign card or NEW before any shoe, reveal
buttons while paused or pressed twice, NEW / confirm / a second pause while paused,
void-insurance with no round open. Mutants of these paths either raised ``TypeError`` or
accepted an input the rules (docs/game.md) say must be refused. The expected events are
written from the rule text, never read back from the machine; every case also checks
that folding the emitted events rebuilds the state (what a journal replay relies on).
"""

from __future__ import annotations

import pytest

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.insurance import InsuranceConfig
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe, decide, fold, initial_state, step

#: P 7S 9D = 6 stands, B KC 5D = 5 draws 3H -> 8: Banker wins, round complete on 5 cards
ROUND = "7S KC 9D 5D 3H"
BUTTONS = {"burn": "none", "rounds": "button", "confirm": "button"}
#: reveal buttons: offers come with the presses
REVEAL = InsuranceConfig(enabled=True, reveal="button")


def cards(text: str) -> list[I.CardSeen]:
    return [I.CardSeen(parse_card(c)) for c in text.split()]


class Table:
    """A shoe and every event it emitted, checked against a fold after each input."""

    def __init__(self, **rules) -> None:
        self.rules = Rules(**rules)
        self.shoe = Shoe(self.rules)
        self.events: list = []

    def feed(self, *inputs: I.Input) -> list:
        last: list = []
        for inp in inputs:
            last = self.shoe.apply(inp)
            self.events.extend(last)
            assert fold(self.rules, self.events) == self.shoe.state
        return last

    @property
    def state(self):
        return self.shoe.state


def kinds(events) -> list[str]:
    return [e.type for e in events]


def refused(events, detail_part: str) -> None:
    assert kinds(events) == ["fault"], events
    assert events[0].kind == "input_refused"
    assert detail_part in events[0].detail


# --------------------------------------------- unreadable card while awaiting the confirm


def test_unreadable_card_while_awaiting_confirm_is_a_burned_misdeal_and_the_round_stands():
    t = Table(**BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards(ROUND))
    assert t.state.awaiting_confirm
    evs = t.feed(I.UnreadableCard("blur"))
    assert kinds(evs) == ["misdeal"]
    m = evs[0]
    assert (m.round, m.kind, m.card, m.policy) == (1, "extra_card", None, "burn")
    assert t.state.awaiting_confirm and t.state.paused is None and t.state.unread == 1
    assert kinds(t.feed(I.ConfirmResult())) == ["result_confirmed", "bets_open"]


def test_unreadable_card_while_awaiting_confirm_voids_under_the_void_policy():
    t = Table(extra_card="void", **BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards(ROUND))
    evs = t.feed(I.UnreadableCard())
    assert kinds(evs) == ["misdeal", "round_voided", "bets_open"]
    assert (evs[0].card, evs[0].policy, evs[1].reason, evs[2].round) == (
        None, "void", "misdeal", 2)
    assert t.state.phase == "between" and t.state.unread == 1


def test_unreadable_card_to_carry_while_awaiting_confirm_waits_for_the_manual_entry():
    t = Table(extra_card="carry", **BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards(ROUND))
    evs = t.feed(I.UnreadableCard())
    assert kinds(evs) == ["fault", "round_paused"]
    assert evs[0].kind == evs[1].reason == "unreadable_card"
    # the supervisor enters it: it is carried to the next round
    evs = t.feed(I.ManualCard(parse_card("4C")))
    assert kinds(evs) == ["round_resumed", "misdeal"]
    assert (evs[1].card, evs[1].policy) == ("4C", "carry")
    assert t.state.carried == ("4C",)


def test_unreadable_card_while_an_insurance_round_awaits_confirm():
    # insurance with a confirm button: the result waits for the confirmation
    t = Table(insurance=REVEAL, **BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards(ROUND))
    evs = t.feed(I.UnreadableCard())
    assert kinds(evs) == ["misdeal"] and evs[0].policy == "burn"
    evs = t.feed(I.ConfirmResult())
    assert kinds(evs) == ["round_result", "result_confirmed", "bets_open"]
    assert evs[0].winner == "banker" and evs[0].settlement["banker"] == 0.95


def test_unreadable_first_card_is_never_a_silent_burn():
    """The burn indicator decides how many cards burn: unread, the shoe waits for it."""
    t = Table(burn="first_card")
    evs = t.feed(I.NewShoe(), I.UnreadableCard("glare"))
    assert kinds(evs) == ["fault", "round_paused"]
    assert evs[0].kind == "unreadable_card" and evs[1].reason == "unreadable_card"
    assert t.state.phase == "indicator" and t.state.burned == 0 and t.state.unread == 0
    # a void cannot skip it, a resume cannot either
    assert t.feed(I.Void())[0].kind == "manual_card_required"
    assert t.feed(I.Resume())[0].kind == "manual_card_required"
    evs = t.feed(I.ManualCard(parse_card("3D")))
    assert kinds(evs) == ["round_resumed", "burn_indicator"]
    assert (evs[1].card, evs[1].burn_count) == ("3D", 3)


def test_unreadable_first_card_before_any_shoe_starts_the_shoe_and_waits():
    t = Table(burn="first_card")
    evs = t.feed(I.UnreadableCard())
    assert kinds(evs) == ["shoe_started", "fault", "round_paused"]
    assert t.state.phase == "indicator" and t.state.pending


# --------------------------------------------------------------- before any shoe


def test_foreign_card_before_any_shoe_starts_the_shoe_then_alerts_and_pauses():
    t = Table(burn="none")
    evs = t.feed(I.ForeignCard("ZZ-9"))
    assert kinds(evs) == ["shoe_started", "bets_open", "integrity_alert", "round_paused"]
    alert = evs[2]
    assert (alert.kind, alert.evidence, alert.round) == ("foreign_card", {"payload": "ZZ-9"},
                                                         None)
    assert t.state.paused == "foreign_card"


def test_foreign_card_before_any_shoe_with_a_burn_indicator():
    t = Table()
    evs = t.feed(I.ForeignCard("ZZ-9"))
    assert kinds(evs) == ["shoe_started", "integrity_alert", "round_paused"]


def test_foreign_card_while_paused_alerts_without_a_second_pause():
    t = Table(burn="none")
    t.feed(I.NewShoe(), I.Pause("key"))
    evs = t.feed(I.ForeignCard("ZZ"))
    assert kinds(evs) == ["integrity_alert"]
    assert t.state.paused == "key"


def test_new_round_before_any_shoe_starts_the_shoe_and_opens_round_one():
    t = Table(**BUTTONS)
    evs = t.feed(I.NewRound())
    assert kinds(evs) == ["shoe_started", "bets_open", "round_started"]
    assert evs[2].round == 1 and t.state.round_open


def test_new_round_before_any_shoe_with_a_burn_still_due_is_refused():
    t = Table(rounds="button")
    evs = t.feed(I.NewRound())
    assert kinds(evs) == ["shoe_started", "fault"]
    assert evs[1].kind == "input_refused" and "indicator" in evs[1].detail
    assert not t.state.round_open


@pytest.mark.parametrize("inp", [I.Resume(), I.Void(), I.ConfirmResult()])
def test_supervisor_inputs_before_any_shoe_change_nothing(inp):
    t = Table(**BUTTONS)
    assert t.feed(inp) == []
    assert t.state.phase == "no_shoe"


def test_pause_before_any_shoe_is_refused():
    t = Table(**BUTTONS)
    refused(t.feed(I.Pause()), "before any shoe")
    assert t.state.paused is None


# --------------------------------------------------------------- while paused


def test_second_pause_is_refused_and_the_first_reason_stands():
    t = Table(**BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards("7S KC"))
    assert kinds(t.feed(I.Fault("camera_lost"))) == ["fault", "round_paused"]
    refused(t.feed(I.Pause("key")), "already paused")
    assert t.state.paused == "camera_lost"
    assert kinds(t.feed(I.Resume())) == ["round_resumed"]
    assert t.state.paused is None


def test_second_pause_between_rounds_is_refused():
    t = Table(**BUTTONS)
    t.feed(I.NewShoe())
    assert kinds(t.feed(I.Pause("key"))) == ["round_paused"]
    refused(t.feed(I.Pause("again")), "already paused")
    assert t.state.paused == "key"


def test_new_round_while_paused_is_refused_between_and_in_a_round():
    t = Table(**BUTTONS)
    t.feed(I.NewShoe(), I.Pause())
    refused(t.feed(I.NewRound()), "paused")
    assert not t.state.round_open
    t.feed(I.Resume(), I.NewRound(), *cards(ROUND), I.Pause())
    refused(t.feed(I.NewRound()), "paused")
    assert t.state.round == 1


def test_confirm_while_paused_is_refused_and_works_after_resume():
    t = Table(**BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards(ROUND), I.Pause())
    refused(t.feed(I.ConfirmResult()), "paused")
    assert t.state.awaiting_confirm
    t.feed(I.Resume())
    assert kinds(t.feed(I.ConfirmResult())) == ["result_confirmed", "bets_open"]


def test_confirm_while_paused_with_insurance_gives_no_result():
    t = Table(insurance=REVEAL, **BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards(ROUND), I.Pause())
    refused(t.feed(I.ConfirmResult()), "paused")
    assert not [e for e in t.events if e.type == "round_result"]


def test_reveal_while_paused_is_refused_and_offers_nothing():
    t = Table(insurance=REVEAL, **BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards("7S KC 9D 5D"), I.Pause())
    refused(t.feed(I.Reveal("banker")), "paused")
    assert t.state.revealed == (0, 0) and t.state.offers == ()


def test_reveal_pressed_twice_offers_once():
    t = Table(insurance=REVEAL, **BUTTONS)
    # P 2C 3D = 5, B 9S 8H = 7 (unrevealed player: Banker 7 row, 2.0 on a Player win)
    t.feed(I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 8H"))
    first = t.feed(I.Reveal("banker"))
    assert kinds(first) == ["hand_revealed", "insurance_offer"]
    assert (first[1].side, first[1].insures, first[1].odds) == ("banker", "player", 2.0)
    assert t.feed(I.Reveal("banker")) == []
    assert len(t.state.offers) == 1
    # revealing Player too: 5 v 7 is the "0-5 / 7" row, 4.0
    evs = t.feed(I.Reveal("player"))
    assert kinds(evs) == ["insurance_closed", "hand_revealed", "insurance_offer"]
    assert evs[2].odds == 4.0
    assert t.feed(I.Reveal("player")) == []


def test_reveal_outside_a_round_or_without_reveal_buttons_does_nothing():
    t = Table(insurance=REVEAL, **BUTTONS)
    assert t.feed(I.Reveal("player")) == []          # before any shoe
    t.feed(I.NewShoe())
    assert t.feed(I.Reveal("player")) == []          # between rounds
    auto = Table(insurance=InsuranceConfig(enabled=True), **BUTTONS)
    auto.feed(I.NewShoe(), I.NewRound(), *cards("2C 9S"))
    assert auto.feed(I.Reveal("player")) == []


# ------------------------------------------------------------- void insurance


def test_void_insurance_outside_a_round_is_refused():
    t = Table(insurance=REVEAL, **BUTTONS)
    refused(t.feed(I.VoidInsurance()), "no round insurance")
    t.feed(I.NewShoe())
    refused(t.feed(I.VoidInsurance()), "no round insurance")
    t.feed(I.NewRound(), *cards("2C 9S"))
    evs = t.feed(I.VoidInsurance("exposed"))
    assert kinds(evs) == ["insurance_voided"] and evs[0].reason == "exposed"
    refused(t.feed(I.VoidInsurance()), "no round insurance")  # a second time


def test_void_insurance_at_a_table_without_insurance_does_nothing():
    t = Table(**BUTTONS)
    t.feed(I.NewShoe(), I.NewRound())
    assert t.feed(I.VoidInsurance()) == []


@pytest.mark.parametrize("meantime", [
    [I.UnreadableCard("blur")], [I.UnreadableCard(), I.UnreadableCard()],
    [I.CardSeen(parse_card("4H")), I.UnreadableCard()]])
def test_another_unreadable_card_while_one_awaits_its_entry_does_not_end_the_wait(meantime):
    """docs/game.md: "Only a ManualCard resolves it: a card read in the meantime is ... a
    card_while_paused misdeal, never taken for the unread one". An unreadable read in the
    meantime must not end the wait either: a resume stays refused, and the entered card
    is dealt where the unread one belongs (Banker's first card here)."""
    t = Table(**BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards("7S"), I.UnreadableCard())
    for inp in meantime:
        evs = t.feed(inp)
        assert kinds(evs) == ["misdeal"] and evs[0].kind == "card_while_paused"
    assert t.state.pending
    evs = t.feed(I.Resume())
    assert kinds(evs) == ["fault"] and evs[0].kind == "manual_card_required"
    evs = t.feed(I.ManualCard(parse_card("KC")))
    assert kinds(evs) == ["round_resumed", "card_dealt"]
    assert (evs[1].hand, evs[1].position, evs[1].card) == ("banker", 1, "KC")
    evs = t.feed(*cards("9D 5D 3H"))  # P 7S 9D = 6 stands, B KC 5D = 5 draws 3H
    assert next(e for e in evs if e.type == "round_result").banker == ("KC", "5D", "3H")


def test_a_void_still_writes_the_unread_card_off_after_another_unreadable_one():
    t = Table(**BUTTONS)
    t.feed(I.NewShoe(), I.NewRound(), *cards("7S"), I.UnreadableCard(), I.UnreadableCard())
    evs = t.feed(I.Void())
    assert [(e.type, getattr(e, "kind", None)) for e in evs][:2] == [
        ("misdeal", "unread_card"), ("round_voided", None)]
    assert not t.state.pending and t.state.paused is None and t.state.unread == 2


@pytest.mark.parametrize("bad", ["QH", None, 7, I.CardSeen])
def test_what_is_no_shoe_input_is_refused_naming_it(bad: object) -> None:
    """A value that is no shoe input (a card code, None, a number, the input class itself)
    is refused with one line naming it, through every entry point (decide, step,
    Shoe.apply), and the state is unchanged; the text is written here, not read back."""
    state = initial_state(Rules(burn="none"))
    shoe = Shoe(Rules(burn="none"))
    for call in (lambda: decide(state, bad), lambda: step(state, bad),
                 lambda: shoe.apply(bad)):
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value) == f"not a shoe input: {bad!r}"
    assert shoe.state == state
