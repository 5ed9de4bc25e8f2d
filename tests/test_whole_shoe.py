"""Whole shoes played by generated dealers, every round checked against the independent
reference (tests/support/baccarat_ref.py: DESIGN.md's rules and published paytables).

Hypothesis draws a table (burn rule, cut-card and misdeal policies, commission, button or
automatic rounds and confirmation, insurance) and a dealer: a shuffled 8-deck shoe, where
the cut card comes (round 60-70, mid-round or between rounds), and what happens in each
round (pauses, faults, supervisor voids before or during the deal, a misdealt extra card,
an unreadable card entered by hand, voided insurance). The dealer plays the shoe to its
end; the test knows, from the reference alone, each round's cards, result, settlement,
the bets open before it, its insurance offers and their settlement, and where the shoe
ends, and checks every one of them against the machine's events.

The reach is measured, not assumed: each example records its rounds (hypothesis
``event()``; ``pytest --hypothesis-show-statistics``), and ``test_whole_shoe_reach``
prints the distribution and fails if the examples stopped reaching the cut card, round
60, misdeals, voids or insurance.

Examples: ``WHOLE_SHOE_EXAMPLES`` (default 200, about 15 s here); the mutation
campaign runs fewer (docs/testing.md).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import parse_card
from shoe_controller.game.insurance import InsuranceConfig
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe, fold
from tests.support import baccarat_ref as ref

EXAMPLES = int(os.environ.get("WHOLE_SHOE_EXAMPLES", "200"))

#: what the dealer / supervisor does in one round
PLANS = ["normal"] * 10 + ["pause", "fault", "void_mid", "void_first", "misdeal",
                           "unreadable", "void_insurance", "pause_between"]

#: what the examples reached, for test_whole_shoe_reach
REACH: dict[str, list] = {"rounds": [], "cut": [], "features": []}

tables = st.builds(
    Rules,
    decks=st.just(8),
    burn=st.sampled_from(["first_card", "decks", "fixed", "none"]),
    burn_cards=st.integers(1, 8),
    cut_card=st.sampled_from(["last_round", "one_more_round"]),
    extra_card=st.sampled_from(["burn", "void", "carry"]),
    commission=st.sampled_from(["commission", "no_commission"]),
    rounds=st.sampled_from(["auto", "button"]),
    confirm=st.sampled_from(["auto", "button"]),
    insurance=st.sampled_from([InsuranceConfig(), InsuranceConfig(enabled=True)]),
)


def seen(code: str) -> I.CardSeen:
    return I.CardSeen(parse_card(code))


@dataclass
class Expected:
    """What the reference says a round must produce."""

    player: list[str]
    banker: list[str]
    voided: bool = False
    insurance_void: bool = False


@dataclass
class Dealer:
    rules: Rules
    rng: random.Random
    plans: list[str]
    cut_round: int
    cut_mid: bool
    shoe: Shoe = field(init=False)
    events: list = field(default_factory=list)
    cards: list[str] = field(default_factory=list)
    carried: list[str] = field(default_factory=list)
    rounds: dict[int, Expected] = field(default_factory=dict)
    misdeals: list[tuple[str, str]] = field(default_factory=list)
    features: Counter = field(default_factory=Counter)
    last: int | None = None

    def __post_init__(self) -> None:
        self.shoe = Shoe(self.rules)
        self.cards = [r + s for r in "A23456789TJQK" for s in "SHDC"] * 8
        self.rng.shuffle(self.cards)

    def put(self, inp: I.Input) -> list:
        evs = self.shoe.apply(inp)
        self.events.extend(evs)
        return evs

    # ------------------------------------------------------------------ the shoe
    def burn(self) -> None:
        r = self.rules
        evs = self.put(I.NewShoe())
        if r.burn == "first_card":
            ind = self.cards.pop(0)
            n = ref.burn_after_indicator(ind)
            evs = self.put(seen(ind))
            assert [(e.type, e.burn_count) for e in evs] == [("burn_indicator", n)]
        else:
            n = {"decks": 8, "fixed": r.burn_cards, "none": 0}[r.burn]
        for _ in range(n):
            evs = self.put(seen(self.cards.pop(0)))
        assert evs[-1].type == "bets_open" and evs[-1].round == 1

    def play(self) -> int:
        self.burn()
        n = 0
        while self.last is None or n < self.last:
            n += 1
            self.play_round(n, self.plans[(n - 1) % len(self.plans)])
        return n

    # ------------------------------------------------------------------ one round
    def play_round(self, n: int, plan: str) -> None:
        r = self.rules
        button_rounds, button_confirm = r.rounds == "button", r.confirm == "button"
        carried, self.carried = self.carried, []
        # the round's cards: any carried card first, then the shoe's
        player, banker = ref.deal_round(carried + self.cards)
        order = [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]
        fresh = order[len(carried):]
        del self.cards[:len(fresh)]
        exp = Expected(player, banker)
        self.rounds[n] = exp
        cut_here = n == self.cut_round
        if cut_here and not self.cut_mid:
            self.cut(n, mid=False)
        if plan == "pause_between":
            self.put(I.Pause("between"))
            self.put(I.Resume())
            self.features["pause"] += 1
        if button_rounds:
            evs = self.put(I.NewRound())
            assert evs[-1].type in ("round_started", "card_dealt"), evs
        mid_cut = cut_here and self.cut_mid
        if plan == "void_first" and button_rounds and not mid_cut:
            self.void(exp)
            self.close(n, exp)
            return
        # where the cut card comes (mid-round) and where an interruption happens (a void
        # there must not come before the cut card, or the shoe would never be cut)
        # (with automatic rounds a carried card is dealt only when the next card opens
        # the round: nothing can happen inside the round before that card)
        first = 1 if button_rounds else len(carried) + 1
        cut_at = self.rng.randint(first, len(order) - 1) if mid_cut else None
        stop = self.rng.randint(cut_at or first, len(order) - 1)
        for i, code in enumerate(order):
            if i < len(carried):
                continue  # dealt by the machine when the round opened
            if i == cut_at:
                self.cut(n, mid=True)
            if i == stop:
                if plan == "pause":
                    self.put(I.Pause("supervisor"))
                    self.put(I.Resume())
                    self.features["pause"] += 1
                elif plan == "fault":
                    evs = self.put(I.Fault("camera_lost", "test"))
                    assert [e.type for e in evs] == ["fault", "round_paused"]
                    self.put(I.Resume())
                    self.features["fault"] += 1
                elif plan in ("void_mid", "void_first"):
                    self.void(exp)
                    self.close(n, exp)
                    return
                elif plan == "void_insurance" and r.insurance.enabled and i >= 4:
                    evs = self.put(I.VoidInsurance("exposed"))
                    assert evs[-1].type == "insurance_voided"
                    exp.insurance_void = True
                    self.features["void_insurance"] += 1
            if plan == "unreadable" and i == stop:
                evs = self.put(I.UnreadableCard("blur"))
                assert [e.type for e in evs][-2:] == ["fault", "round_paused"]
                evs = self.put(I.ManualCard(parse_card(code)))
                assert evs[0].type == "round_resumed"
                self.features["unreadable"] += 1
            else:
                self.put(seen(code))
        if plan == "misdeal" and n != self.last and n != self.cut_round and (
                button_rounds or button_confirm):
            self.misdeal(exp)
        if button_confirm and not exp.voided:
            self.put(I.ConfirmResult())
        self.close(n, exp)

    def cut(self, n: int, mid: bool) -> None:
        evs = self.put(I.CutCardSeen())
        assert [e.type for e in evs] == ["cut_card", "last_round"]
        one_more = self.rules.cut_card == "one_more_round"
        self.last = n + (1 if mid and one_more else 0)
        assert evs[1].round == self.last
        self.features[f"cut_{'mid' if mid else 'between'}_{self.rules.cut_card}"] += 1

    def void(self, exp: Expected) -> None:
        evs = self.put(I.Void("supervisor"))
        assert "round_voided" in [e.type for e in evs]
        exp.voided = True
        self.features["void"] += 1

    def misdeal(self, exp: Expected) -> None:
        """An extra card once the round is complete (awaiting the confirm button) or
        closed (rounds by button): the policy decides."""
        code = self.cards.pop(0)
        evs = self.put(seen(code))
        policy = self.rules.extra_card
        round_open = self.rules.confirm == "button"
        kind = "extra_card" if round_open else "no_round_open"
        applied = "burn" if policy == "void" and not round_open else policy
        m = [e for e in evs if e.type == "misdeal"]
        assert [(e.kind, e.card, e.policy) for e in m] == [(kind, code, applied)]
        self.misdeals.append((kind, applied))
        if applied == "void":
            exp.voided = True
        if applied == "carry":
            self.carried.append(code)
        self.features["misdeal"] += 1

    def close(self, n: int, exp: Expected) -> None:
        """After round n closed: the shoe ends there, or bets open for round n + 1."""
        last_event = next(e for e in reversed(self.events)
                          if e.type in ("bets_open", "shoe_ended"))
        if n == self.last:
            assert (last_event.type, last_event.rounds, last_event.reason) == (
                "shoe_ended", n, "cut_card")
        else:
            assert last_event.type == "bets_open" and last_event.round == n + 1, last_event
            assert set(last_event.bets) == ref.offered(n + 1)


def check_events(d: Dealer) -> None:
    """Every round's result, settlement and insurance; bets open; the shoe's end."""
    results = {e.round: e for e in d.events if e.type == "round_result"}
    voided = {e.round for e in d.events if e.type == "round_voided"}
    confirmed = [e.round for e in d.events if e.type == "result_confirmed"]
    assert voided == {n for n, x in d.rounds.items() if x.voided}
    # a round settles once, or is voided and never settles (with a confirm button its
    # result may have been shown before a misdeal voided it)
    assert sorted(confirmed) == sorted(set(confirmed))
    assert set(confirmed) == {n for n, x in d.rounds.items() if not x.voided}
    assert set(confirmed) <= set(results)
    commission = d.rules.commission == "commission"
    offers_by_round: dict[int, list] = {}
    for e in d.events:
        if e.type == "insurance_offer":
            offers_by_round.setdefault(e.round, []).append(e)
    for n, exp in d.rounds.items():
        if exp.voided:
            continue
        res = results[n]
        p, b = exp.player, exp.banker
        assert (list(res.player), list(res.banker)) == (p, b), n
        assert (res.player_total, res.banker_total) == (ref.total(p), ref.total(b))
        w = ref.winner(p, b)
        assert res.winner == w
        want = ref.settle(p, b, commission)
        assert res.settlement == {k: want[k] for k in ref.ALL_BETS if k in ref.offered(n)}, n
        offers = [(o.stage, o.side, o.insures, o.odds) for o in offers_by_round.get(n, [])]
        if d.rules.insurance.enabled:
            assert offers == ref.auto_reveal_offers(p, b), n
            got = [(s.stage, s.side, s.insures, s.odds, s.net) for s in res.insurance]
            assert got == [(*o, ref.insurance_result(o[2], o[3], w, exp.insurance_void))
                           for o in offers], n
            if offers:
                d.features["insurance_round"] += 1
                if n > 1:
                    d.features["insurance_after_first"] += 1
        else:
            assert offers == [] and res.insurance == ()
    bets = [(e.round, set(e.bets)) for e in d.events if e.type == "bets_open"]
    assert bets == [(k, ref.offered(k)) for k in range(1, d.last + 1)]
    ended = [e for e in d.events if e.type == "shoe_ended"]
    assert len(ended) == 1 and ended[0].rounds == d.last
    assert fold(d.rules, d.events) == d.shoe.state


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rules=tables, seed=st.integers(0, 2**32 - 1),
       plans=st.lists(st.sampled_from(PLANS), min_size=80, max_size=80),
       cut_round=st.integers(60, 70), cut_mid=st.booleans())
def test_whole_shoes_against_the_reference(rules, seed, plans, cut_round, cut_mid):
    d = Dealer(rules, random.Random(seed), plans, cut_round, cut_mid)
    rounds = d.play()
    check_events(d)
    assert rounds >= 60
    event(f"rounds {rounds // 5 * 5}-{rounds // 5 * 5 + 4}")
    for name in sorted(d.features):
        event(f"reached {name}")
    REACH["rounds"].append(rounds)
    REACH["features"].append(d.features)


def test_whole_shoe_reach(capsys):
    """How far the examples reached (runs after the property test in this file)."""
    rounds = REACH["rounds"]
    if not rounds:  # the property test was deselected
        import pytest

        pytest.skip("test_whole_shoes_against_the_reference did not run")
    feats: Counter = Counter()
    for f in REACH["features"]:
        feats.update({k: 1 for k in f})
    rounds_sorted = sorted(rounds)
    median = rounds_sorted[len(rounds) // 2]
    dist = Counter(r // 5 * 5 for r in rounds)
    with capsys.disabled():
        print(f"\nwhole shoes: {len(rounds)} examples; rounds per example min {min(rounds)}, "
              f"median {median}, max {max(rounds)}; by 5s: "
              + ", ".join(f"{k}-{k + 4}: {dist[k]}" for k in sorted(dist)))
        print("examples reaching: " + ", ".join(f"{k} {v}" for k, v in sorted(feats.items())))
    assert min(rounds) >= 60
    if len(rounds) >= 20:  # the default run: every feature reached by some example
        for need in ("void", "misdeal", "pause", "fault", "unreadable", "insurance_after_first",
                     "void_insurance"):
            assert feats[need] > 0, need
        assert any(k.startswith("cut_mid") for k in feats)
        assert any(k.startswith("cut_between") for k in feats)
