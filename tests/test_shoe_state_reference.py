"""What the shoe state reports about the cards (counts, what is left, by card and by
rank, dealt/burned/discarded/unread) after a shoe dealt by the reference dealer, counted
independently here; tables equal by their rules; a shoe resumed from its events."""

from __future__ import annotations

import random
from collections import Counter

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.inventory import add, count, counts, is_excess, remaining, total
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe, Table, initial_state, table_for
from tests.support import baccarat_ref as ref

RANKS = "A23456789TJQK"
CODES = [r + s for r in RANKS for s in "SHDC"]


def test_counts_and_what_is_left_after_a_shoe():
    rng = random.Random(4)
    decks = 2
    shoe = Shoe(Rules(decks=decks, burn="first_card", rounds="button", extra_card="burn"))
    cards = CODES * decks
    rng.shuffle(cards)
    read: Counter[str] = Counter()
    shoe.apply(I.NewShoe())
    ind = cards.pop()
    shoe.apply(I.CardSeen(parse_card(ind)))
    read[ind] += 1
    burned = 1 + ref.burn_after_indicator(ind)
    for _ in range(burned - 1):
        c = cards.pop()
        shoe.apply(I.CardSeen(parse_card(c)))
        read[c] += 1
    shoe.apply(I.UnreadableCard())  # an unread card with no round open: written off
    dealt = discarded = 0
    for n in range(1, 9):
        extra = cards.pop()  # a card with no round open: discarded (burn policy)
        shoe.apply(I.CardSeen(parse_card(extra)))
        read[extra] += 1
        discarded += 1
        shoe.apply(I.NewRound())
        player, banker = ref.deal_round(cards[::-1])
        for c in [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]:
            assert cards.pop() == c
            shoe.apply(I.CardSeen(parse_card(c)))
            read[c] += 1
            dealt += 1
        assert shoe.state.round == n
    s = shoe.state
    assert (s.reads, s.burned, s.discarded, s.unread, s.dealt) == (
        sum(read.values()), burned, discarded, 1, dealt)
    for code in CODES:
        card = parse_card(code)
        assert s.seen(card) == read[code], code
        assert s.remaining()[card.index] == decks - read[code]
    by_rank = s.remaining_by_rank()
    assert len(by_rank) == 13
    for i, r in enumerate(RANKS):
        assert by_rank[i] == 4 * decks - sum(read[r + x] for x in "SHDC"), r
    assert sum(s.remaining()) == 52 * decks - s.reads


def test_inventory_functions_against_a_counter():
    rng = random.Random(5)
    packed = 0
    seen: Counter[str] = Counter()
    for _ in range(500):
        code = rng.choice(CODES)
        packed = add(packed, parse_card(code))
        seen[code] += 1
    assert total(packed) == 500
    for code in CODES:
        card = parse_card(code)
        assert count(packed, card) == seen[code] == counts(packed)[card.index]
        assert remaining(packed, 8)[card.index] == 8 - seen[code]
        assert is_excess(packed, card, seen[code]) is False
        assert is_excess(packed, card, seen[code] - 1) is True


def test_tables_are_equal_by_their_rules():
    a, b = Table(Rules()), Table(Rules())
    c = Table(Rules(decks=6))
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != c and a != Rules() and (a == object()) is False
    assert table_for(Rules()) is table_for(Rules())
    assert initial_state(Rules(decks=6)) == initial_state(Rules(decks=6))
    assert initial_state(Rules(decks=6)) != initial_state(Rules(decks=8))
    assert repr(c).startswith("Table(Rules(decks=6")


def test_a_shoe_resumed_from_its_events_goes_on_the_same():
    rules = Rules(burn="none", rounds="button", confirm="button")
    text = ["7S", "KC", "9D", "5D", "3H"]
    a = Shoe(rules)
    events = [*a.apply(I.NewShoe()), *a.apply(I.NewRound())]
    for c in text[:3]:
        events += a.apply(I.CardSeen(parse_card(c)))
    b = Shoe.from_events(rules, events)
    assert b.state == a.state and b.rules == rules and b.state.due() == ("banker", 2)
    for c in text[3:]:
        assert a.apply(I.CardSeen(parse_card(c))) == b.apply(I.CardSeen(parse_card(c)))
    assert a.apply(I.ConfirmResult()) == b.apply(I.ConfirmResult())
    assert b.state.round == 1 and not b.state.round_open
