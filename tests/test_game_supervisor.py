"""Supervisor actions in the pure core (issue 14, finding 3): a manual card only fills
the card the round waits for after an unreadable read, and only that one; a void after
the result is known needs the supervisor key; every audited action says where it came
from and who did it. Expectations are the issue's own sentences, case by case."""

from __future__ import annotations

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.events import Operator, encode_event
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.supervisor import NOT_AWAITED, RESULT_KNOWN

ANN = Operator(uid=1000, gid=1000, pid=4242, user="ann")
BUTTON = Rules(burn="none", confirm="button")


def card(code: str) -> I.CardSeen:
    return I.CardSeen(parse_card(code))


def manual(code: str) -> I.ManualCard:
    return I.ManualCard(parse_card(code), source="socket", operator=ANN)


def types(events) -> list[str]:
    return [e.type for e in events]


def refused_with(events, reason: str) -> bool:
    return (types(events) == ["fault"] and events[0].kind == "input_refused"
            and events[0].detail == reason)


def test_the_issues_sequence_on_a_table_with_no_shoe_deals_nothing():
    """`card 9S, card 2C, card KC, card 3H, void` on `run` with no shoe attached made a
    whole round and voided it after its result. Now every card is refused, and so is
    the void (nothing to void): no shoe, no round, no card."""
    shoe = Shoe(BUTTON)
    out = []
    for code in ("9S", "2C", "KC", "3H"):
        evs = shoe.apply(manual(code))
        assert refused_with(evs, NOT_AWAITED), evs
        assert evs[0].source == "socket" and evs[0].operator == ANN
        out += evs
    evs = shoe.apply(I.Void("supervisor", source="socket", operator=ANN))
    assert types(evs) == ["fault"] and evs[0].kind == "input_refused"
    out += evs
    assert not {"shoe_started", "round_started", "card_dealt", "round_result",
                "round_voided"} & set(types(out))
    assert shoe.state.phase == "no_shoe"


def test_a_manual_card_is_refused_while_the_round_deals_normally_and_between_rounds():
    shoe = Shoe(BUTTON)
    shoe.apply(I.NewShoe())
    shoe.apply(card("2S"))  # round 1 open, Banker's first card due
    before = shoe.state
    assert refused_with(shoe.apply(manual("QH")), NOT_AWAITED)
    assert shoe.state.player == before.player and shoe.state.banker == before.banker
    for code in ("3S", "4S", "5S"):  # P 2+4, B 3+5: Banker's natural 8, complete
        shoe.apply(card(code))
    assert refused_with(shoe.apply(manual("QH")), NOT_AWAITED)  # awaiting confirmation
    shoe.apply(I.ConfirmResult())
    assert shoe.state.phase == "between"
    assert refused_with(shoe.apply(manual("QH")), NOT_AWAITED)  # between rounds
    assert shoe.state.phase == "between" and shoe.state.reads == 4


def test_a_manual_card_fills_the_awaited_card_once_and_says_who():
    shoe = Shoe(BUTTON)
    shoe.apply(I.NewShoe())
    shoe.apply(card("2S"))
    paused = shoe.apply(I.UnreadableCard("blur"))  # Banker's first card left unread
    assert types(paused) == ["fault", "round_paused"]
    evs = shoe.apply(manual("QH"))
    assert types(evs)[:2] == ["round_resumed", "card_dealt"]
    resumed, dealt = evs[0], evs[1]
    assert (resumed.source, resumed.operator) == ("socket", ANN)
    assert (dealt.card, dealt.hand, dealt.position) == ("QH", "banker", 1)
    assert (dealt.source, dealt.operator) == ("manual", ANN)
    assert b'"source":"manual"' in encode_event(dealt)
    assert b'"uid":1000' in encode_event(dealt) and b'"pid":4242' in encode_event(dealt)
    # only that one: the next manual card is refused, a read card is no manual card
    assert refused_with(shoe.apply(manual("KH")), NOT_AWAITED)
    nxt = shoe.apply(card("4D"))
    assert types(nxt) == ["card_dealt"] and b"source" not in encode_event(nxt[0])


def test_an_unreadable_burn_indicator_is_entered_manually():
    shoe = Shoe(Rules(burn="first_card", confirm="button"))
    shoe.apply(I.NewShoe())
    shoe.apply(I.UnreadableCard("blur"))
    evs = shoe.apply(manual("3D"))
    assert types(evs)[:2] == ["round_resumed", "burn_indicator"]
    assert (evs[1].card, evs[1].burn_count, evs[1].source) == ("3D", 3, "manual")


def _complete_round(shoe: Shoe) -> None:
    shoe.apply(I.NewShoe())
    for code in ("9S", "QH", "KD", "7C"):  # Player natural 9 v 7: complete
        shoe.apply(card(code))
    assert shoe.state.round_open and shoe.state.due() is None  # awaiting confirmation


def test_a_void_after_the_result_needs_the_key_and_is_flagged():
    shoe = Shoe(BUTTON)
    _complete_round(shoe)
    evs = shoe.apply(I.Void("wrong", source="socket", operator=ANN))
    assert refused_with(evs, RESULT_KNOWN)
    assert shoe.state.round_open  # still awaiting the dealer's confirmation
    evs = shoe.apply(I.Void("wrong", source="socket", operator=ANN, key=True))
    voided = [e for e in evs if e.type == "round_voided"]
    assert len(voided) == 1
    v = voided[0]
    assert (v.round, v.reason, v.source, v.operator, v.key, v.after_result) == (
        1, "wrong", "socket", ANN, True, True)
    assert b'"after_result":true' in encode_event(v)


def test_a_void_before_the_result_needs_no_key_and_is_not_flagged():
    shoe = Shoe(BUTTON)
    shoe.apply(I.NewShoe())
    shoe.apply(card("9S"))
    evs = shoe.apply(I.Void("dropped card", source="socket", operator=ANN))
    v = next(e for e in evs if e.type == "round_voided")
    assert v.key is False and b"after_result" not in encode_event(v)


def test_pause_and_resume_are_audited_and_unaudited_inputs_stay_as_they_were():
    shoe = Shoe(BUTTON)
    shoe.apply(I.NewShoe())
    p = shoe.apply(I.Pause("supervisor key", source="key"))
    assert types(p) == ["round_paused"] and p[0].source == "key"
    r = shoe.apply(I.Resume(source="socket", operator=ANN))
    assert types(r) == ["round_resumed"] and r[0].operator == ANN
    # replay text and the virtual table: no audit fields, the same JSON as ever
    plain = Shoe(BUTTON)
    plain.apply(I.NewShoe())
    assert encode_event(plain.apply(I.Pause("supervisor"))[0]) == (
        b'{"reason":"supervisor","round":null,"shoe":1,"type":"round_paused"}')
