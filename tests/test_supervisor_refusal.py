"""supervisor.refusal, the answer the control socket gives, for each supervisor input in
each state it names (game/supervisor.py's module doc is the rule)."""

from __future__ import annotations

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.supervisor import NOT_AWAITED, RESULT_KNOWN, refusal

BUTTONS = Rules(burn="none", rounds="button", confirm="button")


def state(*inputs: I.Input):
    shoe = Shoe(BUTTONS)
    for inp in inputs:
        shoe.apply(inp)
    return shoe.state


def test_pause():
    assert refusal(state(), I.Pause()) == "no shoe is loaded"
    assert refusal(state(I.NewShoe()), I.Pause()) is None
    assert refusal(state(I.NewShoe(), I.Pause()), I.Pause()) == "already paused"
    assert refusal(state(I.NewShoe(), I.NewRound()), I.Pause()) is None


def test_resume():
    assert refusal(state(), I.Resume()) == "nothing is paused"
    assert refusal(state(I.NewShoe()), I.Resume()) == "nothing is paused"
    assert refusal(state(I.NewShoe(), I.Pause()), I.Resume()) is None
    pending = state(I.NewShoe(), I.NewRound(), I.UnreadableCard())
    assert refusal(pending, I.Resume()) == (
        "an unreadable card must be entered (or the round voided) first")


def test_void():
    assert refusal(state(I.NewShoe()), I.Void()) == (
        "no round is open and nothing is paused: nothing to void")
    assert refusal(state(I.NewShoe(), I.Pause()), I.Void()) is None
    assert refusal(state(I.NewShoe(), I.NewRound()), I.Void()) is None
    done = state(I.NewShoe(), I.NewRound(),
                 *[I.CardSeen(parse_card(c)) for c in ["7S", "KC", "9D", "5D", "3H"]])
    assert refusal(done, I.Void()) == RESULT_KNOWN
    assert refusal(done, I.Void(key=True)) is None


def test_manual_card():
    card = I.ManualCard(parse_card("QH"))
    assert refusal(state(I.NewShoe(), I.NewRound()), card) == NOT_AWAITED
    assert refusal(state(I.NewShoe(), I.NewRound(), I.UnreadableCard()), card) is None


def test_other_inputs_are_never_refused_here():
    for inp in (I.NewRound(), I.ConfirmResult(), I.CutCardSeen(), I.NewShoe()):
        assert refusal(state(I.NewShoe()), inp) is None
