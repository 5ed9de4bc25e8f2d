"""The tableau and the round machine against a short, independently written reference,
on every one of the 10^6 sequences of six card values, then through the full Shoe."""

from __future__ import annotations

import itertools
import random

import pytest

from shoe_controller.game import round as rnd
from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.inputs import CardSeen, NewShoe
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.tableau import banker_draws, coup, hand_total, is_natural, player_draws


def reference(vals):
    """Punto Banco from the rule sheet, written plainly and separately from the core.

    Returns (player values, banker values, the prompt after the 4th card, the prompt
    after Player's third card or None)."""
    player = [vals[0], vals[2]]
    banker = [vals[1], vals[3]]
    nxt = 4

    def score(hand):
        return sum(hand) % 10

    if score(player) in (8, 9) or score(banker) in (8, 9):
        return player, banker, "stand", None
    third = None
    if score(player) < 6:
        third = vals[nxt]
        player.append(third)
        nxt += 1
    b = score(banker)
    if third is None:
        banker_takes = b < 6
    else:
        banker_takes = {
            0: True,
            1: True,
            2: True,
            3: third != 8,
            4: third in (2, 3, 4, 5, 6, 7),
            5: third in (4, 5, 6, 7),
            6: third in (6, 7),
            7: False,
        }[b]
    if banker_takes:
        banker.append(vals[nxt])
    if third is None:
        return player, banker, "banker_draws" if banker_takes else "stand", None
    return player, banker, "player_draws", "banker_draws" if banker_takes else "stand"


def machine(vals):
    """Deal values through the round machine; collect hands and prompts."""
    node = rnd.START
    player, banker, prompts = [], [], []
    for v in vals:
        slot = rnd.due(node)
        if slot is None:
            break
        hand, pos = slot
        target = player if hand == "player" else banker
        assert pos == len(target) + 1
        target.append(v)
        node = rnd.deal(node, v)
        if rnd.prompt(node) is not None:
            prompts.append(rnd.prompt(node))
    assert rnd.is_complete(node)
    return player, banker, prompts, rnd.outcome(node)


def test_every_six_value_sequence_agrees_with_reference():
    checked = 0
    winners = {"player": 0, "banker": 0, "tie": 0}
    for vals in itertools.product(range(10), repeat=6):
        p, b, prompt4, prompt5 = reference(vals)
        mp, mb, prompts, out = machine(vals)
        assert (mp, mb) == (p, b), vals
        expected_prompts = [prompt4] + ([prompt5] if prompt5 else [])
        if len(p) + len(b) == 6:
            expected_prompts.append("stand")  # after Banker's third card, nothing is due
        elif prompt4 == "banker_draws":
            expected_prompts.append("stand")
        assert prompts == expected_prompts, vals
        pt, bt = sum(p) % 10, sum(b) % 10
        assert (out.player_total, out.banker_total) == (pt, bt)
        assert out.winner == ("player" if pt > bt else "banker" if bt > pt else "tie")
        assert out.player_natural == (len(p) == 2 and pt >= 8)
        assert out.banker_natural == (len(b) == 2 and bt >= 8)
        assert coup(vals) == (tuple(p), tuple(b))
        winners[out.winner] += 1
        checked += 1
    assert checked == 10**6
    # each sequence is equally likely with an infinite shoe of value-uniform cards;
    # sanity: the three outcomes all occur and Banker wins more often than Player
    assert winners["banker"] > winners["player"] > winners["tie"] > 0


def test_tableau_functions_spot_checks():
    assert hand_total([9, 9, 9]) == 7
    assert is_natural([9, 0]) and not is_natural([9, 0, 0]) and not is_natural([3, 4])
    assert [t for t in range(10) if player_draws(t)] == [0, 1, 2, 3, 4, 5]
    # the Banker table of the rule sheet, row by row (x: draws on these third cards)
    sheet = {
        0: range(10),
        1: range(10),
        2: range(10),
        3: [0, 1, 2, 3, 4, 5, 6, 7, 9],
        4: [2, 3, 4, 5, 6, 7],
        5: [4, 5, 6, 7],
        6: [6, 7],
        7: [],
    }
    for total, draws_on in sheet.items():
        assert [v for v in range(10) if banker_draws(total, v)] == list(draws_on)
    assert [t for t in range(8) if banker_draws(t, None)] == [0, 1, 2, 3, 4, 5]


def test_card_not_due_is_detected():
    node = rnd.START
    for v in (9, 0, 0, 0):  # Player natural 9
        node = rnd.deal(node, v)
    assert rnd.is_complete(node) and rnd.due(node) is None
    with pytest.raises(rnd.CardNotDue):
        rnd.deal(node, 3)


def test_shuffled_shoes_through_the_full_shoe_machine_agree_with_reference():
    """100 shuffled 8-deck shoes (~8,000 rounds) through Shoe, card by card: every
    round_result matches the reference dealt from the same card stream."""
    rng = random.Random(20261130)
    shoe = Shoe(Rules(burn="none", decks=8))
    rounds = 0
    for _ in range(100):
        cards = [c for c in ALL_CARDS for _ in range(8)]
        rng.shuffle(cards)
        shoe.apply(NewShoe())
        results = [ev for c in cards for ev in shoe.apply(CardSeen(c)) if ev.type == "round_result"]
        stream = [c.code for c in cards]
        pos = 0
        for ev in results:
            codes = stream[pos : pos + 6]
            p, b, _, _ = reference([_value(c) for c in codes] + [0] * (6 - len(codes)))
            player = [codes[0], codes[2]] + ([codes[4]] if len(p) == 3 else [])
            banker = [codes[1], codes[3]] + ([codes[len(p) + 2]] if len(b) == 3 else [])
            assert (list(ev.player), list(ev.banker)) == (player, banker)
            assert ev.player_total == sum(p) % 10 and ev.banker_total == sum(b) % 10
            pos += len(p) + len(b)
            rounds += 1
        assert len(stream) - pos < 6  # only an unfinished last round is left over
    assert rounds > 7000


def _value(code: str) -> int:
    r = code[0]
    return 1 if r == "A" else 0 if r in "TJQK" else int(r)
