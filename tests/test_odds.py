"""Exact odds: published 8-deck figures, and agreement with independent brute force.

The brute force here shares nothing with shoe_controller.game.odds: it deals card by
card (physical cards for the tiny shoes, value classes for the bigger ones), applies the
tableau as DESIGN.md words it and settles every bet from DESIGN.md's text.
"""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.game import odds
from shoe_controller.game.cards import ALL_CARDS, parse_card, parse_cards
from shoe_controller.game.rules import Paytable

# --- an independent tableau and settlement, written from DESIGN.md ----------------------


def banker_draws(banker: int, player_third: int | None) -> bool:
    if player_third is None:
        return banker <= 5
    table = {
        0: range(10),
        1: range(10),
        2: range(10),
        3: [0, 1, 2, 3, 4, 5, 6, 7, 9],
        4: [2, 3, 4, 5, 6, 7],
        5: [4, 5, 6, 7],
        6: [6, 7],
        7: [],
    }
    return player_third in table.get(banker, [])


def deal(draw):
    """Play one round; ``draw()`` returns the next card's value. -> (P values, B values)."""
    p = [draw()]
    b = [draw()]
    p.append(draw())
    b.append(draw())
    pt, bt = sum(p) % 10, sum(b) % 10
    if pt >= 8 or bt >= 8:
        return p, b
    third = None
    if pt <= 5:
        p.append(draw())
        third = p[2]
    if banker_draws(bt, third):
        b.append(draw())
    return p, b


def settle(p, b, pair_p=False, pair_b=False, perfect_p=False, perfect_b=False, commission=True):
    """Every bet's net result per unit, written straight from DESIGN.md's bet list."""
    pt, bt = sum(p) % 10, sum(b) % 10
    nat_p, nat_b = len(p) == 2 and pt >= 8, len(b) == 2 and bt >= 8
    winner = "player" if pt > bt else "banker" if bt > pt else "tie"
    out = {}
    out["player"] = 1 if winner == "player" else 0 if winner == "tie" else -1
    if winner == "banker":
        out["banker"] = Fraction(95, 100) if commission else (Fraction(1, 2) if bt == 6 else 1)
    else:
        out["banker"] = 0 if winner == "tie" else -1
    out["tie"] = 8 if winner == "tie" else -1
    out["player_pair"] = 11 if pair_p else -1
    out["banker_pair"] = 11 if pair_b else -1
    out["either_pair"] = 5 if pair_p or pair_b else -1
    out["perfect_pair"] = 25 if perfect_p or perfect_b else -1
    out["player_natural"] = Fraction(7, 2) if nat_p else -1
    out["banker_natural"] = Fraction(7, 2) if nat_b else -1
    margin_pay = {9: 30, 8: 10, 7: 6, 6: 4, 5: 2, 4: 1}
    for side, mine, theirs in (("player", pt, bt), ("banker", bt, pt)):
        if nat_p or nat_b:
            res = 1 if mine > theirs else 0 if mine == theirs else -1
        else:
            res = margin_pay.get(mine - theirs, -1) if mine > theirs else -1
        out[f"{side}_bonus"] = res
    six = winner == "banker" and bt == 6
    out["lucky_six"] = ({2: 12, 3: 20}[len(b)]) if six else -1
    out["lucky_six_2"] = 22 if six and len(b) == 2 else -1
    out["lucky_six_3"] = 50 if six and len(b) == 3 else -1
    seven = winner == "player" and pt == 7
    out["lucky_seven"] = ({2: 6, 3: 15}[len(p)]) if seven else -1
    out["lucky_seven_2"] = 15 if seven and len(p) == 2 else -1
    out["lucky_seven_3"] = 30 if seven and len(p) == 3 else -1
    out["super_lucky_seven"] = (
        {4: 30, 5: 40, 6: 100}[len(p) + len(b)] if pt == 7 and bt == 6 else -1
    )
    return out


def brute_force_cards(cards, commission=True):
    """Every ordering of the physical cards of a tiny shoe (exact, no shortcuts)."""
    n = len(cards)
    total: dict[str, Fraction] = Counter()
    wins: dict[str, Fraction] = Counter()
    count = 0
    # the round uses at most 6 cards: enumerate ordered 6-tuples of distinct cards
    for seq in itertools.permutations(range(n), 6):
        p_idx, b_idx = [seq[0], seq[2]], [seq[1], seq[3]]
        p_vals = [cards[i].value for i in p_idx]
        b_vals = [cards[i].value for i in b_idx]
        rest = iter([cards[i].value for i in seq[4:]])
        pt, bt = sum(p_vals) % 10, sum(b_vals) % 10
        if pt < 8 and bt < 8:
            third = None
            if pt <= 5:
                third = next(rest)
                p_vals.append(third)
            if banker_draws(bt, third):
                b_vals.append(next(rest))
        pp = cards[p_idx[0]].rank == cards[p_idx[1]].rank
        bp = cards[b_idx[0]].rank == cards[b_idx[1]].rank
        ppp = cards[p_idx[0]] is cards[p_idx[1]]
        bpp = cards[b_idx[0]] is cards[b_idx[1]]
        result = settle(p_vals, b_vals, pp, bp, ppp, bpp, commission)
        for bet, r in result.items():
            total[bet] += r
            wins[bet] += r > 0
        count += 1
    return (
        {bet: Fraction(v) / count for bet, v in total.items()},
        {bet: Fraction(v, count) for bet, v in wins.items()},
    )


def brute_force_values(values: list[int]):
    """Outcome distribution by plain recursion over value counts, with Fractions."""
    dist: dict[tuple, Fraction] = Counter()

    def rec(counts, drawn, prob):
        # try to finish the round with the drawn values so far
        seq = iter(drawn)
        try:
            p, b = deal(lambda: next(seq))
        except StopIteration:
            n = sum(counts)
            for v in range(10):
                if counts[v]:
                    counts[v] -= 1
                    rec(counts, [*drawn, v], prob * Fraction(counts[v] + 1, n))
                    counts[v] += 1
            return
        dist[(sum(p) % 10, sum(b) % 10, len(p), len(b))] += prob

    rec(list(values), [], Fraction(1))
    return dist


def value_composition(counts):
    values = [0] * 10
    for card, n in zip(ALL_CARDS, counts, strict=True):
        values[card.value] += n
    return values


# --- published figures -----------------------------------------------------------------


def test_eight_deck_published_figures():
    a = odds.analyse(odds.shoe_counts(8))
    prob = {k: round(float(v), 6) for k, v in a.probabilities.items()}
    assert (prob["banker"], prob["player"], prob["tie"]) == (0.458597, 0.446247, 0.095156)
    edge = {k: round(float(v) * 100, 4) for k, v in a.house_edge.items()}
    assert edge["banker"] == 1.0579
    assert edge["player"] == 1.2351
    assert edge["tie"] == 14.3596
    assert edge["player_pair"] == 10.3614
    assert a.probabilities["player_pair"] == Fraction(31, 415)
    assert a.house_edge["player_pair"] == Fraction(43, 415)
    assert a.house_edge["banker_pair"] == Fraction(43, 415)
    assert set(a.house_edge) == set(odds.BETS)


def test_probabilities_of_a_round_sum_to_one():
    probs = odds.outcome_probabilities(odds.shoe_counts(8))
    assert sum(probs.values()) == 1
    a = odds.analyse(odds.shoe_counts(8))
    assert a.probabilities["banker"] + a.probabilities["player"] + a.probabilities["tie"] == 1


def test_no_commission_banker_pays_half_on_six():
    with_c = odds.analyse(odds.shoe_counts(8), commission=True)
    without = odds.analyse(odds.shoe_counts(8), commission=False)
    p_win = with_c.probabilities["banker"]
    p_lose = with_c.probabilities["player"]
    p_six = with_c.probabilities["lucky_six"]  # Banker wins with 6
    assert without.expected_value["banker"] == p_win - p_six / 2 - p_lose
    assert with_c.expected_value["banker"] == Fraction(95, 100) * p_win - p_lose
    # other bets do not depend on the commission mode
    assert without.expected_value["tie"] == with_c.expected_value["tie"]


def test_paytable_is_data():
    a = odds.analyse(odds.shoe_counts(8), paytable=Paytable(tie=9))
    p_tie = a.probabilities["tie"]
    assert a.expected_value["tie"] == 10 * p_tie - 1
    no_four = Paytable(bonus_margin_4=0.0)  # a win by 4 only pushes
    b = odds.analyse(odds.shoe_counts(8), paytable=no_four)
    assert b.expected_value["player_bonus"] < a.expected_value["player_bonus"]


# --- agreement with brute force ---------------------------------------------------------


@pytest.mark.parametrize(
    "shoe",
    [
        "AS AS 5H 5H KD QC 9S 8C",  # duplicate cards: perfect pairs possible
        "2S 3H 4D 5C 6S 7H TD JC 4S",
        "7S 7H 6D 6C KS KH 7D",
    ],
)
@pytest.mark.parametrize("commission", [True, False])
def test_tiny_shoes_agree_with_card_level_brute_force(shoe, commission):
    cards = parse_cards(shoe)
    counts = [0] * 52
    for c in cards:
        counts[c.index] += 1
    expected, wins = brute_force_cards(cards, commission)
    a = odds.analyse(counts, commission=commission)
    for bet in odds.BETS:
        assert a.expected_value[bet] == expected[bet], bet
        assert a.probabilities[bet] == wins[bet], bet


@pytest.mark.parametrize(
    "removed",
    [
        "",  # a fresh single deck
        # a depleted single deck: only a few value classes left in quantity
        " ".join(
            f"{r}{s}" for r in "23456789" for s in "SHD"
        ),
    ],
)
def test_single_deck_outcomes_agree_with_value_recursion(removed):
    counts = odds.remaining_counts(1, removed.split())
    expected = brute_force_values(value_composition(counts))
    got = odds.outcome_probabilities(counts)
    assert {
        (o.player_total, o.banker_total, o.player_cards, o.banker_cards): p
        for o, p in got.items()
    } == {k: v for k, v in expected.items() if v}


def test_single_deck_bets_agree_with_settlement_over_the_brute_force():
    counts = odds.remaining_counts(1, ["AS", "AH", "AD", "5C", "9S", "KH"])
    dist = brute_force_values(value_composition(counts))
    a = odds.analyse(counts)
    for bet in odds.BETS:
        if "pair" in bet:
            continue
        ev = Fraction(0)
        for (pt, bt, n_p, n_b), prob in dist.items():
            # any card values with these totals and counts settle the same way
            p = [pt] + [0] * (n_p - 1)
            b = [bt] + [0] * (n_b - 1)
            ev += prob * settle(p, b)[bet]
        assert a.expected_value[bet] == ev, bet


def test_pair_closed_form_depends_on_ranks_not_values():
    # removing all tens leaves J/Q/K: value-0 pairs are still pairs of a rank only
    counts = odds.remaining_counts(1, ["TS", "TH", "TD", "TC"])
    a = odds.analyse(counts)
    n = 48
    assert a.probabilities["player_pair"] == Fraction(12 * 4 * 3, n * (n - 1))
    assert a.probabilities["perfect_pair"] == 0  # a single deck has no identical cards


# --- errors -----------------------------------------------------------------------------


def test_bad_compositions_are_refused_with_the_reason():
    with pytest.raises(odds.CompositionError, match="KD removed 2 times"):
        odds.remaining_counts(1, ["KD", "KD"])
    with pytest.raises(odds.CompositionError, match="5 cards left"):
        odds.analyse([1] * 5 + [0] * 47)
    with pytest.raises(odds.CompositionError, match="52 card counts"):
        odds.analyse([8] * 10)


@pytest.mark.parametrize("decks", [16, 22])
def test_int64_path_equals_python_integers_up_to_its_limit(decks, monkeypatch):
    counts = odds.remaining_counts(decks, ["AS", "7H", "7H", "KD"])
    fast = odds.outcome_probabilities(counts)
    monkeypatch.setattr(odds, "_INT64_LIMIT", 0)  # force Python integers
    assert odds.outcome_probabilities(counts) == fast


def test_large_shoes_stay_exact_beyond_int64():
    # 40 decks: N(N-1)...(N-5) exceeds what int64 may safely hold; Python ints take over
    a = odds.analyse(odds.shoe_counts(40))
    assert a.probabilities["player_pair"] == Fraction(13 * 160 * 159, 2080 * 2079)
    assert sum(odds.outcome_probabilities(odds.shoe_counts(40)).values()) == 1


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(0, 2), min_size=10, max_size=10).filter(lambda v: 6 <= sum(v) <= 14)
)
def test_depleted_value_compositions_agree_with_value_recursion(values):
    # one card code per value class stands for the class (0 -> tens, 1 -> aces ...)
    counts = [0] * 52
    for v, n in enumerate(values):
        code = "T" if v == 0 else "A" if v == 1 else str(v)
        counts[parse_card(code + "S").index] = n
    expected = {k: p for k, p in brute_force_values(values).items() if p}
    got = odds.outcome_probabilities(counts)
    assert {
        (o.player_total, o.banker_total, o.player_cards, o.banker_cards): p
        for o, p in got.items()
    } == expected


def test_dragon_bonus_combinations_match_the_published_eight_deck_table():
    # Wizard of Odds, "Baccarat side bets", Dragon Bonus (8 decks): combinations out of
    # 416*415*414*413*412*411 (the page prints that total rounded to 15 digits)
    total = 416 * 415 * 414 * 413 * 412 * 411
    published = {
        "player": {9: 18_409_431_764_992, 8: 34_097_645_543_424, 7: 89_590_261_473_280,
                   6: 141_238_897_317_888, 5: 166_169_165_987_840, 4: 186_780_352_174_080},
        "banker": {9: 15_390_342_909_952, 8: 28_305_092_784_128, 7: 79_517_099_278_336,
                   6: 119_200_072_366_080, 5: 157_275_882_332_160, 4: 201_147_167_287_296},
    }
    probs = odds.outcome_probabilities(odds.shoe_counts(8))
    for side, margins in published.items():
        for margin, combos in margins.items():
            p = sum(
                pr for o, pr in probs.items()
                if not (o.player_natural or o.banker_natural)
                and (o.player_total - o.banker_total if side == "player"
                     else o.banker_total - o.player_total) == margin
            )
            assert p == Fraction(combos, total), (side, margin)
    natural_win = sum(pr for o, pr in probs.items() if o.player_natural
                      and o.player_total > o.banker_total)
    natural_tie = sum(pr for o, pr in probs.items() if o.player_natural
                      and o.player_total == o.banker_total)
    assert natural_win == Fraction(812_685_054_124_032, total)
    assert natural_tie == Fraction(89_325_908_267_520, total)
    a = odds.analyse(odds.shoe_counts(8))
    assert round(float(a.house_edge["player_bonus"]), 6) == 0.026517
    assert round(float(a.house_edge["banker_bonus"]), 6) == 0.093731


def test_lucky_six_and_card_count_figures_match_published_eight_deck_tables():
    # Wizard of Odds, Lucky 6 (Macau pays 12 / 20): winning Banker 6 on two / three cards
    total = 416 * 415 * 414 * 413 * 412 * 411
    a = odds.analyse(odds.shoe_counts(8))
    assert a.probabilities["lucky_six_2"] == Fraction(186_173_936_904_192, total)
    assert a.probabilities["lucky_six_3"] == Fraction(83_058_367_551_488, total)
    assert round(float(a.house_edge["lucky_six"]), 6) == 0.166836
    # the "4-5-6" table: probability the round uses 4, 5 or 6 cards
    probs = odds.outcome_probabilities(odds.shoe_counts(8))
    by_cards = {n: sum(p for o, p in probs.items() if o.player_cards + o.banker_cards == n)
                for n in (4, 5, 6)}
    assert [round(float(by_cards[n]), 6) for n in (4, 5, 6)] == [0.378868, 0.303444, 0.317687]
