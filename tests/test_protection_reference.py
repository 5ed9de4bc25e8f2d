"""protection.interleave, what ``replay`` prints, against its docstring: every event in
order, each followed by what the projection raised for it; ``analysis=False`` leaves out
the shoe_analysis events only (issue 15's campaign: no test ran interleave, and its
default was free to change)."""

from __future__ import annotations

from shoe_controller.game.events import ShoeAnalysis
from shoe_controller.game.protection import initial_state, interleave, protect
from shoe_controller.game.rules import Rules
from tests.test_protection import deal, new_deck_order


def test_interleave_puts_what_each_event_raised_after_it() -> None:
    events = deal(new_deck_order())[:120]  # a stacked shoe: analyses and alerts early
    expected, state = [], initial_state(Rules())
    for ev in events:
        state, raised = protect(state, ev)
        expected += [ev, *raised]
    assert any(isinstance(e, ShoeAnalysis) for e in expected)
    assert any(type(e).__name__ == "IntegrityAlert" for e in expected)
    assert interleave(events) == expected  # analyses included by default
    assert interleave(events, Rules()) == expected
    assert interleave(events, analysis=False) == [
        e for e in expected if not isinstance(e, ShoeAnalysis)]


def test_fold_of_one_shoe_or_none_is_protect_over_every_event() -> None:
    """fold's docstring: the same state as protect over the events, for a journal of the
    first shoe in progress, and for one that holds no shoe yet."""
    from shoe_controller.game.protection import fold

    events = deal(new_deck_order())[:150]
    slow = initial_state(Rules())
    for ev in events:
        slow, _ = protect(slow, ev)
    fast = fold(initial_state(Rules()), events)
    for name in ("shoe", "sequence", "oriented", "previous", "raised", "above"):
        assert getattr(fast, name) == getattr(slow, name), name
    empty = initial_state(Rules())
    assert fold(empty, []) == empty


def test_interleave_uses_the_table_s_rules_and_analytics_config() -> None:
    """A no-commission table's analyses (the Banker bet's value) and a config that raises
    no shuffle alert give other events than the defaults: interleave must use both."""
    import msgspec

    from shoe_controller.game.protection import AnalyticsConfig

    events = deal(new_deck_order())[:120]
    rules = msgspec.structs.replace(Rules(), commission="no_commission")
    quiet = AnalyticsConfig(order_run_threshold=416, suit_run_threshold=416,
                            adjacency_z=1e9, shuffle_weak_threshold=1e9)
    for r, c in ((rules, None), (None, quiet), (rules, quiet)):
        expected, state = [], initial_state(r, c)
        for ev in events:
            state, raised = protect(state, ev)
            expected += [ev, *raised]
        assert interleave(events, r, c) == expected
        assert expected != interleave(events), (r, c)


def test_the_end_of_a_shoe_runs_the_tests_once_more_for_its_last_round() -> None:
    """Cards that left the shoe after the last round's tests (none confirmed since) are
    tested when the shoe ends: the alert names the shoe's round count, and no analysis
    of a next round follows the end (there is none)."""
    from shoe_controller.game.events import (
        CardDealt,
        IntegrityAlert,
        ResultConfirmed,
        ShoeEnded,
        ShoeStarted,
    )

    state = initial_state(Rules())
    state, _ = protect(state, ShoeStarted(shoe=1, decks=8))
    for i, code in enumerate(new_deck_order()[:12]):  # 12 cards in deck order
        state, raised = protect(state, CardDealt(shoe=1, round=1, hand="player",
                                                 position=1 + i % 3, card=code))
        assert raised == ()
    state, raised = protect(state, ShoeEnded(shoe=1, rounds=7, reason="new_shoe"))
    runs = [e for e in raised if isinstance(e, IntegrityAlert) and e.kind == "shuffle_runs"]
    assert len(runs) == 1 and runs[0].round == 7
    assert runs[0].evidence["statistic"] == 12
    state, raised = protect(state, ResultConfirmed(shoe=1, round=7))
    assert not [e for e in raised if isinstance(e, ShoeAnalysis)]


def test_a_burned_misdeal_is_not_carried_and_a_copy_dealt_later_counts() -> None:
    from shoe_controller.game.events import CardDealt, Misdeal, ShoeStarted

    state, _ = protect(initial_state(Rules()), ShoeStarted(shoe=1, decks=8))
    state, _ = protect(state, Misdeal(shoe=1, round=1, kind="extra_card", card="5S",
                                      policy="burn"))
    state, _ = protect(state, CardDealt(shoe=1, round=2, hand="player", position=1,
                                        card="5S"))  # another of the eight 5S
    assert state.sequence == ("5S", "5S") and state.carried == ()


def test_a_one_deck_analysis_counts_every_card_seen_down_to_none() -> None:
    """The shoe_analysis after the first round is the exact analysis of the cards left:
    on one deck each card seen leaves none of its kind (counted here by hand)."""
    from shoe_controller.game import odds
    from shoe_controller.game.cards import parse_card
    from shoe_controller.game.events import ResultConfirmed
    from tests.test_protection import shuffled

    rules = msgspec_replace(Rules(), decks=1)
    events = deal(shuffled(5, decks=1), rules=rules, cut_left=10)
    state, first, seen = initial_state(rules), None, []
    for ev in events:
        state, raised = protect(state, ev)
        code = getattr(ev, "card", None)
        if code and first is None:
            seen.append(code)
        analyses = [e for e in raised if isinstance(e, ShoeAnalysis)]
        if analyses and first is None:
            first = analyses[0]
            assert isinstance(ev, ResultConfirmed)
    assert first is not None
    counts = [1] * 52
    for code in seen:
        counts[parse_card(code).index] -= 1
    assert min(counts) == 0
    expected = odds.analyse(counts)
    assert first.shoe == 1
    for bet in ("tie", "player_pair", "banker"):
        assert first.expected_value[bet] == float(expected.expected_value[bet]), bet


def _one_deck_dealt(n: int, rules):
    from shoe_controller.game.events import CardDealt, ResultConfirmed, ShoeStarted

    state, _ = protect(initial_state(rules), ShoeStarted(shoe=1, decks=1))
    for i, code in enumerate(new_deck_order(1)[:n]):
        state, _ = protect(state, CardDealt(shoe=1, round=1, hand="player",
                                            position=1 + i % 3, card=code))
    return protect(state, ResultConfirmed(shoe=1, round=1))[1]


def test_an_analysis_needs_the_six_cards_a_round_can_take() -> None:
    """A round deals at most six cards: with six left the next round can be analysed,
    with five it cannot be dealt whole, so no analysis."""
    rules = msgspec_replace(Rules(), decks=1)
    assert [e for e in _one_deck_dealt(46, rules) if isinstance(e, ShoeAnalysis)]
    assert not [e for e in _one_deck_dealt(47, rules) if isinstance(e, ShoeAnalysis)]


def test_the_analysis_uses_the_table_s_paytable_and_commission() -> None:
    from shoe_controller.game import odds
    from shoe_controller.game.cards import parse_card

    rules = Rules()
    rules = msgspec_replace(rules, decks=1,
                            paytable=msgspec_replace(rules.paytable, tie=9.0),
                            commission="no_commission")
    analysis = next(e for e in _one_deck_dealt(20, rules) if isinstance(e, ShoeAnalysis))
    counts = [1] * 52
    for code in new_deck_order(1)[:20]:
        counts[parse_card(code).index] -= 1
    want = odds.analyse(counts, rules.paytable, False)
    default = odds.analyse(counts)
    for bet in ("tie", "banker"):
        assert analysis.expected_value[bet] == float(want.expected_value[bet]), bet
        assert want.expected_value[bet] != default.expected_value[bet], bet


def msgspec_replace(struct, **changes):
    import msgspec

    return msgspec.structs.replace(struct, **changes)


def _advantage_alerts(round_: int):
    """One deck with three of every rank dealt (13 cards left, one per rank: no pair can
    be dealt, so the pair bets lose for sure), and an advantage threshold of -1: every bet
    that can win is "above" it."""
    from shoe_controller.game.events import CardDealt, IntegrityAlert, ResultConfirmed, ShoeStarted
    from shoe_controller.game.protection import AnalyticsConfig

    rules = msgspec_replace(Rules(), decks=1)
    state = initial_state(rules, AnalyticsConfig(advantage_threshold=-1.0))
    state, _ = protect(state, ShoeStarted(shoe=3, decks=1))
    codes = [r + s for r in "A23456789TJQK" for s in "SHD"]
    for i, code in enumerate(codes):
        state, _ = protect(state, CardDealt(shoe=3, round=1, hand="player",
                                            position=1 + i % 3, card=code))
    _, raised = protect(state, ResultConfirmed(shoe=3, round=round_))
    analysis = next(e for e in raised if isinstance(e, ShoeAnalysis))
    return analysis, [e for e in raised if isinstance(e, IntegrityAlert)
                      and e.kind == "advantage"]


def test_an_advantage_alert_names_the_bet_its_value_and_the_round_it_is_for() -> None:
    """docs/odds.md: an ``advantage`` alert when a bet offered on the next round has an
    expected value above the threshold (strictly), one per bet, in the analysis' order;
    DESIGN.md: the bonuses close after round 40, the Lucky bets after round 50."""
    analysis, alerts = _advantage_alerts(49)
    ev = analysis.expected_value
    assert ev["player_pair"] == ev["banker_pair"] == -1.0  # no pair left: never above -1
    bets = [a.evidence["bet"] for a in alerts]
    bonuses = ("player_bonus", "banker_bonus")  # DESIGN.md: closed after round 40
    assert bets == [b for b in ev if ev[b] > -1.0 and b not in bonuses]  # round 50's
    assert "lucky_six" in bets and "player_pair" not in bets
    for a in alerts:
        assert (a.shoe, a.round) == (3, 49)
        assert a.evidence == {"test": "expected_value", "bet": a.evidence["bet"],
                              "statistic": ev[a.evidence["bet"]], "threshold": -1.0,
                              "cards_left": 13, "for_round": 50}
    _, alerts = _advantage_alerts(50)
    later = [a.evidence["bet"] for a in alerts]
    assert "lucky_six" not in later and "banker" in later  # round 51: Lucky bets closed


def test_a_shoe_of_exactly_one_window_stores_that_window() -> None:
    from shoe_controller.game.events import CardBurned, ShoeEnded, ShoeStarted

    def stored(n: int) -> int:
        codes = new_deck_order(1)[:n]
        events = [ShoeStarted(shoe=1, decks=1), *(CardBurned(shoe=1, card=c) for c in codes),
                  ShoeEnded(shoe=1, rounds=0, reason="cut_card")]
        state = initial_state(Rules())
        for ev in events:
            state, _ = protect(state, ev)
        return len(state.known)

    # n cards hold n - 7 windows of 8 consecutive cards (none below 8)
    assert [stored(n) for n in (7, 8, 9, 12)] == [0, 1, 2, 5]


def test_a_shoe_replayed_after_a_restart_does_not_match_its_own_stored_windows() -> None:
    from tests.test_protection import alerts, run, shuffled

    cards = shuffled(31)
    first, _ = run(deal(cards), initial_state(Rules(), salt=b"k"))
    # the store already holds shoe 1 (saved before a restart); the journal replays shoe 1
    from shoe_controller.game.shuffle_integrity import FingerprintSet

    known = FingerprintSet.of((fp, 1) for fp in first.fingerprints)
    _, out = run(deal(cards), initial_state(Rules(), known=known, salt=b"k"))
    assert not alerts(out, "shuffle_repeat")
