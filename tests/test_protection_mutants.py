"""The protection projection's alerts, state and evidence against a second, deliberately
simple projection written here (issue 15: 129 mutants of protection.py survived the
2026-12-01 campaign; every one changed an alert, its evidence, or what the next shoe is
compared with, and no test compared them).

The reference recomputes every statistic from the whole shoe at every look (a round's
result confirmed or voided, the shoe's end) with its own card bookkeeping, its own runs,
neighbour relations and window fingerprints (a keyed BLAKE2b of the eight codes joined by
spaces, docs/odds.md), and its own memory of what each shoe leaves for the next. Only the
statistics with a formula of their own are taken from their modules, which have their own
reference tests: the adjacency test's exact mean and variance
(``shuffle_integrity.adjacency_test``), the chi-square tests (``edge_sorting``) and the
riffle martingale (``shuffle_tracking.ShuffleTest``).
The projection is incremental (windows from where the last look stopped, alerts
remembered per shoe, state carried from shoe to shoe): the two must agree on
every alert, in order, with every figure of its evidence.

Boundaries: docs/odds.md says each test alerts when its statistic *reaches* the threshold
(z >= adjacency_z, runs of ``order_run_threshold`` cards, p <= alpha, ...), so a second pass
sets every threshold to the largest figure the shoes reach: each test must then alert at
the look where that figure is first reached, and a test that alerts only above it would not.
"""

from __future__ import annotations

import hashlib
import math
import random
from itertools import pairwise
from typing import Any

import msgspec
import pytest

from shoe_controller.game import edge_sorting as es
from shoe_controller.game import shuffle_integrity as si
from shoe_controller.game.cards import parse_card
from shoe_controller.game.events import (
    CardBurned,
    CardDealt,
    IntegrityAlert,
    LastRound,
    Misdeal,
    ResultConfirmed,
    RoundVoided,
    ShoeAnalysis,
    ShoeEnded,
    ShoeStarted,
)
from shoe_controller.game.protection import AnalyticsConfig, initial_state, protect
from shoe_controller.game.rules import Rules
from shoe_controller.game.shuffle_tracking import ShuffleTest

RANKS = "A23456789TJQK"
SUITS = "SHDC"
ONE_DECK = [r + s for s in SUITS for r in RANKS]  # new-deck order: AS 2S ... KC


def rank(code: str) -> int:
    return RANKS.index(code[0]) + 1


def in_deck_order(a: str, b: str) -> bool:
    """docs/odds.md: same rank, or same suit and rank +-1."""
    return a[0] == b[0] or (a[1] == b[1] and abs(rank(a) - rank(b)) == 1)


def longest(seq: list[str | None], related) -> int:
    best = 0
    for i in range(len(seq)):  # every start, every length: slow and plain
        n = 0
        while i + n < len(seq) and seq[i + n] is not None and (
                n == 0 or related(seq[i + n - 1], seq[i + n])):
            n += 1
        best = max(best, n)
    return best


def neighbours(seq: list[str | None]) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for a, b in pairwise(seq):
        if a is not None and b is not None:
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


DECK_ORDER = {a: frozenset(b for b in ONE_DECK if in_deck_order(a, b)) for a in ONE_DECK}


def windows(seq: list[str | None], salt: bytes) -> list[int]:
    out = []
    for i in range(len(seq) - 7):
        w = seq[i : i + 8]
        if None not in w:
            h = hashlib.blake2b(" ".join(w).encode(), key=salt, digest_size=8)  # type: ignore
            out.append(int.from_bytes(h.digest(), "big"))
    return out


class Reference:
    """The simple projection: alerts (as plain tuples) and what each shoe leaves behind."""

    def __init__(self, config: AnalyticsConfig, salt: bytes = b"") -> None:
        self.cfg, self.salt = config, salt
        self.shoe = 0
        self.decks = 8
        self.seq: list[str | None] = []
        self.oriented: list[tuple[int, str]] = []
        self.carried: list[str] = []
        self.previous: list[str | None] = []
        self.previous_places: list[tuple[int, str] | None] = []
        self.previous_note = "not known: no earlier shoe in this journal"
        self.previous_known = False
        self.ended_at_cut = False
        self.stored_seq: list[str | None] | None = None  # what shoe_ended stored
        self.known: list[tuple[int, int]] = []  # (fingerprint, shoe) of earlier shoes
        self.raised: set[str] = set()
        self.stats: dict[str, list[float]] = {}  # every figure seen at a look, by test
        self.weak: dict[str, ShuffleTest] = {}
        self.weak_fed = 0

    # --- the cards
    def event(self, ev: Any) -> list[tuple]:
        kind = type(ev).__name__
        if kind == "ShoeStarted":
            self._new_shoe(ev.decks, ev.shoe)
        elif kind in ("CardBurned", "BurnIndicator"):
            self.seq.append(ev.card)
            self.places.append(None)
        elif kind == "CardDealt":
            if self.carried and self.carried[0] == ev.card:
                self.carried.pop(0)  # it left the shoe when it was misdealt
            else:
                self.seq.append(ev.card)
                self.places.append((ev.round, ev.hand))  # where the tray has it
                if ev.orientation in ("up", "down"):
                    self.oriented.append((rank(ev.card), ev.orientation))
        elif kind == "Misdeal":
            self.seq.append(ev.card)
            self.places.append(None)
            if ev.policy == "carry" and ev.card is not None:
                self.carried.append(ev.card)
        elif kind in ("ResultConfirmed", "RoundVoided"):
            return self._look(ev.round)
        elif kind == "ShoeEnded":
            out = self._look(ev.rounds or None)
            self.ended_at_cut = ev.reason == "cut_card"
            self._store()
            return out
        return []

    def _store(self) -> None:
        if self.shoe and self.stored_seq is None:
            self.stored_seq = list(self.seq)
            self.known += [(fp, self.shoe) for fp in windows(self.seq, self.salt)]
            keep = self.cfg.fingerprint_history_shoes
            self.known = [(fp, s) for fp, s in self.known if s > self.shoe - keep]

    def _new_shoe(self, decks: int, shoe: int) -> None:
        self._store()
        if self.shoe:
            self.previous = list(self.seq)
            self.previous_places = list(self.places)
            self.previous_known = self.ended_at_cut
            self.previous_note = (
                f"shoe {self.shoe}, dealt in full through this shoe" if self.ended_at_cut
                else f"not known in full: shoe {self.shoe} did not end at the cut card")
        self.shoe, self.decks = shoe, decks
        self.seq, self.oriented, self.carried = [], [], []
        self.places: list[tuple[int, str] | None] = []
        self.raised, self.ended_at_cut, self.stored_seq = set(), False, None
        # the previous shoe's order if it was dealt in full, then new-deck order (the
        # trackers only: docs/game.md, the thread filter runs against the previous shoe
        # only); each fed the cards as they leave the shoe
        self.weak: dict[str, ShuffleTest] = {}
        if self.previous_known:
            self.weak["previous_shoe"] = ShuffleTest.start(self.previous, decks,
                                                           places=self.previous_places)
        self.weak["new_deck_order"] = ShuffleTest.start(ONE_DECK * decks, decks,
                                                        threads=False)
        self.weak_fed = 0

    # --- a look: every test on the whole shoe so far
    def _look(self, round_: int | None) -> list[tuple]:
        cfg, seq, out = self.cfg, self.seq, []

        def alert(test: str, kind: str, value: float, **evidence: Any) -> None:
            self.stats.setdefault(test, []).append(value)
            if test not in self.raised:
                self.raised.add(test)
                out.append((self.shoe, round_, kind, {"test": test, **evidence}))

        run = longest(seq, in_deck_order)
        self.stats.setdefault("order_run", []).append(run)
        if run >= cfg.order_run_threshold:
            alert("order_run", "shuffle_runs", run, statistic=run,
                  threshold=cfg.order_run_threshold)
        run = longest(seq, lambda a, b: a[1] == b[1])
        self.stats.setdefault("suit_run", []).append(run)
        if run >= cfg.suit_run_threshold:
            alert("suit_run", "shuffle_runs", run, statistic=run,
                  threshold=cfg.suit_run_threshold)

        known_cards = [c for c in seq if c is not None]
        if len(known_cards) >= cfg.adjacency_min_cards:
            refs = [("deck_order", DECK_ORDER)]
            if len([c for c in self.previous if c is not None]) >= cfg.adjacency_min_cards:
                refs.append(("previous_shoe", neighbours(self.previous)))
            for name, rel in refs:
                count = sum(1 for a, b in pairwise(known_cards) if b in rel.get(a, ()))
                t = si.adjacency_test(seq, rel)
                assert t.count == count and t.pairs == len(known_cards) - 1
                z = (count - t.mean) / t.sd
                self.stats.setdefault(f"adjacency_{name}", []).append(z)
                if z >= cfg.adjacency_z:
                    alert(f"adjacency_{name}", "shuffle_order", z, reference=name,
                          statistic=round(z, 3), threshold=cfg.adjacency_z, count=count,
                          expected=round(t.mean, 3), sd=round(t.sd, 3),
                          pairs=len(known_cards) - 1)

        # shuffle_weak: the previous shoe's order (if dealt in full), then new-deck order
        fed, self.weak_fed = self.weak_fed, len(seq)
        for name, test in list(self.weak.items()):
            test = self.weak[name] = test.feed(seq[fed:])
            t = cfg.shuffle_weak_threshold
            self.stats.setdefault(f"shuffle_weak_{name}", []).append(test.peak)
            if test.peak >= t:
                alert(f"shuffle_weak_{name}", "shuffle_weak", test.peak, reference=name,
                      statistic=round(test.peak, 2), threshold=t,
                      false_alarm_bound=float(f"{math.exp(-t):.2g}"),
                      cards_seen=len(known_cards), unread=len(seq) - len(known_cards),
                      previous_shoe_known=self.previous_known,
                      previous_shoe=self.previous_note, **test.evidence())

        mine = windows(seq, self.salt)
        matches = [fp for fp in mine if any(s != self.shoe for f, s in self.known if f == fp)]
        self.stats.setdefault("repeat", []).append(len(matches))
        if len(matches) >= cfg.repeat_min_windows:
            alert("repeat", "shuffle_repeat", len(matches), statistic=len(matches),
                  threshold=cfg.repeat_min_windows, windows=len(mine),
                  earlier_shoes=sorted({s for f, s in self.known
                                        if f in matches and s != self.shoe}))

        if self.oriented:
            t = es.edge_sorting_test(self.oriented, cfg.edge_sorting_min_expected)
            tried = [(n, c, p) for n, c, p in (("key", t.key_chi2, t.key_p),
                                                ("ranks", t.ranks_chi2, t.ranks_p))
                     if p is not None]
            self.stats.setdefault("edge_sorting", []).extend(-p for *_, p in tried)
            for name, chi2, p in tried:
                if p <= cfg.edge_sorting_alpha:
                    alert("edge_sorting", "edge_sorting", -p, rank_test=name,
                          statistic=round(chi2, 3), p_value=p,
                          threshold=cfg.edge_sorting_alpha, cards=len(self.oriented))
                    break
        return out


# ------------------------------------------------------------------ the shoes played


def play(cards: list[str | None], shoe: int, decks: int = 1, per_round: int = 4,
         end: str | None = "cut_card", orient=None, first_round: int = 1) -> list[Any]:
    """Events of a shoe: a burn card, then rounds of ``per_round`` cards each confirmed
    (every fifth round voided instead), then its end (``end`` None: no shoe_ended)."""
    events: list[Any] = [ShoeStarted(shoe=shoe, decks=decks), CardBurned(shoe=shoe,
                                                                          card=cards[0])]
    rnd = first_round
    rest = cards[1:]
    for i in range(0, len(rest), per_round):
        for j, code in enumerate(rest[i : i + per_round]):
            if code is None:
                events.append(CardBurned(shoe=shoe, card=None))
            else:
                events.append(CardDealt(shoe=shoe, round=rnd, hand="player",
                                        position=1 + j % 3, card=code,
                                        orientation=orient(code) if orient else None))
        events.append(RoundVoided(shoe=shoe, round=rnd, reason="misdeal") if rnd % 5 == 0
                      else ResultConfirmed(shoe=shoe, round=rnd))
        rnd += 1
    if end is not None:
        events.append(ShoeEnded(shoe=shoe, rounds=rnd - 1, reason=end))
    return events


def shuffled(seed: int) -> list[str]:
    cards = list(ONE_DECK)
    random.Random(seed).shuffle(cards)
    return cards


def with_unread(cards: list[str], every: int) -> list[str | None]:
    return [None if i % every == every - 1 else c for i, c in enumerate(cards)]


def sorted_edges(code: str) -> str:
    return "down" if rank(code) in (6, 7, 8, 9) else "up"


def ranks_but_not_key_sorted(code: str) -> str:
    """Half of the key ranks (6, 7) and half of the others (A-4, and 5 of two suits) down:
    the key-rank table is even, the 13-rank one is not."""
    return "down" if rank(code) in (1, 2, 3, 4, 6, 7) or code in ("5S", "5H") else "up"


def journal() -> list[Any]:
    """Ten shoes that raise every kind of alert:
    1 new-deck order with unread cards and sorted edges (runs, order, weak, edges);
    2 a fresh shuffle, random orientation, dealt to the cut card;
    3 shoe 2's first half sorted into new-deck order, then its second half as dealt there
      (the deck-order alert comes rounds before the previous shoe's and the repeat), not
      ended;
    4 a fresh shuffle after a shoe not dealt in full; a card misdealt and carried in its
      last round, and a card read after its end;
    5 shoe 4's order again, the carried card dealt first (a repeat of shoe 4 only);
    6 two decks, 26 spades first (a suit run), ended early;
    7 a fresh shuffle (nothing to compare with);
    8 two decks whose orientation depends on the rank but not on the key ranks 6-9;
    9, 10 new-deck order twice (both weak-shuffle references alert at one look)."""
    rng = random.Random(5)
    shoe1 = play(with_unread(ONE_DECK, 13), 1, orient=sorted_edges)
    second = shuffled(20)
    shoe2 = play(second, 2, orient=lambda c: rng.choice(("up", "down")))
    third = sorted(second[:26], key=ONE_DECK.index) + second[26:]
    shoe3 = play(third, 3, end=None, per_round=5)
    fourth = shuffled(40)
    shoe4 = play(fourth[:-1], 4, per_round=3)
    last = shoe4[-2]
    shoe4.insert(len(shoe4) - 2, Misdeal(shoe=4, round=last.round, kind="extra_card",
                                         card="QH", policy="carry"))
    shoe4.append(Misdeal(shoe=4, round=None, kind="after_shoe_end", card=fourth[-1],
                         policy="burn"))
    shoe5 = play([fourth[0], "QH", *[c for c in fourth[1:] if c != "QH"]], 5, per_round=6)
    spades = [c for c in ONE_DECK if c[1] == "S"] * 2
    random.Random(60).shuffle(spades)
    shoe6 = play(spades + shuffled(60)[:4], 6, decks=2, end="new_shoe")
    shoe7 = play(shuffled(70), 7, per_round=5)
    shoe8 = play(shuffled(80) + shuffled(81), 8, decks=2, per_round=6,
                 orient=ranks_but_not_key_sorted)
    shoe9 = play(ONE_DECK, 9, per_round=5)
    shoe10 = play(ONE_DECK, 10, per_round=5)
    return shoe1 + shoe2 + shoe3 + shoe4 + shoe5 + shoe6 + shoe7 + shoe8 + shoe9 + shoe10


def projected(events: list[Any], config: AnalyticsConfig, salt: bytes = b""):
    state = initial_state(Rules(), config, salt=salt) if salt else initial_state(
        Rules(), config)
    out = []
    for ev in events:
        state, raised = protect(state, ev)
        out += [(a.shoe, a.round, a.kind, a.evidence) for a in raised
                if isinstance(a, IntegrityAlert)]
    return state, out


def referenced(events: list[Any], config: AnalyticsConfig, salt: bytes = b""):
    ref = Reference(config, salt)
    out = []
    for ev in events:
        out += ref.event(ev)
    return ref, out


QUIET = dict(shoe_analysis=False)


def test_every_alert_and_its_evidence_match_the_simple_projection() -> None:
    events = journal()
    config = AnalyticsConfig(**QUIET)
    _ref, want = referenced(events, config)
    _, got = projected(events, config)
    kinds = {k for _, _, k, _ in want}
    assert kinds == {"shuffle_runs", "shuffle_order", "shuffle_weak", "shuffle_repeat",
                     "edge_sorting"}, kinds
    tests = {e["test"] for *_, e in want}
    assert {"adjacency_previous_shoe", "shuffle_weak_previous_shoe", "order_run",
            "suit_run", "repeat"} <= tests
    assert got == want


def boundary_config(**fixed: Any) -> AnalyticsConfig:
    """Every threshold set to the largest figure its test reaches over the journal."""
    ref, _ = referenced(journal(), AnalyticsConfig(**QUIET, **fixed))
    top = {k: max(v) for k, v in ref.stats.items()}
    cfg = dict(
        order_run_threshold=int(top["order_run"]), suit_run_threshold=int(top["suit_run"]),
        adjacency_z=max(top["adjacency_deck_order"], top["adjacency_previous_shoe"]),
        repeat_min_windows=int(top["repeat"]),
        shuffle_weak_threshold=max(top["shuffle_weak_previous_shoe"],
                                   top["shuffle_weak_new_deck_order"]),
        edge_sorting_alpha=-top["edge_sorting"],
    )
    cfg.update(fixed)
    return AnalyticsConfig(**QUIET, **cfg)


def test_each_test_alerts_where_its_figure_reaches_the_threshold() -> None:
    events = journal()
    config = boundary_config()
    _, want = referenced(events, config)
    _, got = projected(events, config)
    tests = [e["test"] for *_, e in want]
    for test in ("order_run", "suit_run", "repeat", "edge_sorting"):
        assert test in tests, test
    assert {"adjacency_deck_order", "adjacency_previous_shoe"} & set(tests)
    assert {"shuffle_weak_new_deck_order", "shuffle_weak_previous_shoe"} & set(tests)
    for *_, e in want:
        if e["test"] != "edge_sorting":
            assert e["statistic"] == round(e["threshold"], 3 if "adjacency" in e["test"]
                                           else 2), e
    assert got == want


@pytest.mark.parametrize("cfg", [
    {"adjacency_min_cards": 24, "adjacency_z": 2.0},  # evaluated from exactly 24 cards
    {"adjacency_min_cards": 16, "adjacency_z": 1.0},  # previous shoes of 15 and 16 cards
    {"fingerprint_history_shoes": 1, "repeat_min_windows": 1},  # only the last shoe kept
    {"fingerprint_history_shoes": 3, "repeat_min_windows": 1},
    {"shuffle_weak_threshold": 3.0, "order_run_threshold": 3, "suit_run_threshold": 3},
    # chi-square tables need more (no test on one deck) or fewer cards a cell
    {"edge_sorting_min_expected": 6.0}, {"edge_sorting_min_expected": 1.0,
                                         "edge_sorting_alpha": 0.01},
])
def test_the_configured_thresholds_and_history_are_the_ones_used(cfg) -> None:
    extra = [*play(ONE_DECK[:16], 8, end="new_shoe"), *play(ONE_DECK[:16], 9, end=None),
             *play(ONE_DECK[:15], 10, end="new_shoe"), *play(ONE_DECK[:20], 11)]
    events = journal() + extra
    config = AnalyticsConfig(**QUIET, **cfg)
    _, want = referenced(events, config)
    _, got = projected(events, config)
    assert want and got == want


def test_what_each_shoe_leaves_for_the_next_is_what_it_dealt() -> None:
    """The cards of every shoe, and the fingerprints the next shoe is compared with: those
    the daemon stores at shoe_ended (docs/odds.md), or at the next shoe_started for a shoe
    that never ended; a card read after the end is not part of its shoe's windows."""
    events = journal()
    config = AnalyticsConfig(**QUIET)
    ref, state = Reference(config), initial_state(Rules(), config)
    for ev in events:
        ref.event(ev)
        state, _ = protect(state, ev)
        assert list(state.sequence) == ref.seq
        if isinstance(ev, ShoeStarted):
            assert state.previous_known is ref.previous_known, ev
            assert state.previous_note == ref.previous_note, ev
            assert list(state.previous) == ref.previous
        if isinstance(ev, (ShoeStarted, ShoeEnded)):
            got = sorted(zip(state.known.fps.tolist(), state.known.shoes.tolist(),
                             strict=True))
            assert got == sorted(set(ref.known)), ev
            if isinstance(ev, ShoeEnded):
                assert list(state.fingerprints) == windows(ref.seq, b"")
    assert state.carried == ()


def test_the_default_salt_is_empty_and_a_given_salt_keys_the_windows() -> None:
    events = journal()
    cut = max(i for i, e in enumerate(events[:80]) if isinstance(e, ResultConfirmed))
    events = events[: cut + 1]  # shoe 1 and part of shoe 2, up to a look
    config = AnalyticsConfig(**QUIET)
    for salt in (b"", b"table-7"):
        state, _ = projected(events, config, salt)
        ref, _ = referenced(events, config, salt)
        assert list(state.fingerprints) == windows(ref.seq, salt)
    state = initial_state()
    assert state.salt == b""


def test_two_carried_misdeals_are_each_counted_once() -> None:
    state = initial_state(Rules())
    state, _ = protect(state, ShoeStarted(shoe=1, decks=8))
    for code in ("AS", "KD"):
        state, _ = protect(state, Misdeal(shoe=1, round=1, kind="extra_card", card=code,
                                          policy="carry"))
    for pos, code in enumerate(("AS", "KD", "7C", "KD"), start=1):
        state, _ = protect(state, CardDealt(shoe=1, round=2, hand="player", position=pos,
                                            card=code))
    # the physical cards in the order they left the shoe: two carried, two new
    assert state.sequence == ("AS", "KD", "7C", "KD")
    assert state.carried == ()


def test_initial_state_takes_the_decks_from_the_rules() -> None:
    """initial_state's docstring: 8 decks without rules; else the table's."""
    assert initial_state().decks == 8
    assert initial_state(Rules(decks=6)).decks == 6
    assert initial_state(msgspec.structs.replace(Rules(), decks=1)).decks == 1


def test_events_that_are_not_tagged_domain_events_are_ignored() -> None:
    class Untagged(msgspec.Struct):
        shoe: int

    class Plain:
        shoe = 1

    state = initial_state(Rules())
    for ev in (Untagged(shoe=1), Plain(), "shoe_started"):
        assert protect(state, ev) == (state, ())


def test_an_unknown_advantage_bet_is_named_with_the_known_ones() -> None:
    from shoe_controller.game.rules import BET_NAMES

    with pytest.raises(ValueError) as err:
        AnalyticsConfig(advantage_bets=("tie", "dragon", "phoenix"))
    assert str(err.value) == ("advantage_bets: unknown bet dragon, phoenix (bets: "
                              + ", ".join(BET_NAMES) + ")")
    assert ", banker," in str(err.value) or str(err.value).count(", ") > 3


def test_the_analysis_of_a_new_shoe_uses_its_decks_and_forgets_the_last_one() -> None:
    """Each shoe starts afresh: its decks (a one-deck shoe after the rules' eight), an
    analysis after every round however the previous shoe ended (a last round 2 there),
    and an advantage alert again in the new shoe for a bet above the threshold."""
    from shoe_controller.game import odds

    config = AnalyticsConfig(advantage_threshold=-1.0, advantage_bets=("tie",))
    state = initial_state(Rules(), config)  # eight decks by the rules
    cards = shuffled(3)

    def dealt(shoe: int, rnd: int, codes: list[str]) -> list[Any]:
        return [CardDealt(shoe=shoe, round=rnd, hand="player", position=1 + i % 3, card=c)
                for i, c in enumerate(codes)]

    events = [ShoeStarted(shoe=1, decks=1), CardBurned(shoe=1, card=cards[0]),
              *dealt(1, 1, cards[1:5]), ResultConfirmed(shoe=1, round=1),
              *dealt(1, 2, cards[5:9]), LastRound(shoe=1, round=2),
              ResultConfirmed(shoe=1, round=2), ShoeEnded(shoe=1, rounds=2, reason="new_shoe"),
              *play(cards, 2, decks=1)]
    analyses, advantage = [], []
    for ev in events:
        state, raised = protect(state, ev)
        analyses += [(a.shoe, a.round, a) for a in raised if isinstance(a, ShoeAnalysis)]
        advantage += [(a.shoe, a.round) for a in raised
                      if isinstance(a, IntegrityAlert) and a.kind == "advantage"]
    assert [(s, r) for s, r, _ in analyses][:4] == [(1, 1), (2, 1), (2, 2), (2, 3)]
    assert advantage == [(1, 1), (2, 1)]
    a = analyses[2][2]
    counts = [1] * 52
    for code in cards[:9]:  # the burn card and two rounds of four
        counts[parse_card(code).index] -= 1
    want = odds.analyse(counts)
    assert a.expected_value["tie"] == float(want.expected_value["tie"])
