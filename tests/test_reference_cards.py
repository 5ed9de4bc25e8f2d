"""Cards and the inventory of cards seen, against plain references written here.

The references: a standard deck listed by hand (13 ranks x 4 suits, bridge order, the
baccarat values of DESIGN.md: ace 1, two to nine face value, ten and pictures 0), and a
``collections.Counter`` of the cards seen standing in for the packed inventory.
"""

from __future__ import annotations

import pickle
import random
from collections import Counter

import pytest

from shoe_controller.game import inventory as inv
from shoe_controller.game.cards import (
    ALL_CARDS,
    Card,
    CardParseError,
    parse_card,
    parse_cards,
    rank_value,
)

RANK_TEXT = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"]
SUIT_TEXT = ["S", "H", "D", "C"]
VALUE = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
         "T": 0, "J": 0, "Q": 0, "K": 0}
DECK = [r + s for s in SUIT_TEXT for r in RANK_TEXT]  # AS..KS, AH..KH, AD..KD, AC..KC


def test_the_deck_in_order_with_ranks_suits_values_and_indexes():
    assert [c.code for c in ALL_CARDS] == DECK
    for i, code in enumerate(DECK):
        c = ALL_CARDS[i]
        assert (c.index, c.rank, c.suit, c.value) == (
            i, RANK_TEXT.index(code[0]) + 1, code[1], VALUE[code[0]])
        assert str(c) == code and repr(c) == f"Card({code!r})"
    assert [rank_value(r) for r in range(1, 14)] == [VALUE[r] for r in RANK_TEXT]


def test_parse_every_spelling_and_refuse_the_rest():
    for code in DECK:
        c = parse_card(code)
        assert c is ALL_CARDS[DECK.index(code)]
        assert parse_card(code.lower()) is c and parse_card(f"  {code}\t") is c
        if code[0] == "T":
            assert parse_card("10" + code[1]) is c and parse_card("10" + code[1].lower()) is c
    for bad in ["", "1S", "11H", "ZZ", "AX", "A", "S", "10", "0S", "KDD", "A S", "1OH"]:
        with pytest.raises(CardParseError) as e:
            parse_card(bad)
        assert e.value.text == bad
        assert str(e.value) == (f"{bad!r} is not a card: expected a rank (A 2-9 T 10 J Q K) "
                                "followed by a suit (S H D C)")
    assert str(CardParseError("XY", "no such thing")) == "'XY' is not a card: no such thing"
    assert isinstance(CardParseError("XY"), ValueError)
    assert parse_cards(" as  kd\n10h ") == [parse_card("AS"), parse_card("KD"), parse_card("TH")]
    assert parse_cards("") == []


def test_cards_are_immutable_ordered_and_pickle_to_the_same_object():
    c = parse_card("7D")
    with pytest.raises(AttributeError, match="cards are immutable"):
        c.rank = 8  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(c)) is c
    assert sorted(random.Random(3).sample(list(ALL_CARDS), 52)) == list(ALL_CARDS)
    assert parse_card("KS") < parse_card("AH") and not parse_card("AH") < parse_card("KS")
    assert not c < c
    assert isinstance(c, Card)


@pytest.mark.parametrize("decks", [1, 2, 6, 8])
def test_the_inventory_against_a_counter(decks):
    rng = random.Random(decks)
    packed, seen = inv.EMPTY, Counter()
    # more than the decks hold of some cards (excess), none of others
    draws = [rng.choice(DECK[:20]) for _ in range(decks * 30)] + ["KC"] * (decks + 2)
    for i, code in enumerate(draws):
        c = parse_card(code)
        packed = inv.add(packed, c)
        seen[code] += 1
        if i % 7 and i != len(draws) - 1:
            continue
        assert inv.count(packed, c) == seen[code]
        assert inv.counts(packed) == tuple(seen[k] for k in DECK)
        assert inv.total(packed) == sum(seen.values())
        for k in DECK:
            assert inv.is_excess(packed, parse_card(k), decks) == (seen[k] > decks)
        assert inv.remaining(packed, decks) == tuple(decks - seen[k] for k in DECK)
        assert inv.remaining_by_rank(packed, decks) == tuple(
            sum(decks - seen[r + s] for s in SUIT_TEXT) for r in RANK_TEXT)
    assert inv.count(packed, parse_card("KC")) == decks + 2
    assert inv.is_excess(packed, parse_card("KC"), decks)
    assert {k: 1 << (16 * i) for i, k in enumerate(DECK)} == inv.SHIFT_BY_CODE


def test_an_empty_inventory():
    assert inv.counts(inv.EMPTY) == (0,) * 52 and inv.total(inv.EMPTY) == 0
    assert inv.remaining(inv.EMPTY, 8) == (8,) * 52
    assert inv.remaining_by_rank(inv.EMPTY, 8) == (32,) * 13
    assert not inv.is_excess(inv.EMPTY, parse_card("AS"), 1)
    one = inv.add(inv.EMPTY, parse_card("AS"))
    assert not inv.is_excess(one, parse_card("AS"), 1)
    assert inv.is_excess(inv.add(one, parse_card("AS")), parse_card("AS"), 1)
