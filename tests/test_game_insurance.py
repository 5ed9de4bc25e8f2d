"""Insurance: every row of the rule table on hand-built rounds (won and lost), offers
that must not appear, closure by the next card / reveal / result, void handling, the
auto-reveal default, and the insurance table as data."""

from __future__ import annotations

import itertools

import msgspec
import pytest

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.insurance import DEFAULT_ROWS, InsuranceConfig, InsuranceRow
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.tableau import banker_draws, coup

BUTTON = Rules(burn="none", confirm="button",
               insurance=InsuranceConfig(enabled=True, reveal="button"))
AUTO = Rules(burn="none", confirm="button", insurance=InsuranceConfig(enabled=True))

# a card of each value, spread over suits/ranks so no accidental pairs matter
CARD = {0: "KS", 1: "AH", 2: "2D", 3: "3C", 4: "4S", 5: "5H", 6: "6D", 7: "7C", 8: "8S", 9: "9H"}


def spec(text):
    if text == "unrevealed":
        return None
    lo, _, hi = text.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def find_round(row: InsuranceRow, want_won: bool):
    """Card values (deal order) reaching ``row``'s situation, with the insured event
    happening (want_won) or not; None if impossible. For 3/2 rows Banker must still be
    to draw (an offer needs an outcome still open)."""
    p_spec, b_spec = spec(row.player), spec(row.banker)
    for vals in itertools.product(range(10), repeat=6):
        pv, bv = coup(vals)
        if row.stage == "2/2":
            pt2, bt2 = (vals[0] + vals[2]) % 10, (vals[1] + vals[3]) % 10
            if p_spec is not None and pt2 not in p_spec:
                continue
            if b_spec is not None and bt2 not in b_spec:
                continue
            both = p_spec is not None and b_spec is not None
            if both and len(pv) + len(bv) == 4:
                continue  # both shown and no card to come: nothing is offered
        else:
            if len(pv) != 3:
                continue
            if sum(pv) % 10 not in p_spec or sum(bv[:2]) % 10 not in b_spec:
                continue
            if not banker_draws(sum(bv[:2]) % 10, pv[2]):
                continue
        pt, bt = sum(pv) % 10, sum(bv) % 10
        winner = "player" if pt > bt else "banker" if bt > pt else "tie"
        if (winner == row.insures) == want_won:
            return vals[: len(pv) + len(bv)], pv, bv, winner
    return None


def deal_order_tokens(vals, pv, bv, row):
    """Inputs: the four cards, reveals per the row, the rest, RESULT."""
    cards = [I.CardSeen(parse_card(CARD[v])) for v in vals]
    p_spec, b_spec = spec(row.player), spec(row.banker)
    out = [I.NewShoe(), *cards[:4]]
    if row.stage == "2/2":
        if p_spec is not None:
            out.append(I.Reveal("player"))
        if b_spec is not None:
            out.append(I.Reveal("banker"))
        out += cards[4:]
    else:
        out += [I.Reveal("player"), I.Reveal("banker"), cards[4], I.Reveal("player"),
                *cards[5:]]
    out.append(I.ConfirmResult())
    return out


@pytest.mark.parametrize("want_won", [True, False], ids=["won", "lost"])
@pytest.mark.parametrize("index", range(len(DEFAULT_ROWS)))
def test_every_row_is_offered_and_settled(index, want_won):
    row = DEFAULT_ROWS[index]
    found = find_round(row, want_won)
    if found is None:
        pytest.skip("no round reaches this row with that outcome")
    vals, pv, bv, winner = found
    shoe = Shoe(BUTTON)
    events = [e for inp in deal_order_tokens(vals, pv, bv, row) for e in shoe.apply(inp)]
    offers = [e for e in events if e.type == "insurance_offer"]
    mine = [o for o in offers if (o.side, o.insures, o.odds, o.stage) ==
            (row.side, row.insures, row.odds, row.stage)]
    assert len(mine) == 1, (row, [e.type for e in events])
    offer = mine[0]
    assert (offer.player_total is None) == (row.player == "unrevealed")
    assert (offer.banker_total is None) == (row.banker == "unrevealed")
    (result,) = [e for e in events if e.type == "round_result"]
    assert result.winner == winner
    assert [s.offer for s in result.insurance] == [o.offer for o in offers]
    settled = next(s for s in result.insurance if s.offer == offer.offer)
    assert settled.outcome == ("won" if want_won else "lost")
    assert settled.net == (row.odds if want_won else -1.0)
    # every offer was closed before the result
    closed = {o for e in events if e.type == "insurance_closed" for o in e.offers}
    assert closed == {o.offer for o in offers}
    assert events.index(result) > max(events.index(o) for o in offers)


def test_every_row_is_reachable_won_or_lost():
    for row in DEFAULT_ROWS:
        assert find_round(row, True) or find_round(row, False), row


def play(inputs, rules=BUTTON):
    shoe = Shoe(rules)
    return shoe, [e for inp in [I.NewShoe(), *inputs] for e in shoe.apply(inp)]


def cards(text):
    return [I.CardSeen(parse_card(c)) for c in text.split()]


def test_natural_ends_the_round_no_offers_once_both_are_shown():
    # P 9 natural, B 3: Player shown first -> "P 9, B unrevealed: tie 10" is offered;
    # once Banker is shown too the round is decided: nothing more.
    _shoe, ev = play([*cards("4S 3C 5H KD"), I.Reveal("player"), I.Reveal("banker"),
                     I.ConfirmResult()])
    offers = [e for e in ev if e.type == "insurance_offer"]
    assert [(o.side, o.insures, o.odds) for o in offers] == [("player", "tie", 10.0)]
    closed = [e for e in ev if e.type == "insurance_closed"]
    assert [(c.offers, c.reason) for c in closed] == [((1,), "reveal")]
    result = next(e for e in ev if e.type == "round_result")
    assert result.insurance[0].outcome == "lost"


def test_banker_three_card_stage_never_offers():
    # P 2S 3D = 5 draws KS -> 5; B 9H 4C = 3 draws 2D -> 5; reveal only afterwards
    _shoe, ev = play([*cards("2S 9H 3D 4C KS 2D"), I.Reveal("player"), I.Reveal("banker"),
                     I.ConfirmResult()])
    assert not [e for e in ev if e.type == "insurance_offer"]
    assert next(e for e in ev if e.type == "round_result").insurance == ()


def test_offer_closes_when_the_next_card_leaves_the_shoe():
    # P 2S 4D = 6 stands, B KH 3C = 3 draws: both shown -> "P 6, B 0-5: banker 3"
    shoe, ev = play([*cards("2S KH 4D 3C"), I.Reveal("player"), I.Reveal("banker")])
    assert [e.type for e in ev[-2:]] == ["hand_revealed", "insurance_offer"]
    assert shoe.state.open_offers == (1,)
    nxt = shoe.apply(I.CardSeen(parse_card("4D")))
    assert nxt[0].type == "insurance_closed" and nxt[0].reason == "card"
    assert nxt[1].type == "card_dealt" and shoe.state.open_offers == ()
    res = shoe.apply(I.ConfirmResult())
    result = next(e for e in res if e.type == "round_result")
    assert result.winner == "banker" and result.insurance[0].net == 3.0


def test_offer_closes_at_the_confirmation():
    shoe, ev = play([*cards("3D 5H 2C 3S"), I.Reveal("banker")])  # B 8 natural, P hidden
    assert [e.odds for e in ev if e.type == "insurance_offer"] == [7.0]
    res = shoe.apply(I.ConfirmResult())
    assert [e.type for e in res][:3] == ["insurance_closed", "round_result", "result_confirmed"]
    assert res[0].reason == "result"
    assert res[1].insurance[0].outcome == "lost" and res[1].winner == "banker"


def test_void_insurance_refunds_offers_but_the_round_stands():
    _shoe, ev = play([*cards("3D 5H 2C 3S"), I.Reveal("banker"), I.VoidInsurance("exposed"),
                     I.ConfirmResult()])
    types = [e.type for e in ev]
    assert types.index("insurance_voided") < types.index("round_result")
    result = next(e for e in ev if e.type == "round_result")
    assert [(s.outcome, s.net) for s in result.insurance] == [("void", 0.0)]
    assert result.settlement["banker"] == 0.95  # the round itself settles


def test_voided_round_never_settles_its_insurance():
    _shoe, ev = play([*cards("3D 5H 2C 3S"), I.Reveal("banker"), I.Void(), I.ConfirmResult()])
    assert [e.type for e in ev if e.type.startswith("insurance")] == [
        "insurance_offer", "insurance_closed"]
    assert not [e for e in ev if e.type in ("round_result", "result_confirmed")]


def test_auto_reveal_offers_while_a_card_is_to_come():
    # the default for tables without reveal buttons: cards count as shown when dealt
    shoe, ev = play(cards("2S KH 4D 3C"), AUTO)  # P 6 stands, B 3 draws
    offers = [e for e in ev if e.type == "insurance_offer"]
    assert [(o.side, o.stage, o.player_total, o.banker_total) for o in offers] == [
        ("player", "2/2", 6, 3)]
    # a natural: the round is over at the fourth card, nothing offered
    shoe, ev = play(cards("3D 5H 2C 3S"), AUTO)
    assert not [e for e in ev if e.type == "insurance_offer"]
    # reveal presses change nothing on an auto table
    assert shoe.apply(I.Reveal("player")) == []


def test_insurance_off_by_default_and_replay_token():
    _shoe, ev = play([*cards("3D 5H 2C 3S"), I.Reveal("banker")], Rules(burn="none"))
    assert not [e for e in ev if "insurance" in e.type or e.type == "hand_revealed"]


def test_the_table_is_data():
    rows = (InsuranceRow("banker", "2/2", "unrevealed", "8", "player", 9.5),)
    rules = msgspec.structs.replace(
        BUTTON, insurance=InsuranceConfig(enabled=True, reveal="button", rows=rows))
    _shoe, ev = play([*cards("3D 5H 2C 3S"), I.Reveal("banker")], rules)
    assert [e.odds for e in ev if e.type == "insurance_offer"] == [9.5]
    with pytest.raises(msgspec.ValidationError, match="both hands unrevealed"):
        msgspec.convert({"side": "banker", "stage": "2/2", "player": "unrevealed",
                         "banker": "unrevealed", "insures": "player", "odds": 2}, InsuranceRow)
    with pytest.raises(msgspec.ValidationError, match="score 'ten'"):
        msgspec.convert({"side": "banker", "stage": "2/2", "player": "ten",
                         "banker": "4", "insures": "player", "odds": 2}, InsuranceRow)
