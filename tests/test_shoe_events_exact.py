"""Every field of the events of the shoe's rarer paths, written out from docs/game.md:
faults and their details, pause reasons, misdeal kinds and policies, cut-card events,
voids and their audit fields, insurance closing reasons. A consumer (the casino feed, the
dealer's lights, an auditor) reads these fields; a wrong round number or reason is a
wrong record even when the money is right."""

from __future__ import annotations

import pytest

from shoe_controller.game import events as E
from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.insurance import InsuranceConfig
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe, fold

BUTTONS = {"burn": "none", "rounds": "button", "confirm": "button"}
ALL = ("player", "banker", "tie", "player_pair", "banker_pair", "either_pair",
       "perfect_pair", "player_natural", "banker_natural", "player_bonus", "banker_bonus",
       "lucky_six", "lucky_six_2", "lucky_six_3", "lucky_seven", "lucky_seven_2",
       "lucky_seven_3", "super_lucky_seven")


def c(code: str) -> I.CardSeen:
    return I.CardSeen(parse_card(code))


def play(rules: dict, *inputs: I.Input) -> tuple[Shoe, list]:
    """Feed inputs; return the shoe and the events of the last input (fold-checked)."""
    shoe = Shoe(Rules(**rules))
    every: list = []
    last: list = []
    for inp in inputs:
        last = shoe.apply(inp)
        every += last
    assert fold(shoe.rules, every) == shoe.state
    return shoe, last


def cards(text: str) -> list[I.CardSeen]:
    return [c(x) for x in text.split()]


def test_missing_card_on_new_round_names_the_due_card():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), *cards("7S KC 9D"), I.NewRound())
    assert evs == [E.Fault(1, 1, "missing_card", "new round while banker card 2 is due"),
                   E.RoundPaused(1, 1, "missing_card")]


def test_missing_card_on_confirm_names_the_due_card():
    # P 2C 3D = 5 draws: the player's third card is due
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 8H"),
                  I.ConfirmResult())
    assert evs == [E.Fault(1, 1, "missing_card", "result confirmed while player card 3 is due"),
                   E.RoundPaused(1, 1, "missing_card")]


def test_new_round_before_the_confirmation_is_refused():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), *cards("7S KC 9D 5D 3H"), I.NewRound())
    assert evs == [E.Fault(1, 1, "input_refused",
                           "new round before the result was confirmed")]


def test_new_round_after_the_shoe_ended_is_refused():
    _, evs = play(BUTTONS, I.NewShoe(), I.CutCardSeen(), I.NewRound(),
                  *cards("7S KC 9D 5D 3H"), I.ConfirmResult(), I.NewRound())
    assert evs == [E.Fault(1, None, "input_refused", "new round during ended")]


@pytest.mark.parametrize(("kind", "detail", "shown"), [
    ("lid_opened", "", "during a shoe"), ("shoe_empty", "sensor 2", "sensor 2")])
def test_the_shoe_opened_during_a_round_is_a_fault_that_pauses(kind, detail, shown):
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.ShoeOpened(kind, detail))
    assert evs == [E.Fault(1, 1, kind, shown), E.RoundPaused(1, 1, kind)]


def test_the_shoe_opened_between_rounds_is_a_fault_that_pauses_nothing():
    # "a Fault input always gives a fault event; it pauses an open round" (docs/game.md)
    _, evs = play(BUTTONS, I.NewShoe(), I.ShoeOpened("lid_opened"))
    assert evs == [E.Fault(1, None, "lid_opened", "during a shoe")]


@pytest.mark.parametrize("before", [[], [I.NewShoe(), I.CutCardSeen(), I.NewRound(),
                                         *cards("7S KC 9D 5D 3H"), I.ConfirmResult()]])
def test_the_shoe_opened_between_shoes_is_routine(before):
    _, evs = play(BUTTONS, *before, I.ShoeOpened("lid_opened"))
    assert evs == []
    shoe = Shoe(Rules(**BUTTONS))
    for inp in before:
        shoe.apply(inp)
    assert shoe.apply(I.ShoeOpened("shoe_empty")) == []


def test_fault_while_paused_does_not_pause_again():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.Pause("key"), I.Fault("link_down", "x"))
    assert evs == [E.Fault(1, 1, "link_down", "x")]


def test_resume_with_an_unread_card_pending_is_refused_by_name():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.UnreadableCard("blur"), I.Resume())
    assert evs == [E.Fault(1, 1, "manual_card_required",
                           "an unreadable card must be entered (or the round voided) first")]


def test_unreadable_round_card_events():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.UnreadableCard("blur"))
    assert evs == [E.Fault(1, 1, "unreadable_card", "blur"),
                   E.RoundPaused(1, 1, "unreadable_card")]


def test_void_of_a_round_with_an_unread_card_writes_it_off():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.UnreadableCard(),
                  I.Void("supervisor"))
    assert evs == [E.Misdeal(1, 1, "unread_card", None, "void"),
                   E.RoundVoided(1, 1, "supervisor"), E.BetsOpen(1, 2, ALL)]


def test_void_between_rounds_lifts_a_pause_only():
    _, evs = play(BUTTONS, I.NewShoe(), I.Pause("key"), I.Void())
    assert evs == [E.RoundResumed(1, None)]
    _, evs = play(BUTTONS, I.NewShoe(), I.Void())
    assert evs == []


def test_void_of_the_burn_indicator_is_refused():
    _, evs = play({"burn": "first_card"}, I.NewShoe(), I.UnreadableCard(), I.Void())
    assert evs == [E.Fault(1, None, "manual_card_required",
                           "the burn indicator decides the burn: enter it")]


def test_unread_card_between_rounds_under_carry_waits_for_the_entry():
    _, evs = play({**BUTTONS, "confirm": "auto", "extra_card": "carry"}, I.NewShoe(),
                  I.UnreadableCard())
    assert evs == [E.Fault(1, None, "unreadable_card", "misdealt card unreadable: enter it"),
                   E.RoundPaused(1, None, "unreadable_card")]


def test_void_of_a_paused_unread_card_between_rounds_burns_it():
    _, evs = play({**BUTTONS, "confirm": "auto", "extra_card": "carry"}, I.NewShoe(),
                  I.UnreadableCard(), I.Void())
    assert evs == [E.Misdeal(1, None, "unread_card", None, "burn"), E.RoundResumed(1, None)]


@pytest.mark.parametrize(("policy", "kind", "applied"), [
    ("burn", "no_round_open", "burn"), ("void", "no_round_open", "burn"),
    ("carry", "no_round_open", "carry")])
def test_misdeal_between_rounds(policy, kind, applied):
    _, evs = play({**BUTTONS, "extra_card": policy}, I.NewShoe(), c("4H"))
    assert evs == [E.Misdeal(1, None, kind, "4H", applied)]


@pytest.mark.parametrize("policy", ["burn", "void", "carry"])
def test_misdeal_after_the_shoe_ended_is_always_discarded(policy):
    _, evs = play({**BUTTONS, "extra_card": policy}, I.NewShoe(), I.CutCardSeen(),
                  I.NewRound(), *cards("7S KC 9D 5D 3H"), I.ConfirmResult(), c("4H"))
    assert evs == [E.Misdeal(1, None, "after_shoe_end", "4H", "burn")]


def test_unreadable_after_the_shoe_ended_is_written_off():
    _, evs = play(BUTTONS, I.NewShoe(), I.CutCardSeen(), I.NewRound(),
                  *cards("7S KC 9D 5D 3H"), I.ConfirmResult(), I.UnreadableCard())
    assert evs == [E.Misdeal(1, None, "after_shoe_end", None, "burn")]


def test_card_while_paused_is_discarded_and_named():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.Pause(), c("4H"))
    assert evs == [E.Misdeal(1, 1, "card_while_paused", "4H", "burn")]
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.Pause(), I.UnreadableCard())
    assert evs == [E.Misdeal(1, 1, "card_while_paused", None, "burn")]


def test_misdeal_void_policy_events_in_a_round():
    _, evs = play({**BUTTONS, "extra_card": "void"}, I.NewShoe(), I.NewRound(),
                  *cards("7S KC 9D 5D 3H"), c("4H"))
    assert evs == [E.Misdeal(1, 1, "extra_card", "4H", "void"),
                   E.RoundVoided(1, 1, "misdeal"), E.BetsOpen(1, 2, ALL)]


@pytest.mark.parametrize(("policy", "last"), [("last_round", 1), ("one_more_round", 2)])
def test_cut_card_events(policy, last):
    _, evs = play({**BUTTONS, "cut_card": policy}, I.NewShoe(), I.NewRound(), c("7S"),
                  I.CutCardSeen())
    assert evs == [E.CutCard(1, 1, "mid_round"), E.LastRound(1, last)]
    _, evs = play({**BUTTONS, "cut_card": policy}, I.NewShoe(), I.CutCardSeen())
    assert evs == [E.CutCard(1, None, "between_rounds"), E.LastRound(1, 1)]
    _, evs = play({**BUTTONS, "cut_card": policy}, I.NewShoe(), I.CutCardSeen(),
                  I.CutCardSeen())
    assert evs == [E.IntegrityAlert(1, None, "duplicate_cut_card", {"rounds": 0})]


def test_cut_card_before_any_shoe_starts_one():
    _, evs = play({"burn": "none"}, I.CutCardSeen())
    assert evs == [E.ShoeStarted(1, 8), E.BetsOpen(1, 1, ALL),
                   E.CutCard(1, None, "between_rounds"), E.LastRound(1, 1)]


def test_new_shoe_mid_round_voids_and_ends():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.NewShoe())
    assert evs == [E.RoundVoided(1, 1, "new_shoe"), E.ShoeEnded(1, 1, "new_shoe"),
                   E.ShoeStarted(2, 8), E.BetsOpen(2, 1, ALL)]


def test_burn_events():
    _, evs = play({"burn": "fixed", "burn_cards": 2}, I.NewShoe(), c("9S"), I.UnreadableCard())
    assert evs == [E.CardBurned(1, None, "burn"), E.BetsOpen(1, 1, ALL)]
    _, evs = play({"burn": "first_card"}, I.NewShoe(), c("KD"))
    assert evs == [E.BurnIndicator(1, "KD", 10)]


def test_foreign_card_in_a_round():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.ForeignCard("X-1"))
    assert evs == [E.IntegrityAlert(1, 1, "foreign_card", {"payload": "X-1"}),
                   E.RoundPaused(1, 1, "foreign_card")]


def test_insurance_closing_reasons():
    ins = {**BUTTONS, "insurance": InsuranceConfig(enabled=True)}
    # P 2C 3D = 5, B 9S 8H = 7: offers after the fourth card (P 0-5 v B 7: 4.0)
    head = [I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 8H")]
    _shoe, evs = play(ins, *head)
    offers = [e for e in evs if e.type == "insurance_offer"]
    assert [(o.offer, o.side, o.insures, o.odds, o.stage, o.player_total, o.banker_total)
            for o in offers] == [(1, "banker", "player", 4.0, "2/2", 5, 7)]
    _, evs = play(ins, *head, c("4C"))
    assert evs[0] == E.InsuranceClosed(1, 1, (1,), "card")
    _, evs = play(ins, *head, I.VoidInsurance("exposed"))
    assert evs == [E.InsuranceClosed(1, 1, (1,), "void"), E.InsuranceVoided(1, 1, "exposed")]
    _, evs = play(ins, *head, I.Void())
    assert evs[:2] == [E.InsuranceClosed(1, 1, (1,), "void"), E.RoundVoided(1, 1, "supervisor")]


def test_due_and_round_properties():
    shoe = Shoe(Rules(**BUTTONS))
    s = shoe.state
    assert (s.due(), s.open_round, s.round_open, s.awaiting_confirm) == (None, None, False,
                                                                        False)
    shoe.apply(I.NewShoe())
    shoe.apply(I.NewRound())
    assert shoe.state.due() == ("player", 1) and shoe.state.open_round == 1
    for x in cards("7S KC 9D 5D"):
        shoe.apply(x)
    assert shoe.state.due() == ("banker", 3)
    shoe.apply(I.Pause())
    assert shoe.state.due() is None  # nothing is due while paused
    shoe.apply(I.Resume())
    shoe.apply(c("3H"))
    s = shoe.state
    assert (s.due(), s.awaiting_confirm, s.round_open) == (None, True, True)


def test_refusals_carry_who_asked():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.Pause("key"),
                  I.Pause("again", source="key"))
    assert evs == [E.Fault(1, 1, "input_refused", "pause while already paused (key)",
                           source="key")]


def test_reveal_while_paused_is_refused_by_name():
    _, evs = play({**BUTTONS, "insurance": InsuranceConfig(enabled=True, reveal="button")},
                  I.NewShoe(), I.NewRound(), *cards("2C 9S"), I.Pause(), I.Reveal("player"))
    assert evs == [E.Fault(1, 1, "input_refused", "reveal while paused")]


def test_reveal_counts_the_cards_of_the_hand_it_reveals():
    ins = {**BUTTONS, "insurance": InsuranceConfig(enabled=True, reveal="button")}
    # P 2C 3D = 5 draws 4H (3 cards), B 9S 8H = 7 (2 cards)
    _, evs = play(ins, I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 8H 4H"), I.Reveal("banker"))
    assert [e for e in evs if e.type == "hand_revealed"] == [E.HandRevealed(1, 1, "banker", 2)]
    _, evs = play(ins, I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 8H 4H"), I.Reveal("player"))
    assert [e for e in evs if e.type == "hand_revealed"] == [E.HandRevealed(1, 1, "player", 3)]


ANN = E.Operator(uid=1000, gid=1000, pid=42, user="ann")


def test_supervisor_events_carry_who_did_it():
    """docs/daemon.md: every supervisor action journaled with who did it."""
    who = {"source": "socket", "operator": ANN}
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.Pause("check", **who))
    assert evs == [E.RoundPaused(1, 1, "check", **who)]
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.Pause("check"), I.Resume(**who))
    assert evs == [E.RoundResumed(1, 1, **who)]
    _, evs = play(BUTTONS, I.NewShoe(), I.Pause(**who))
    assert evs == [E.RoundPaused(1, None, "supervisor", **who)]
    _, evs = play(BUTTONS, I.Pause(**who))
    assert evs == [E.Fault(0, None, "input_refused", "pause before any shoe", **who)]
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.UnreadableCard(), I.Resume(**who))
    assert evs == [E.Fault(1, 1, "manual_card_required",
                           "an unreadable card must be entered (or the round voided) first",
                           **who)]


def test_a_manual_card_is_stamped_once_with_who_entered_it():
    who = {"source": "socket", "operator": ANN}
    # the unread card is Banker's first; Player's first was 7S
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.UnreadableCard(),
                  I.ManualCard(parse_card("KC"), **who))
    assert evs == [E.RoundResumed(1, 1, **who),
                   E.CardDealt(1, 1, "banker", 1, "KC", None, source="manual", operator=ANN)]
    # a second entry is refused, and says who tried
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.UnreadableCard(),
                  I.ManualCard(parse_card("KC")), I.ManualCard(parse_card("9D"), **who))
    assert len(evs) == 1 and evs[0].kind == "input_refused" and evs[0].source == "socket"
    assert evs[0].round == 1 and evs[0].operator == ANN


def test_a_manual_burn_indicator_is_stamped():
    _, evs = play({"burn": "first_card"}, I.NewShoe(), I.UnreadableCard(),
                  I.ManualCard(parse_card("4D"), source="key"))
    assert evs == [E.RoundResumed(1, None, source="key"),
                   E.BurnIndicator(1, "4D", 4, source="manual")]


def test_fault_fields():
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.Fault("camera_lost", "usb"))
    assert evs == [E.Fault(1, 1, "camera_lost", "usb"), E.RoundPaused(1, 1, "camera_lost")]


def test_voided_insurance_closes_the_open_offers():
    ins = {**BUTTONS, "insurance": InsuranceConfig(enabled=True)}
    shoe, _ = play(ins, I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 8H"),
                   I.VoidInsurance("exposed"))
    assert shoe.state.open_offers == () and shoe.state.insurance_void
    # the next card closes nothing more
    assert shoe.apply(c("4C"))[0].type == "card_dealt"


def test_an_unreadable_first_card_of_an_automatic_round_opens_it_and_pauses():
    _, evs = play({"burn": "none"}, I.NewShoe(), I.UnreadableCard("glare"))
    assert evs == [E.RoundStarted(1, 1), E.Fault(1, 1, "unreadable_card", "glare"),
                   E.RoundPaused(1, 1, "unreadable_card")]
    _shoe, evs = play({"burn": "none"}, I.NewShoe(), I.UnreadableCard("glare"),
                     I.ManualCard(parse_card("9H")))
    assert evs == [E.RoundResumed(1, 1),
                   E.CardDealt(1, 1, "player", 1, "9H", None, source="manual")]


def test_an_unreadable_card_with_no_round_open_is_a_named_misdeal():
    _, evs = play(BUTTONS, I.NewShoe(), I.UnreadableCard())
    assert evs == [E.Misdeal(1, None, "no_round_open", None, "burn")]


def test_a_manual_card_seen_once_too_often_is_dealt_stamped_after_its_alert():
    one = {**BUTTONS, "decks": 1}
    _, evs = play(one, I.NewShoe(), c("AS"), I.NewRound(), I.UnreadableCard(),
                  I.ManualCard(parse_card("AS"), source="key"))
    assert evs == [E.RoundResumed(1, 1, source="key"),
                   E.IntegrityAlert(1, 1, "excess_card", {"card": "AS", "seen": 2, "decks": 1}),
                   E.CardDealt(1, 1, "player", 1, "AS", None, source="manual")]


def test_an_unreadable_extra_card_under_carry_in_a_round_names_that_round():
    """The round is complete and awaits its confirmation (still open); an unreadable card
    now cannot be carried into the next round unread: the fault and the pause belong to
    the open round, round 1."""
    _, evs = play({**BUTTONS, "extra_card": "carry"}, I.NewShoe(), I.NewRound(),
                  *cards("7S KC 9D 5D 3H"), I.UnreadableCard())
    assert evs == [E.Fault(1, 1, "unreadable_card", "misdealt card unreadable: enter it"),
                   E.RoundPaused(1, 1, "unreadable_card")]


def test_every_answer_to_a_void_carries_who_asked():
    """docs/daemon.md: a supervisor's action is journaled with who did it, whether it is
    refused, refused for the burn indicator, voids a round or only lifts a pause."""
    who = {"source": "socket", "operator": ANN}
    _, evs = play(BUTTONS, I.NewShoe(), I.Void(**who))
    assert evs == [E.Fault(1, None, "input_refused",
                           "no round is open and nothing is paused: nothing to void", **who)]
    _, evs = play({"burn": "first_card"}, I.NewShoe(), I.UnreadableCard(), I.Void(**who))
    assert evs == [E.Fault(1, None, "manual_card_required",
                           "the burn indicator decides the burn: enter it", **who)]
    _, evs = play(BUTTONS, I.NewShoe(), I.Pause(), I.Void(**who))
    assert evs == [E.RoundResumed(1, None, **who)]
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), I.Void(**who))
    assert evs == [E.RoundVoided(1, 1, "supervisor", **who, key=False),
                   E.BetsOpen(1, 2, ALL)]


def test_a_carried_extra_card_in_a_round_names_that_round():
    _, evs = play({**BUTTONS, "extra_card": "carry"}, I.NewShoe(), I.NewRound(),
                  *cards("7S KC 9D 5D 3H"), c("4H"))
    assert evs == [E.Misdeal(1, 1, "extra_card", "4H", "carry")]


def test_void_insurance_with_no_round_insurance_is_refused_by_name():
    ins = {**BUTTONS, "insurance": InsuranceConfig(enabled=True)}
    _, evs = play(ins, I.NewShoe(), I.VoidInsurance("exposed"))
    assert evs == [E.Fault(1, None, "input_refused", "no round insurance to void")]
    _, evs = play(ins, I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 8H"),
                  I.VoidInsurance("exposed"), I.VoidInsurance("again"))
    assert evs == [E.Fault(1, 1, "input_refused", "no round insurance to void")]
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), I.VoidInsurance("exposed"))
    assert evs == []  # no insurance at this table: nothing to refuse


def test_fold_continues_from_a_given_state():
    """A journal replayed in two parts (a snapshot, then the rest) gives the state of the
    whole replay."""
    rules = Rules(**BUTTONS)
    shoe = Shoe(rules)
    head, tail = [], []
    for inp in [I.NewShoe(), I.NewRound(), *cards("7S KC 9D 5D 3H")]:
        head += shoe.apply(inp)
    for inp in [I.ConfirmResult(), I.NewRound(), *cards("2C 9S")]:
        tail += shoe.apply(inp)
    mid = fold(rules, head)
    assert fold(rules, tail, mid) == shoe.state == fold(rules, head + tail)
    assert fold(rules, tail, mid) != fold(rules, tail)


def test_new_round_and_confirm_while_paused_are_refused_by_name():
    _, evs = play(BUTTONS, I.NewShoe(), I.Pause(), I.NewRound())
    assert evs == [E.Fault(1, None, "input_refused", "new round while paused")]
    _, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), *cards("7S KC 9D 5D 3H"), I.Pause(),
                  I.ConfirmResult())
    assert evs == [E.Fault(1, 1, "input_refused", "confirm while paused")]


def test_the_confirmation_and_the_offers_carry_the_shoe_number():
    ins = {**BUTTONS, "insurance": InsuranceConfig(enabled=True)}
    # shoe 2: the first shoe ends at once (cut card between rounds, last round played)
    first = [I.NewShoe(), I.CutCardSeen(), I.NewRound(), *cards("7S KC 9D 5D 3H"),
             I.ConfirmResult()]
    _, evs = play(ins, *first, I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 8H"))
    assert [e for e in evs if e.type == "insurance_offer"] == [
        E.InsuranceOffer(2, 1, 1, "banker", "player", 4.0, "2/2", 5, 7)]
    for rules in (ins, BUTTONS):  # the result deferred to the confirmation, or not
        _, evs = play(rules, *first, I.NewShoe(), I.NewRound(), *cards("7S KC 9D 5D 3H"),
                      I.ConfirmResult())
        assert [e for e in evs if e.type == "result_confirmed"] == [E.ResultConfirmed(2, 1)]


def test_carried_cards_open_the_next_round_in_the_order_read():
    """extra_card = carry: cards drawn after a complete round are dealt into the next one
    in the order they were read, by the tableau (tests/support/baccarat_ref.py); the
    cards it does not need wait for the round after."""
    from tests.support import baccarat_ref as ref

    carried = ["4H", "2C", "3D", "9S", "5D", "6C"]
    head = [I.NewShoe(), I.NewRound(), *cards("7S KC 9D 5D 3H"), *cards(" ".join(carried)),
            I.ConfirmResult()]
    shoe, evs = play({**BUTTONS, "extra_card": "carry"}, *head, I.NewRound())
    player, banker = ref.deal_round(carried)
    (result,) = [e for e in evs if e.type == "round_result"]
    assert (list(result.player), list(result.banker)) == (player, banker)
    used = len(player) + len(banker)
    assert shoe.state.carried == tuple(carried[used:]) == ("6C",)
    assert [(e.hand, e.position, e.card) for e in evs if e.type == "card_dealt"] == [
        ("player", 1, "4H"), ("banker", 1, "2C"), ("player", 2, "3D"), ("banker", 2, "9S"),
        ("banker", 3, "5D")]
    shoe.apply(I.ConfirmResult())
    evs = shoe.apply(I.NewRound())
    assert [(e.hand, e.position, e.card) for e in evs if e.type == "card_dealt"] == [
        ("player", 1, "6C")]
    assert shoe.state.carried == () and shoe.state.banker == () and shoe.state.player == ("6C",)


def test_a_carried_card_closes_the_offers_like_any_card():
    ins = {**BUTTONS, "extra_card": "carry", "insurance": InsuranceConfig(enabled=True)}
    # carried P 2C 3D = 5, B 9S 8H = 7: the 2/2 offer, then Player's third card 4C
    _, evs = play(ins, I.NewShoe(), I.NewRound(), *cards("7S KC 9D 5D 3H 2C 9S 3D 8H 4C"),
                  I.ConfirmResult(), I.NewRound())
    kinds = [e.type for e in evs]
    assert kinds.index("insurance_offer") < kinds.index("insurance_closed")
    assert E.InsuranceClosed(1, 2, (1,), "card") in evs
    assert evs[kinds.index("insurance_closed") + 1] == E.CardDealt(1, 2, "player", 3, "4C", None)


@pytest.mark.parametrize("side", ["player", "banker"])
def test_a_reveal_of_one_card_is_forgotten_when_the_next_round_starts(side):
    """Reveal-button table: a hand revealed at one card (no offer came of it) is a fact of
    that round only; in the next round the same press reveals again."""
    rev = {**BUTTONS, "insurance": InsuranceConfig(enabled=True, reveal="button")}
    first = "7S" if side == "player" else "7S KC"
    rest = "KC 9D 5D 3H" if side == "player" else "9D 5D 3H"
    again = "2C" if side == "player" else "2C 4D"
    _, evs = play(rev, I.NewShoe(), I.NewRound(), *cards(first), I.Reveal(side),
                  *cards(rest), I.ConfirmResult(), I.NewRound(), *cards(again), I.Reveal(side))
    assert evs == [E.HandRevealed(1, 2, side, 1)]



def test_the_bets_opened_by_the_last_burn_are_round_ones():
    """A bet offered up to round 1 only is open when the burn completes (the bets of
    round 1, not round 2)."""
    from shoe_controller.game.rules import BetAvailability

    rules = {"burn": "fixed", "burn_cards": 2, "bet_availability": BetAvailability(tie=1)}
    _, evs = play(rules, I.NewShoe(), c("9S"), c("4D"))
    assert evs == [E.CardBurned(1, "4D", "burn"), E.BetsOpen(1, 1, ALL)]


def test_unreadable_burn_cards_count_towards_the_burn():
    """An unreadable burn card is burned unread: it still counts, and the burn ends on
    time (docs/game.md)."""
    shoe, _ = play({"burn": "fixed", "burn_cards": 3, "rounds": "button"}, I.NewShoe(),
                   I.UnreadableCard(), I.UnreadableCard())
    s = shoe.state
    assert (s.phase, s.burn_left, s.unread, s.burned) == ("burning", 1, 2, 0)
    evs = shoe.apply(I.UnreadableCard())
    assert evs == [E.CardBurned(1, None, "burn"), E.BetsOpen(1, 1, ALL)]
    s = shoe.state
    assert (s.phase, s.burn_left, s.unread) == ("between", 0, 3)
    assert [e.type for e in shoe.apply(I.NewRound())] == ["round_started"]


def test_a_second_cut_card_in_a_round_is_an_alert_of_that_round():
    _, evs = play(BUTTONS, I.NewShoe(), I.CutCardSeen(), I.NewRound(), c("7S"),
                  I.CutCardSeen())
    assert evs == [E.IntegrityAlert(1, 1, "duplicate_cut_card", {"rounds": 1})]


def test_the_end_of_a_shoe_discards_the_carried_cards_and_ends_any_wait():
    """The shoe ends (cut card, last round confirmed): cards carried for a next round
    can never be dealt now, they count as discarded; nothing is paused or pending."""
    carry = {**BUTTONS, "extra_card": "carry"}
    shoe, evs = play(carry, I.NewShoe(), I.CutCardSeen(), I.NewRound(),
                     *cards("7S KC 9D 5D 3H 4H 2C"), I.ConfirmResult())
    assert evs == [E.ResultConfirmed(1, 1), E.ShoeEnded(1, 1, "cut_card")]
    s = shoe.state
    assert (s.phase, s.carried, s.discarded, s.paused, s.pending) == (
        "ended", (), 2, None, False)


@pytest.mark.parametrize("stop", [[I.Pause("check")], [I.UnreadableCard()]])
def test_a_voided_paused_round_leaves_nothing_paused_or_pending(stop):
    shoe, evs = play(BUTTONS, I.NewShoe(), I.NewRound(), c("7S"), *stop, I.Void())
    assert [e.type for e in evs][-2:] == ["round_voided", "bets_open"]
    assert (shoe.state.paused, shoe.state.pending, shoe.state.phase) == (None, False, "between")
    assert [e.type for e in shoe.apply(I.NewRound())] == ["round_started"]
    assert shoe.apply(I.Resume()) == []  # nothing paused: nothing to resume


@pytest.mark.parametrize("rules", [BUTTONS, {"burn": "first_card"},
                                   {"burn": "none", "rounds": "auto"}])
def test_a_card_before_any_shoe_starts_one_in_decide_as_in_apply(rules):
    """A card read before any shoe starts the shoe, then counts as what it is there (an
    extra card between rounds, the burn indicator, the first card of an automatic
    round). decide() (the pure function, journal replays) and Shoe.apply() (the fused
    step) give the same events."""
    from shoe_controller.game.shoe import decide, initial_state

    r = Rules(**rules)
    _, evs = play(rules, c("4H"))
    assert list(decide(initial_state(r), c("4H"))) == evs
    assert evs[0] == E.ShoeStarted(1, 8) and len(evs) >= 2
    kinds = [e.type for e in evs]
    assert kinds[-1] in ("misdeal", "burn_indicator", "card_dealt")
    assert getattr(evs[-1], "card", None) == "4H"


@pytest.mark.parametrize(("deal", "natural"), [("8S 2C KD 5D", True), ("2C 8S 5D KD", True),
                                               ("7S KC 9D 5D 3H", False)])
def test_a_round_is_natural_when_either_hand_is(deal, natural):
    """DESIGN.md: a natural is an 8 or 9 on the first two cards of either hand."""
    _, evs = play({**BUTTONS, "confirm": "auto"}, I.NewShoe(), I.NewRound(), *cards(deal))
    (result,) = [e for e in evs if e.type == "round_result"]
    assert result.natural is natural


def test_the_last_round_confirmed_automatically_ends_the_shoe_with_its_numbers():
    """Automatic confirmation of the last round: its result, the confirmation and the
    shoe's end, each naming shoe 2 and round 1 (a second shoe: the numbers are not the
    defaults)."""
    auto = {"burn": "none"}
    _, evs = play(auto, I.NewShoe(), I.NewShoe(), I.CutCardSeen(),
                  *cards("7S KC 9D 5D 3H"))
    assert [e.type for e in evs][-3:] == ["round_result", "result_confirmed", "shoe_ended"]
    result = evs[-3]
    assert (result.shoe, result.round, result.winner) == (2, 1, "banker")
    assert evs[-2:] == [E.ResultConfirmed(2, 1), E.ShoeEnded(2, 1, "cut_card")]


@pytest.mark.parametrize("when", ["extra_card", "no_round_open", "after_shoe_end"])
def test_an_unreadable_misdealt_card_written_off_leaves_no_card_awaited(when):
    """An unreadable card drawn when none is due (burn policy) is written off at once:
    the shoe waits for no manual entry, so one is refused (docs/game.md: a manual card
    only fills the card a round waits for after an unreadable read)."""
    head = {"extra_card": [I.NewRound(), *cards("9S 2C KD 3S")],  # natural, complete
            "no_round_open": [],
            "after_shoe_end": [I.CutCardSeen(), I.NewRound(), *cards("9S 2C KD 3S"),
                               I.ConfirmResult()]}[when]
    shoe, evs = play(BUTTONS, I.NewShoe(), *head, I.UnreadableCard())
    rnd = 1 if when == "extra_card" else None
    assert evs == [E.Misdeal(1, rnd, when, None, "burn")]
    assert (shoe.state.pending, shoe.state.paused, shoe.state.unread) == (False, None, 1)
    assert shoe.apply(I.ManualCard(parse_card("QH"))) == [
        E.Fault(1, rnd, "input_refused", "no card is awaited: a manual card only fills the "
                "card the round waits for after an unreadable read")]


def test_carried_cards_close_each_offer_once():
    """Two carried third cards, each after an offer (P 2C 3D = 5, B 9S 5H = 4: the 2/2
    offer; P's 4C closes it and makes the 3/2 offer; B's 5S closes that one): every
    offer is closed exactly once, by the next card, as docs/game.md says of any card."""
    ins = {**BUTTONS, "extra_card": "carry", "insurance": InsuranceConfig(enabled=True)}
    _, evs = play(ins, I.NewShoe(), I.NewRound(),
                  *cards("7S KC 9D 5D 3H 2C 9S 3D 5H 4C 5S"), I.ConfirmResult(), I.NewRound())
    closed = [e for e in evs if isinstance(e, E.InsuranceClosed)]
    assert closed == [E.InsuranceClosed(1, 2, (1,), "card"),
                      E.InsuranceClosed(1, 2, (2,), "card")]
    dealt = [e.card for e in evs if isinstance(e, E.CardDealt)]
    kinds = [e.type for e in evs]
    assert dealt == ["2C", "9S", "3D", "5H", "4C", "5S"]
    first, second = (i for i, k in enumerate(kinds) if k == "insurance_closed")
    assert evs[first + 1] == E.CardDealt(1, 2, "player", 3, "4C", None)
    assert evs[second + 1] == E.CardDealt(1, 2, "banker", 3, "5S", None)


def test_a_card_beyond_the_decks_keeps_its_orientation():
    """A second 2C in a one-deck shoe: the excess alert, and the card dealt as read,
    upside down (the edge-sorting test counts orientations of every dealt card)."""
    _, evs = play({**BUTTONS, "decks": 1}, I.NewShoe(), I.NewRound(), *cards("2C 9S"),
                  I.CardSeen(parse_card("2C"), "down"))
    assert evs == [E.IntegrityAlert(1, 1, "excess_card", {"card": "2C", "seen": 2, "decks": 1}),
                   E.CardDealt(1, 1, "player", 2, "2C", "down")]


def test_a_new_shoe_mid_round_closes_the_open_offer_as_void():
    """NEW SHOE while a round with an open insurance offer is dealt: the offer closes with
    the reason "void", before the round is voided (docs/game.md: a void closes offers)."""
    ins = {**BUTTONS, "insurance": InsuranceConfig(enabled=True)}
    _, evs = play(ins, I.NewShoe(), I.NewRound(), *cards("2C 9S 3D 5H"), I.NewShoe())
    assert [e.type for e in evs][:3] == ["insurance_closed", "round_voided", "shoe_ended"]
    assert evs[0] == E.InsuranceClosed(1, 1, (1,), "void")


def test_without_a_burn_the_first_bets_open_are_round_ones():
    """No burn: the bets listed when the shoe starts are those of round 1 (a bet offered
    up to round 1 only, here the tie, is among them)."""
    from shoe_controller.game.rules import BetAvailability

    rules = {"burn": "none", "bet_availability": BetAvailability(tie=1)}
    _, evs = play(rules, I.NewShoe())
    assert evs == [E.ShoeStarted(1, 8), E.BetsOpen(1, 1, ALL)]


AUTO = {"burn": "none", "rounds": "auto", "confirm": "auto"}


@pytest.mark.parametrize("orientation", ["up", "down"])
@pytest.mark.parametrize("insurance", [False, True], ids=["plain", "insurance"])
def test_the_first_card_of_an_automatic_round_keeps_its_orientation(orientation: str,
                                                                    insurance: bool):
    """The card that opens the next round (automatic rounds) is dealt with the orientation
    it was read with, on a plain table and at an insurance table alike: edge sorting counts
    the orientation of every dealt card (an integrity check)."""
    rules = {**AUTO, "insurance": InsuranceConfig(enabled=insurance)}
    first = I.CardSeen(parse_card("4H"), orientation=orientation)  # type: ignore[arg-type]
    # round 1: P 7S 9D = 6 stands, B KC 5D = 5 draws 3H: complete, confirmed at once
    _, evs = play(rules, I.NewShoe(), *cards("7S KC 9D 5D 3H"), first)
    assert evs == [E.RoundStarted(1, 2), E.CardDealt(1, 2, "player", 1, "4H", orientation)]


def test_an_offer_closed_by_the_card_that_completes_the_round_is_closed_once():
    """Automatic confirmation at an insurance table: P 2C 3D = 5, B 9S 8H = 7 (offer 1,
    Banker side insures Player at 4.0); P draws 4C = 9, B 7 stands on a 4: Player wins.
    The card leaving the shoe closes the offer ("card"); the result then has no open
    offer left to close, and the won offer is paid 4.0."""
    rules = {**AUTO, "insurance": InsuranceConfig(enabled=True)}
    _, evs = play(rules, I.NewShoe(), *cards("2C 9S 3D 8H 4C"))
    assert [e.type for e in evs] == ["insurance_closed", "card_dealt", "draw_prompt",
                                     "round_result", "result_confirmed", "bets_open"]
    assert evs[0] == E.InsuranceClosed(1, 1, (1,), "card")
    assert evs[1] == E.CardDealt(1, 1, "player", 3, "4C", None)
    result = evs[3]
    assert (result.winner, result.player_total, result.banker_total) == ("player", 9, 7)
    assert [(s.offer, s.outcome, s.net) for s in result.insurance] == [(1, "won", 4.0)]
