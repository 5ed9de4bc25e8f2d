"""The protection projection over whole shoes dealt through the real game core."""

from __future__ import annotations

import random
from fractions import Fraction

from shoe_controller.game import inputs as I
from shoe_controller.game import odds
from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.game.events import (
    CardDealt,
    IntegrityAlert,
    Misdeal,
    ResultConfirmed,
    RoundStarted,
    ShoeAnalysis,
    ShoeStarted,
)
from shoe_controller.game.protection import AnalyticsConfig, initial_state, protect
from shoe_controller.game.rules import BetAvailability, Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.game.shuffle_integrity import FingerprintSet


def shuffled(seed: int, decks: int = 8) -> list[str]:
    cards = [c.code for c in ALL_CARDS for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


def new_deck_order(decks: int = 8) -> list[str]:
    return [c.code for _ in range(decks) for c in ALL_CARDS]


def deal(cards, orientation=None, rules=None, cut_left=16):
    """Drive the real shoe machine through a whole shoe; return its domain events."""
    shoe = Shoe(rules or Rules())
    events = list(shoe.apply(I.NewShoe()))
    for i, code in enumerate(cards):
        if i == len(cards) - cut_left:
            events += shoe.apply(I.CutCardSeen())
        o = orientation(code) if orientation else None
        events += shoe.apply(I.CardSeen(parse_card(code), orientation=o))
        if shoe.state.phase == "ended" or type(events[-1]).__name__ == "ShoeEnded":
            break
    return events


def run(events, state=None):
    state = state or initial_state(Rules())
    out = []
    for ev in events:
        state, raised = protect(state, ev)
        out += raised
    return state, out


def alerts(out, kind=None):
    return [e for e in out if isinstance(e, IntegrityAlert) and (kind is None or e.kind == kind)]


def test_fair_shoe_gets_an_analysis_every_round_and_no_alert():
    events = deal(shuffled(1))
    _state, out = run(events)
    analyses = [e for e in out if isinstance(e, ShoeAnalysis)]
    rounds = {e.round for e in events if isinstance(e, ResultConfirmed)}
    assert len(analyses) == len(rounds) - 1  # none after the last round
    assert [a.round for a in analyses] == sorted(rounds)[:-1]
    assert not [a for a in alerts(out) if a.kind != "advantage"]
    # the analysis is the exact one of the cards left
    first = analyses[0]
    seen = []
    for ev in events:
        if isinstance(ev, ResultConfirmed) and ev.round == first.round:
            break
        code = getattr(ev, "card", None)
        if code:
            seen.append(code)
    expected = odds.analyse(odds.remaining_counts(8, seen))
    assert first.expected_value["tie"] == float(expected.expected_value["tie"])
    assert set(first.house_edge) == set(odds.BETS)


def test_unshuffled_new_decks_raise_runs_and_order_alerts_once():
    _state, out = run(deal(new_deck_order()))
    kinds = [a.kind for a in alerts(out)]
    assert kinds.count("shuffle_runs") >= 1
    assert "shuffle_order" in kinds
    runs = alerts(out, "shuffle_runs")[0]
    assert runs.evidence["statistic"] >= runs.evidence["threshold"] == 10
    assert runs.round is not None
    # each test alerts at most once per shoe
    tests = [a.evidence["test"] for a in alerts(out) if a.kind != "advantage"]
    assert len(tests) == len(set(tests))


def test_one_riffle_of_an_ordered_shoe_is_caught_by_the_adjacency_test():
    ordered = new_deck_order()
    rng = random.Random(3)
    half = len(ordered) // 2
    left, right = ordered[:half], ordered[half:]
    riffled = []
    while left or right:  # a sloppy riffle: packets of 1-3 cards from each half
        for pile in (left, right):
            k = rng.randint(1, 3)
            riffled += pile[:k]
            del pile[:k]
    _, out = run(deal(riffled))
    order = alerts(out, "shuffle_order")
    assert order and order[0].evidence["reference"] == "deck_order"
    assert order[0].evidence["statistic"] >= 6


def test_a_shoe_dealt_again_without_shuffling_repeats_the_previous_one():
    cards = shuffled(7)
    rules = Rules()
    state, out = run(deal(cards, rules=rules))
    assert not alerts(out, "shuffle_repeat")
    assert len(state.fingerprints) > 300
    # the same order again (a shoe "shuffled" for show): shoe 2
    again = [ShoeStarted(shoe=2, decks=8), *renumber(deal(cards, rules=rules), shoe=2)]
    state, out = run(again[1:], state)
    repeat = alerts(out, "shuffle_repeat")
    assert repeat and repeat[0].evidence["earlier_shoes"] == [1]
    assert repeat[0].evidence["statistic"] >= 2
    # its neighbours are the previous shoe's: the adjacency test sees it too
    assert any(a.evidence["reference"] == "previous_shoe" for a in alerts(out, "shuffle_order"))


def test_a_fresh_shuffle_between_shoes_raises_nothing_and_fingerprints_carry_over():
    state, _ = run(deal(shuffled(11)))
    state, out = run(renumber(deal(shuffled(12)), shoe=2), state)
    assert not [a for a in alerts(out) if a.kind != "advantage"]
    assert len(state.known) > 300  # shoe 1's windows


def test_fingerprints_from_the_store_detect_a_shoe_from_an_earlier_run():
    cards = shuffled(21)
    first, _ = run(deal(cards), initial_state(Rules(), salt=b"table-secret"))
    known = FingerprintSet.of((fp, 1) for fp in first.fingerprints)
    later = initial_state(Rules(), known=known, salt=b"table-secret")
    _, out = run(renumber(deal(cards), shoe=5), later)
    assert alerts(out, "shuffle_repeat")
    # a different salt cannot match: fingerprints are keyed
    other = initial_state(Rules(), known=known, salt=b"another-key")
    _, out = run(renumber(deal(cards), shoe=5), other)
    assert not alerts(out, "shuffle_repeat")


def test_edge_sorted_shoe_is_flagged_and_random_orientation_is_not():
    def sorted_edges(code):
        return "down" if parse_card(code).rank in (6, 7, 8, 9) else "up"

    _, out = run(deal(shuffled(5), orientation=sorted_edges))
    edge = alerts(out, "edge_sorting")
    assert len(edge) == 1
    assert edge[0].evidence["p_value"] <= edge[0].evidence["threshold"]
    rng = random.Random(9)
    _, out = run(deal(shuffled(5), orientation=lambda code: rng.choice(("up", "down"))))
    assert not alerts(out, "edge_sorting")


def sixes_late_shoe():
    """A shoe whose last ~100 cards hold every 6: Lucky Six bets turn positive late."""
    sixes = [c for c in new_deck_order() if c[0] == "6"]
    rest = [c for c in shuffled(2) if c[0] != "6"]
    tail = sixes + rest[300:]
    random.Random(1).shuffle(tail)
    return rest[:300] + tail


def test_advantage_alert_when_a_bet_turns_positive_for_the_player():
    # threshold default 0
    _, out = run(deal(sixes_late_shoe()))
    adv = alerts(out, "advantage")
    assert adv
    first = adv[0]
    assert first.evidence["statistic"] > first.evidence["threshold"] == 0.0
    # edge-triggered: one alert per bet while it stays positive
    bets = [(a.evidence["bet"]) for a in adv]
    analyses = {e.round: e for e in out if isinstance(e, ShoeAnalysis)}
    assert analyses[first.round].expected_value[first.evidence["bet"]] > 0
    assert len(bets) <= len(analyses)


def test_bets_no_longer_offered_raise_no_advantage_alert():
    lucky = {"lucky_six": 0, "lucky_six_2": 0, "lucky_six_3": 0}  # never offered here
    rules = Rules(bet_availability=BetAvailability(**lucky))
    _, out = run(deal(sixes_late_shoe(), rules=rules), initial_state(rules))
    assert not {a.evidence["bet"] for a in alerts(out, "advantage")} & set(lucky)
    _, out = run(deal(sixes_late_shoe()))
    assert {a.evidence["bet"] for a in alerts(out, "advantage")} & set(lucky)


def test_threshold_and_watched_bets_are_configurable():
    config = AnalyticsConfig(advantage_threshold=-1.0, advantage_bets=("tie",))
    state = initial_state(Rules(), config)
    _, out = run(deal(shuffled(3)), state)
    adv = alerts(out, "advantage")
    assert [a.evidence["bet"] for a in adv] == ["tie"]  # always above -1: raised once


def test_carried_misdeal_card_counts_once():
    state = initial_state(Rules())
    state, _ = protect(state, ShoeStarted(shoe=1, decks=1))
    state, _ = protect(state, Misdeal(shoe=1, round=1, kind="extra_card", card="AS",
                                      policy="carry"))
    state, _ = protect(state, RoundStarted(shoe=1, round=2))
    state, _ = protect(state, CardDealt(shoe=1, round=2, hand="player", position=1, card="AS"))
    assert state.sequence == ("AS",)
    state, _ = protect(state, CardDealt(shoe=1, round=2, hand="banker", position=1, card="AS"))
    assert state.sequence == ("AS", "AS")


def test_analysis_uses_the_table_paytable_and_commission_mode():
    rules = Rules(commission="no_commission")
    events = deal(shuffled(4), rules=rules)
    _, out = run(events, initial_state(rules))
    first = next(e for e in out if isinstance(e, ShoeAnalysis))
    p = first.probabilities
    assert abs(first.expected_value["banker"] - (p["banker"] - p["lucky_six"] / 2
                                                 - p["player"])) < 1e-12
    assert Fraction(first.house_edge["player_pair"]).limit_denominator(10**6) > 0


def renumber(events, shoe):
    import msgspec

    return [msgspec.structs.replace(e, shoe=shoe) for e in events]


def test_analytics_config_is_validated_by_the_config_loader():
    import pytest

    from shoe_controller.config import ConfigError, load_config_text

    cfg = load_config_text("[analytics]\nadvantage_threshold = 0.01\nadvantage_bets = ['tie']\n")
    assert cfg.analytics.advantage_threshold == 0.01
    assert cfg.analytics.advantage_bets == ("tie",)
    with pytest.raises(ConfigError, match="advantage_bets"):
        load_config_text("[analytics]\nadvantage_bets = ['tie', 'dragon']\n")
    with pytest.raises(ConfigError, match="adjacency_z"):
        load_config_text("[analytics]\nadjacency_z = 'high'\n")
    with pytest.raises(ConfigError, match="nope"):
        load_config_text("[analytics]\nnope = 1\n")


def test_fold_rebuilds_what_matters_quickly():
    from shoe_controller.game.protection import fold

    shoe1 = deal(new_deck_order())  # alerts in shoe 1
    shoe2 = renumber(deal(shuffled(30)), shoe=2)
    cut = next(i for i, e in enumerate(shoe2) if isinstance(e, ResultConfirmed)
               and e.round == 20)
    journal = shoe1 + shoe2[: cut + 1]
    slow, _ = run(journal)
    fast = fold(initial_state(Rules()), journal)
    for name in ("shoe", "sequence", "oriented", "previous", "fingerprints", "raised",
                 "above", "repeat_matches"):
        assert getattr(fast, name) == getattr(slow, name), name
    assert list(fast.known.fps) == list(slow.known.fps)
    # and both continue identically
    rest = shoe2[cut + 1 :]
    assert run(rest, fast)[1] == run(rest, slow)[1]
