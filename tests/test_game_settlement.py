"""Settlement on hand-built rounds: every line of every paytable, both commission modes,
bet availability by round, and the paytable as data."""

from __future__ import annotations

import pytest

from shoe_controller.game.cards import parse_cards
from shoe_controller.game.inputs import CardSeen, NewShoe
from shoe_controller.game.rules import BET_NAMES, BetAvailability, Paytable, Rules
from shoe_controller.game.shoe import Shoe

COMM = Rules(burn="none")
NO_COMM = Rules(burn="none", commission="no_commission")


def play(cards: str, rules: Rules = COMM):
    """Deal one round from ``cards`` (deal order) on a fresh shoe; its round_result."""
    shoe = Shoe(rules)
    shoe.apply(NewShoe())
    results = [e for c in parse_cards(cards) for e in shoe.apply(CardSeen(c))
               if e.type == "round_result"]
    assert len(results) == 1, cards
    return results[0]


def lost_except(settlement: dict[str, float], **wins: float) -> None:
    """Every bet is -1 except those named, which have the given net."""
    expected = {b: -1.0 for b in BET_NAMES} | wins
    assert settlement == expected


def test_player_natural_win():
    r = play("9S 2H KD 3C")  # P 9 natural, B 5
    assert (r.player_total, r.banker_total, r.winner, r.natural) == (9, 5, "player", True)
    lost_except(r.settlement, player=1.0, player_natural=3.5, player_bonus=1.0)


@pytest.mark.parametrize(("rules", "banker"), [(COMM, 0.95), (NO_COMM, 1.0)])
def test_banker_natural_win(rules, banker):
    r = play("2S 9H 3D KC", rules)  # P 5, B 9 natural
    lost_except(r.settlement, banker=banker, banker_natural=3.5, banker_bonus=1.0)


def test_natural_tie_with_both_pairs_pushes_main_bets_and_bonuses():
    r = play("4S 4H 4D 4C")  # P 8 natural, B 8 natural; 4S/4D and 4H/4C pairs
    assert r.winner == "tie" and r.player_pair and r.banker_pair
    lost_except(
        r.settlement,
        player=0.0, banker=0.0, tie=8.0, player_pair=11.0, banker_pair=11.0,
        either_pair=5.0, player_natural=3.5, banker_natural=3.5,
        player_bonus=0.0, banker_bonus=0.0,
    )


def test_perfect_pair_paid_once_with_either_pair_once():
    r = play("4S 2H 4S 3C")  # P 4S 4S natural 8 (perfect pair), B 5
    lost_except(
        r.settlement,
        player=1.0, player_pair=11.0, either_pair=5.0, perfect_pair=25.0,
        player_natural=3.5, player_bonus=1.0,
    )


def test_banker_perfect_pair_and_both_pairs():
    r = play("3S 5H 3D 5H 2C")  # P 6 stands; B 5H 5H = 0 draws 2C -> 2
    assert r.banker == ("5H", "5H", "2C") and r.winner == "player"
    lost_except(
        r.settlement,
        player=1.0, player_pair=11.0, banker_pair=11.0, either_pair=5.0,
        perfect_pair=25.0, player_bonus=1.0,  # non-natural win by 4
    )


def test_non_natural_tie_loses_bonuses():
    r = play("2S 4H 4D 2C")  # P 6, B 6, both stand
    lost_except(r.settlement, player=0.0, banker=0.0, tie=8.0)


@pytest.mark.parametrize(
    ("third", "margin", "pays"),
    [("KD", 9, 30.0), ("AD", 8, 10.0), ("2D", 7, 6.0), ("3D", 6, 4.0), ("4D", 5, 2.0),
     ("5D", 4, 1.0), ("6D", 3, -1.0)],
)
def test_player_bonus_margins(third, margin, pays):
    r = play(f"2S KH 2D KC 5S {third}")  # P 2+2+5 = 9; B K K + third
    assert r.player_total - r.banker_total == margin and r.winner == "player"
    assert r.settlement["player_bonus"] == pays
    assert r.settlement["banker_bonus"] == -1.0


@pytest.mark.parametrize(
    ("third", "margin", "pays"),
    [("7D", 9, 30.0), ("6D", 8, 10.0), ("5D", 7, 6.0), ("4D", 6, 4.0), ("3D", 5, 2.0),
     ("2D", 4, 1.0), ("AD", 3, -1.0)],
)
def test_banker_bonus_margins(third, margin, pays):
    r = play(f"KS AH KD AC KH {third}")  # P K K K = 0; B A A + third
    assert r.banker_total - r.player_total == margin and r.winner == "banker"
    assert r.settlement["banker_bonus"] == pays
    assert r.settlement["player_bonus"] == -1.0


def test_lucky_six_on_two_cards_and_no_commission_six():
    cards = "2S 2H 3D 4C KS"  # P 2+3+K = 5; B 2+4 = 6 stands on a third card of 0
    r = play(cards)
    assert (r.player_total, r.banker_total, len(r.banker)) == (5, 6, 2)
    lost_except(r.settlement, banker=0.95, lucky_six=12.0, lucky_six_2=22.0)
    lost_except(play(cards, NO_COMM).settlement, banker=0.5, lucky_six=12.0, lucky_six_2=22.0)


def test_lucky_six_on_three_cards():
    r = play("2S AH 2D AC KS 4D")  # P 4; B A A 4 = 6
    assert (r.player_total, r.banker_total, len(r.banker)) == (4, 6, 3)
    lost_except(r.settlement, banker=0.95, banker_pair=11.0, either_pair=5.0,
                lucky_six=20.0, lucky_six_3=50.0, player_pair=11.0)
    assert play("2S AH 2D AC KS 4D", NO_COMM).settlement["banker"] == 0.5


def test_lucky_seven_on_two_cards():
    r = play("3S 2H 4D 3C KS")  # P 7 stands; B 5 draws K = 5
    lost_except(r.settlement, player=1.0, lucky_seven=6.0, lucky_seven_2=15.0)


def test_lucky_seven_on_three_cards():
    r = play("AS KH AD KC 5S KD")  # P A A 5 = 7; B 0
    assert r.settlement["lucky_seven"] == 15.0 and r.settlement["lucky_seven_3"] == 30.0
    assert r.settlement["lucky_seven_2"] == -1.0 and r.settlement["super_lucky_seven"] == -1.0
    assert r.settlement["player_bonus"] == 6.0  # non-natural win by 7


@pytest.mark.parametrize(
    ("cards", "n", "pays"),
    [("3S 3H 4D 3C", 4, 30.0), ("3S 2H 4D 3C AS", 5, 40.0), ("AS AH AD AC 5S 4D", 6, 100.0)],
)
def test_super_lucky_seven_by_card_count(cards, n, pays):
    r = play(cards)
    assert (r.player_total, r.banker_total, len(r.player) + len(r.banker)) == (7, 6, n)
    assert r.settlement["super_lucky_seven"] == pays
    assert r.settlement["lucky_seven"] == (6.0 if len(r.player) == 2 else 15.0)


def test_banker_non_six_win_no_commission_pays_even():
    r = play("2S 9H 3D KC", NO_COMM)
    assert r.settlement["banker"] == 1.0


def test_paytable_is_data():
    table = Paytable(tie=9.0, banker=0.9, super_lucky_seven_4=33.0, bonus_natural_tie=-1.0)
    rules = Rules(burn="none", paytable=table)
    assert play("2S 4H 4D 2C", rules).settlement["tie"] == 9.0
    assert play("2S 9H 3D KC", rules).settlement["banker"] == 0.9
    assert play("3S 3H 4D 3C", rules).settlement["super_lucky_seven"] == 33.0
    assert play("4S 4H 4D 4C", rules).settlement["player_bonus"] == -1.0


def test_bets_close_after_their_round():
    """Defaults: bonuses offered to round 40, naturals/lucky/either/perfect to 50, pairs to
    60; closed bets are not settled and not listed in bets_open."""
    shoe = Shoe(COMM)
    events = shoe.apply(NewShoe())
    opened = {1: events[-1].bets}
    results = {}
    round_cards = parse_cards("2S 4H 4D 2C")  # a tie: four cards, no draw
    for _ in range(62):
        for c in round_cards:
            for ev in shoe.apply(CardSeen(c)):
                if ev.type == "round_result":
                    results[ev.round] = ev.settlement
                elif ev.type == "bets_open":
                    opened[ev.round] = ev.bets
    assert "player_bonus" in results[40] and "player_bonus" not in results[41]
    assert "lucky_six" in results[50] and "lucky_six" not in results[51]
    assert "perfect_pair" in results[50] and "perfect_pair" not in results[51]
    assert "player_pair" in results[60] and "player_pair" not in results[61]
    assert set(results[61]) == {"player", "banker", "tie"}
    for n, bets in opened.items():
        if n in results:
            assert tuple(results[n]) == bets


def test_bet_not_offered_at_all():
    rules = Rules(burn="none", bet_availability=BetAvailability(tie=0, super_lucky_seven=0))
    r = play("2S 4H 4D 2C", rules)
    assert "tie" not in r.settlement and "super_lucky_seven" not in r.settlement
