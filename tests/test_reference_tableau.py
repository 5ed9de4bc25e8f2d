"""The tableau's functions, exhaustively, against the reference's plain statement of
DESIGN.md's drawing rules (tests/support/baccarat_ref.py), and the round machine's
outcome for every two- and three-card hand pair."""

from __future__ import annotations

import itertools

from shoe_controller.game import round as rnd
from shoe_controller.game import tableau as T
from tests.support import baccarat_ref as ref

#: one card code per baccarat value 0-9
CODE = {0: "KS", 1: "AS", 2: "2S", 3: "3S", 4: "4S", 5: "5S", 6: "6S", 7: "7S", 8: "8S",
        9: "9S"}


def test_hand_total_and_natural_for_every_hand():
    for n in (1, 2, 3):
        for values in itertools.product(range(10), repeat=n):
            cards = [CODE[v] for v in values]
            assert T.hand_total(values) == ref.total(cards)
            assert T.hand_total(list(values)) == ref.total(cards)
            assert T.is_natural(values) == ref.natural(cards), values
            assert T.is_natural(list(values)) == ref.natural(cards)


def test_player_draws_on_0_to_5():
    assert [t for t in range(10) if T.player_draws(t)] == [0, 1, 2, 3, 4, 5]


def test_banker_draws_for_every_total_and_third_card():
    for b in range(10):
        assert T.banker_draws(b, None) == ref.banker_draws(b, None), b
        assert T.BANKER_DRAWS[b][10] == ref.banker_draws(b, None)
        for v in range(10):
            assert T.banker_draws(b, v) == ref.banker_draws(b, CODE[v]), (b, v)
            assert T.BANKER_DRAWS[b][v] == ref.banker_draws(b, CODE[v])


def test_coup_and_the_round_machine_for_every_five_card_start():
    """Every sequence of five values (a sixth derived from them, so every value occurs
    there too): coup, the round graph's path, its due cards and outcome."""
    for five in itertools.product(range(10), repeat=5):
        values = (*five, (sum(five) * 7 + five[0]) % 10)
        cards = [CODE[v] for v in values]
        player, banker = ref.deal_round(cards)
        p, b = T.coup(values)
        assert [CODE[v] for v in p] == player and [CODE[v] for v in b] == banker
        order = [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]
        node = rnd.START
        hands = {"player": 0, "banker": 0}
        for c in order:
            due = rnd.due(node)
            assert due is not None and not rnd.is_complete(node)
            hand, position = due
            hands[hand] += 1
            assert position == hands[hand]
            node = rnd.deal(node, ref.value(c))
        assert hands == {"player": len(player), "banker": len(banker)}
        assert rnd.is_complete(node) and rnd.due(node) is None
        assert rnd.prompt(node) == "stand"
        out = rnd.outcome(node)
        assert out == rnd.Outcome(ref.total(player), ref.total(banker), len(player),
                                  len(banker), ref.winner(player, banker),
                                  ref.natural(player), ref.natural(banker))


def test_the_prompts_on_the_way():
    """After four cards: player_draws if Player draws, else banker_draws if Banker does,
    else stand; after Player's third card: banker_draws or stand."""
    for values in itertools.product(range(10), repeat=4):
        node = rnd.START
        for v in values:
            node = rnd.deal(node, v)
        player = [CODE[values[0]], CODE[values[2]]]
        banker = [CODE[values[1]], CODE[values[3]]]
        natural = ref.natural(player) or ref.natural(banker)
        if natural:
            want = "stand"
        elif ref.total(player) <= 5:
            want = "player_draws"
        elif ref.banker_draws(ref.total(banker), None):
            want = "banker_draws"
        else:
            want = "stand"
        assert rnd.prompt(node) == want, values
        if want == "player_draws":
            for v in range(10):
                third = rnd.deal(node, v)
                draws = ref.banker_draws(ref.total(banker), CODE[v])
                assert rnd.prompt(third) == ("banker_draws" if draws else "stand")
                assert rnd.is_complete(third) == (not draws)


def test_no_card_due_and_no_outcome_yet_are_refused_with_their_documented_messages():
    """round.py's doc: dealing to a complete round, or asking a round in progress for its
    outcome, raises CardNotDue saying which."""
    import pytest

    node = rnd.START
    for v in (8, 1, 0, 0):  # Player natural 8: complete after four cards
        with pytest.raises(rnd.CardNotDue, match=r"^the round is not complete$"):
            rnd.outcome(node)
        node = rnd.deal(node, v)
    assert rnd.is_complete(node) and rnd.outcome(node).winner == "player"
    with pytest.raises(rnd.CardNotDue, match=r"^the round is complete: no card is due$"):
        rnd.deal(node, 4)
