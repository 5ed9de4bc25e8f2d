"""Game protection: the pure projection run after every domain event.

``protect(state, event) -> (state, events)`` follows the cards leaving the shoe and,
after each round (when its result is confirmed, or it is voided), emits:

- ``shoe_analysis``: the exact probability and expected value of every bet for the next
  round, given the cards left (``game.odds``);
- ``integrity_alert`` events, each with ``evidence`` (the test, its statistic and
  threshold) and the round where it was raised:

  ``advantage``       a bet's expected value for the player rose above
                      ``advantage_threshold`` (raised again only after it fell back);
  ``shuffle_runs``    order / suit runs far beyond chance (``game.shuffle_integrity``);
  ``shuffle_order``   too many neighbours of deck order or of the previous shoe;
  ``shuffle_repeat``  8-card windows already seen in an earlier shoe;
  ``shuffle_weak``    the new shoe still follows the threads a few riffles leave of the
                      previous shoe's dealt order (when that shoe was dealt in full
                      through this shoe) or of new-deck order
                      (``game.shuffle_tracking``);
  ``edge_sorting``    orientation depends on rank (``game.edge_sorting``).

  Each shuffle and edge-sorting test alerts at most once per shoe (``shuffle_weak``: once
  per reference order).

The daemon and ``replay`` fold it over the journal; it never alerts twice for what it
already alerted while folding (the alerts it would emit are part of its state). The
fingerprints of earlier shoes come from the daemon's database
(:mod:`shoe_controller.fingerprints`) through :func:`initial_state`; at the end of each
shoe ``state.fingerprints`` holds the finished shoe's, for the daemon to store.

This module is import-light (msgspec only at import time) because the config loader
imports :class:`AnalyticsConfig` from it.

>>> from shoe_controller.game.events import ShoeStarted, CardDealt, ResultConfirmed
>>> s, _ = protect(initial_state(), ShoeStarted(shoe=1, decks=8))
>>> for hand, pos, code in [("player", 1, "9S"), ("banker", 1, "KD"),
...                         ("player", 2, "8H"), ("banker", 2, "2C")]:
...     s, _ = protect(s, CardDealt(shoe=1, round=1, hand=hand, position=pos, card=code))
>>> s, out = protect(s, ResultConfirmed(shoe=1, round=1))
>>> [type(e).__name__ for e in out], out[0].round
(['ShoeAnalysis'], 1)
>>> round(out[0].expected_value["banker"], 5) < 0
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

import msgspec

__all__ = [
    "AnalyticsConfig",
    "ProtectionState",
    "fold",
    "initial_state",
    "interleave",
    "protect",
]

Probability = Annotated[float, msgspec.Meta(gt=0, lt=1)]


class AnalyticsConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The ``[analytics]`` section: live odds and game-protection tests."""

    #: Emit a ``shoe_analysis`` event (EV of every bet for the next round) after each round.
    shoe_analysis: bool = True
    #: Alert ``advantage`` when a bet's expected value per unit for the player exceeds this.
    advantage_threshold: Annotated[float, msgspec.Meta(ge=-1, le=1)] = 0.0
    #: Bets watched for advantage; empty: every bet offered on the next round (the
    #: table's ``[bet_availability]``).
    advantage_bets: tuple[str, ...] = ()
    #: ``shuffle_runs``: a run of this many cards each in deck order with the previous.
    order_run_threshold: Annotated[int, msgspec.Meta(ge=3, le=416)] = 10
    #: ``shuffle_runs``: a run of this many cards of one suit.
    suit_run_threshold: Annotated[int, msgspec.Meta(ge=3, le=416)] = 16
    #: ``shuffle_order``: alert when the adjacency count's z-score reaches this.
    adjacency_z: Annotated[float, msgspec.Meta(gt=0)] = 6.0
    #: ``shuffle_order``: cards needed before the adjacency test is evaluated.
    adjacency_min_cards: Annotated[int, msgspec.Meta(ge=8)] = 52
    #: ``shuffle_repeat``: windows seen in an earlier shoe needed to alert.
    repeat_min_windows: Annotated[int, msgspec.Meta(ge=1)] = 2
    #: Earlier shoes whose fingerprints the daemon loads (and keeps) for ``shuffle_repeat``.
    fingerprint_history_shoes: Annotated[int, msgspec.Meta(ge=0)] = 500
    #: ``shuffle_weak``: alert when the log-likelihood ratio (natural log) of "riffle
    #: threads of the old order" against "a fair shuffle" reaches this, for the previous
    #: shoe's order or new-deck order. A fair shoe ever reaches it with probability at most
    #: exp(-threshold) per order, however often it is looked at (Ville's inequality),
    #: and fair shoes come close to that bound (docs/game.md): 11 gives <= 3.3e-5 per
    #: shoe for both orders, a third of the 1e-4 a shoe all the shuffle tests share.
    shuffle_weak_threshold: Annotated[float, msgspec.Meta(gt=0)] = 11.0
    #: ``shuffle_weak`` at a shoe's end (``game.shuffle_fit``): alert when the whole
    #: shoe's best fit to the previous shoe's order through five riffles (with or without
    #: a strip, dealt order or a tray collected hand by hand) has this z-score against fair
    #: shoes' fits. Not a bound: the false-alarm rate is measured (docs/game.md, "The
    #: whole-shoe fit").
    shuffle_fit_z: Annotated[float, msgspec.Meta(gt=0)] = 4.5
    #: Run the whole-shoe fit (a few seconds of CPU once a shoe, after its end).
    shuffle_fit: bool = True
    #: ``shuffle_weak`` as the shoe is dealt (``game.shuffle_pairs``): alert when the
    #: count of the previous shoe's neighbours seen close together again (dealt order or
    #: a tray collected hand by hand) has this z-score against a fair shoe with the same
    #: cards, at any round. Not a bound: the rate is measured on fair shoes, every look
    #: included (docs/game.md, "The pair count").
    shuffle_pairs_z: Annotated[float, msgspec.Meta(gt=0)] = 5.5
    #: Run the pair count (a few milliseconds of CPU a round).
    shuffle_pairs: bool = True
    #: ``shuffle_weak`` as the shoe is dealt (``game.shuffle_chain``): alert when the
    #: likelihood of the cards seen under a few riffles of the previous shoe's order
    #: (dealt order or a tray collected hand by hand), summed over every matching of
    #: identical cards, exceeds the same likelihood with the codes renamed (averaged) by
    #: this many nats, at a look (after 80, 100, 120, 150, 200 and 300 cards, and at the
    #: shoe's end). Not a bound: an exact likelihood ratio would reach 12 in a look with
    #: chance e^-12, but this one is not exact and fair shoes came closer (11.4 in the
    #: first 1,100 of 10,000), so 15; the rate is measured on fair shoes, every look
    #: included (docs/game.md, "The chain test").
    shuffle_chain_nats: Annotated[float, msgspec.Meta(gt=0)] = 15.0
    #: Run the chain test (tens of milliseconds of CPU at each of its seven looks).
    shuffle_chain: bool = True
    #: ``edge_sorting``: alert when a test's p-value is at most this (per evaluation).
    edge_sorting_alpha: Probability = 1e-7
    #: ``edge_sorting``: smallest expected cell count for a chi-square test to be used.
    edge_sorting_min_expected: Annotated[float, msgspec.Meta(gt=0)] = 3.0

    def __post_init__(self) -> None:
        from shoe_controller.game.rules import BET_NAMES

        unknown = [b for b in self.advantage_bets if b not in BET_NAMES]
        if unknown:
            raise ValueError(
                f"advantage_bets: unknown bet {', '.join(unknown)} (bets: {', '.join(BET_NAMES)})"
            )


@dataclass(frozen=True, slots=True, eq=False)
class ProtectionState:
    """Everything the projection remembers; immutable (each event gives a new value)."""

    config: AnalyticsConfig
    rules: Any = None  # game.rules.Rules (None: DESIGN.md's defaults)
    decks: int = 8
    paytable: Any = None  # game.rules.Paytable (None: DESIGN.md's)
    commission: bool = True
    salt: bytes = b""
    known: Any = None  # shuffle_integrity.FingerprintSet of earlier shoes
    shoe: int = 0
    #: cards that left the shoe, in order (None: unread)
    sequence: tuple[str | None, ...] = ()
    #: where each card of ``sequence`` went: (round, hand) for a dealt card, else None
    #: (``shuffle_tracking.tray_edges``: a tray collected hand by hand)
    places: tuple[tuple[int, str] | None, ...] = ()
    #: (rank, orientation) of dealt cards whose orientation was read
    oriented: tuple[tuple[int, str], ...] = ()
    carried: tuple[str, ...] = ()  # misdealt cards the next round will deal again
    previous: tuple[str | None, ...] = ()  # the previous shoe's sequence
    previous_places: tuple[tuple[int, str] | None, ...] = ()  # and where its cards went
    previous_neighbours: Any = None  # and its neighbour relation (built once per shoe)
    #: this shoe's window fingerprints so far, and where the next window starts
    fingerprints: tuple[int, ...] = ()
    next_window: int = 0
    repeat_matches: int = 0
    matched_shoes: frozenset[int] = frozenset()
    #: shuffle_weak: (reference name, ShuffleTest) for this shoe, cards fed so far,
    #: whether this shoe ended normally (its order complete for the next shoe), and what
    #: is known of the previous shoe's order (a sentence for the alert's evidence)
    weak_tests: tuple[tuple[str, Any], ...] = ()
    weak_fed: int = 0
    complete: bool = False
    previous_known: bool = False
    previous_note: str = ""
    #: the pair counts against the previous shoe (name, shuffle_pairs.PairTest), built at
    #: the first look (None: not yet)
    pair_tests: tuple[tuple[str, Any], ...] | None = None
    #: the chain tests against the previous shoe (name, shuffle_chain.ChainTest), built
    #: at the first look (None: not yet), the looks passed, and whether the end's was
    chain_tests: tuple[tuple[str, Any], ...] | None = None
    chain_looks: int = 0
    chain_end: bool = False
    raised: frozenset[str] = frozenset()  # tests that alerted this shoe
    above: frozenset[str] = frozenset()  # bets above the advantage threshold
    last_round: int | None = None
    ended_round: int | None = None  # the shoe's last round, once it ended
    ended_cards: int = 0  # and how many cards had left it then (the whole-shoe fit's)
    ended: bool = False
    stored: bool = field(default=False)  # fingerprints folded into ``known``


def initial_state(
    rules: Any = None,
    config: AnalyticsConfig | None = None,
    *,
    known: Any = None,
    salt: bytes = b"",
) -> ProtectionState:
    """The state before any event. ``rules``: the table's ``game.rules.Rules`` (decks,
    paytable, commission mode); ``known``: earlier shoes' fingerprints
    (``FingerprintStore.load``); ``salt``: the store's salt.

    >>> initial_state().decks
    8
    """
    from shoe_controller.game.shuffle_integrity import FingerprintSet

    return ProtectionState(
        config=config or AnalyticsConfig(),
        rules=rules,
        decks=getattr(rules, "decks", 8),
        paytable=getattr(rules, "paytable", None),
        commission=getattr(rules, "commission", "commission") == "commission",
        salt=salt,
        known=known if known is not None else FingerprintSet(),
    )


def protect(state: ProtectionState, event: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    """Fold one domain event; return the new state and the events it raises."""
    cls = type(event)
    handler = _BY_CLASS.get(cls)
    if handler is None:
        config = getattr(cls, "__struct_config__", None)
        handler = _BY_CLASS[cls] = _HANDLERS.get(getattr(config, "tag", None), _ignore)
    return handler(state, event)


def _tag(event: Any) -> str | None:
    config = getattr(type(event), "__struct_config__", None)
    return getattr(config, "tag", None)


def fold(state: ProtectionState, events: Iterable[Any]) -> ProtectionState:
    """Rebuild the state from journaled events (a daemon resuming), quickly.

    Same result as folding :func:`protect` over ``events`` for everything that matters
    from now on (the cards of the shoe in progress, its alerts already raised, the
    previous shoe, the fingerprints of finished shoes), but the per-round analyses and
    tests of *finished* shoes are skipped: a long journal folds in a moment.
    """
    events = list(events)
    starts = [i for i, ev in enumerate(events) if _tag(ev) == "shoe_started"]
    current = starts[-1] if starts else 0
    for i, ev in enumerate(events):
        tag = _tag(ev)
        if i < current and tag in ("result_confirmed", "round_voided", "shoe_ended"):
            if tag == "shoe_ended":  # a finished shoe: only its cards (and end) matter now
                state = replace(state, complete=ev.reason == "cut_card")
            continue
        state, _ = protect(state, ev)
    return state


def interleave(
    events: Iterable[Any],
    rules: Any = None,
    config: AnalyticsConfig | None = None,
    analysis: bool = True,
) -> list[Any]:
    """The events with what the projection raises inserted after each (for ``replay``).

    ``analysis=False`` keeps the alerts and leaves out the ``shoe_analysis`` events.

    >>> from shoe_controller.game.events import ShoeStarted
    >>> interleave([ShoeStarted(shoe=1, decks=8)])
    [ShoeStarted(shoe=1, decks=8)]
    """
    state = initial_state(rules, config)
    out: list[Any] = []
    for ev in events:
        state, raised = protect(state, ev)
        out.append(ev)
        out.extend(e for e in raised if analysis or type(e).__name__ != "ShoeAnalysis")
    return out


# --------------------------------------------------------------------------------------
# Following the cards


def _out(state: ProtectionState, code: str | None,
         place: tuple[int, str] | None = None) -> ProtectionState:
    return replace(state, sequence=(*state.sequence, code), places=(*state.places, place))


def _shoe_started(state: ProtectionState, ev: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    from shoe_controller.game.shuffle_integrity import neighbours_in
    from shoe_controller.game.shuffle_tracking import ShuffleTest, new_deck_order

    state = _store(state)
    previous = state.sequence if state.shoe else state.previous
    places = state.places  # where the previous shoe's cards went (none before a shoe)
    known = bool(state.shoe) and state.complete
    if known:
        note = f"shoe {state.shoe}, dealt in full through this shoe"
    elif not state.shoe:
        note = "not known: no earlier shoe in this journal"
    else:
        note = f"not known in full: shoe {state.shoe} did not end at the cut card"
    tests = [("new_deck_order",
              ShuffleTest.start(new_deck_order(ev.decks), ev.decks, threads=False))]
    if known:
        tests.insert(0, ("previous_shoe",
                         ShuffleTest.start(previous, ev.decks, places=places)))
    return (
        replace(
            state,
            decks=ev.decks,
            shoe=ev.shoe,
            previous=previous,
            previous_places=places if known else (),
            previous_neighbours=neighbours_in(previous),
            weak_tests=tuple(tests),
            weak_fed=0,
            complete=False,
            previous_known=known,
            previous_note=note,
            pair_tests=None,
            chain_tests=None,
            chain_looks=0,
            chain_end=False,
            sequence=(),
            places=(),
            oriented=(),
            carried=(),
            fingerprints=(),
            next_window=0,
            repeat_matches=0,
            matched_shoes=frozenset(),
            raised=frozenset(),
            above=frozenset(),
            last_round=None,
            ended_round=None,
            ended_cards=0,
            ended=False,
            stored=False,
        ),
        (),
    )


def _burned(state: ProtectionState, ev: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    return _out(state, ev.card), ()


def _dealt(state: ProtectionState, ev: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    if state.carried and state.carried[0] == ev.card:
        # a misdealt card carried into this round: it already left the shoe
        return replace(state, carried=state.carried[1:]), ()
    state = _out(state, ev.card, (ev.round, ev.hand))
    if ev.orientation in ("up", "down"):
        from shoe_controller.game.cards import parse_card

        rank = parse_card(ev.card).rank
        state = replace(state, oriented=(*state.oriented, (rank, ev.orientation)))
    return state, ()


def _misdeal(state: ProtectionState, ev: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    state = _out(state, ev.card)
    if ev.policy == "carry" and ev.card is not None:
        state = replace(state, carried=(*state.carried, ev.card))
    return state, ()


def _last_round(state: ProtectionState, ev: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    return replace(state, last_round=ev.round), ()


def _round_over(state: ProtectionState, ev: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    out: list[Any] = []
    if state.config.shoe_analysis and not state.ended and state.last_round != ev.round:
        state = _analyse(state, ev.round, out)
    state = _integrity(state, ev.round, out)
    return state, tuple(out)


def _shoe_ended(state: ProtectionState, ev: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    out: list[Any] = []
    state = replace(state, ended=True, complete=ev.reason == "cut_card",
                    ended_round=ev.rounds or None, ended_cards=len(state.sequence))
    state = _integrity(state, ev.rounds or None, out)
    return _store(state), tuple(out)


def _store(state: ProtectionState) -> ProtectionState:
    """Fold the finished shoe's fingerprints into the known set (once)."""
    if state.stored or not state.shoe:
        return state
    state = _fingerprint(state)
    known = state.known.union(
        state.fingerprints, state.shoe, keep_shoes=state.config.fingerprint_history_shoes
    )
    return replace(state, known=known, stored=True)


# --------------------------------------------------------------------------------------
# After each round


def _counts(state: ProtectionState) -> list[int]:
    from shoe_controller.game.cards import parse_card

    counts = [state.decks] * 52
    for code, n in Counter(state.sequence).items():
        if code is not None:
            i = parse_card(code).index
            counts[i] = max(0, counts[i] - n)  # an excess card is the core's alert
    return counts


def _analyse(state: ProtectionState, round_: int, out: list[Any]) -> ProtectionState:
    from shoe_controller.game import odds
    from shoe_controller.game.events import IntegrityAlert, ShoeAnalysis

    counts = _counts(state)
    if sum(counts) < 6:
        return state
    a = odds.analyse(counts, state.paytable, state.commission)
    out.append(
        ShoeAnalysis(
            shoe=state.shoe,
            round=round_,
            probabilities={k: float(v) for k, v in a.probabilities.items()},
            expected_value={k: float(v) for k, v in a.expected_value.items()},
            house_edge={k: float(v) for k, v in a.house_edge.items()},
        )
    )
    threshold = state.config.advantage_threshold
    watched = state.config.advantage_bets or _offered(state, round_ + 1)
    above = frozenset(b for b in watched if b in a.expected_value and
                      a.expected_value[b] > threshold)
    for bet in sorted(above - state.above, key=list(a.expected_value).index):
        out.append(
            IntegrityAlert(
                shoe=state.shoe,
                round=round_,
                kind="advantage",
                evidence={
                    "test": "expected_value",
                    "bet": bet,
                    "statistic": float(a.expected_value[bet]),
                    "threshold": threshold,
                    "cards_left": a.cards,
                    "for_round": round_ + 1,
                },
            )
        )
    return replace(state, above=above)


def _offered(state: ProtectionState, round_: int) -> tuple[str, ...]:
    """Bets offered on ``round_``: from the table's rules (bet availability)."""
    from shoe_controller.game.rules import Rules, offered_bets

    return offered_bets(state.rules or Rules(), round_)


def _fingerprint(state: ProtectionState) -> ProtectionState:
    from shoe_controller.game.shuffle_integrity import WINDOW, window_fingerprints

    seq = state.sequence
    if len(seq) - state.next_window < WINDOW:
        return state
    new = window_fingerprints(seq, state.salt, start=state.next_window)
    matches = state.known.matches(new, exclude_shoe=state.shoe)
    shoes = state.matched_shoes
    if matches:
        shoes = shoes | {
            s for fp in new for s in state.known.shoes_of(fp) if s != state.shoe
        }
    return replace(
        state,
        fingerprints=(*state.fingerprints, *new),
        next_window=len(seq) - WINDOW + 1,
        repeat_matches=state.repeat_matches + matches,
        matched_shoes=shoes,
    )


def _integrity(state: ProtectionState, round_: int | None, out: list[Any]) -> ProtectionState:
    from shoe_controller.game import edge_sorting as es
    from shoe_controller.game import shuffle_integrity as si
    from shoe_controller.game.events import IntegrityAlert

    cfg = state.config
    raised = set(state.raised)

    def alert(test: str, kind: str, **evidence: Any) -> None:
        if test in raised:
            return
        raised.add(test)
        out.append(
            IntegrityAlert(
                shoe=state.shoe, round=round_, kind=kind, evidence={"test": test, **evidence}
            )
        )

    seq = state.sequence
    known_cards = sum(1 for c in seq if c is not None)
    run = si.longest_order_run(seq)
    if run >= cfg.order_run_threshold:
        alert("order_run", "shuffle_runs", statistic=run, threshold=cfg.order_run_threshold)
    run = si.longest_suit_run(seq)
    if run >= cfg.suit_run_threshold:
        alert("suit_run", "shuffle_runs", statistic=run, threshold=cfg.suit_run_threshold)

    if known_cards >= cfg.adjacency_min_cards:
        references = [("deck_order", si.DECK_ORDER)]
        if sum(1 for c in state.previous if c is not None) >= cfg.adjacency_min_cards:
            references.append(("previous_shoe", state.previous_neighbours))
        for name, neighbours in references:
            if f"adjacency_{name}" in raised:
                continue
            t = si.adjacency_test(seq, neighbours)
            if t.z >= cfg.adjacency_z:
                alert(
                    f"adjacency_{name}", "shuffle_order", reference=name,
                    statistic=round(t.z, 3), threshold=cfg.adjacency_z, count=t.count,
                    expected=round(t.mean, 3), sd=round(t.sd, 3), pairs=t.pairs,
                )

    state = _weak(state, alert)
    state = _pair_count(state, alert)
    state = _chain(state, alert)
    state = _fingerprint(state)
    if state.repeat_matches >= cfg.repeat_min_windows:
        alert(
            "repeat", "shuffle_repeat", statistic=state.repeat_matches,
            threshold=cfg.repeat_min_windows, windows=len(state.fingerprints),
            earlier_shoes=sorted(state.matched_shoes),
        )

    if "edge_sorting" not in raised and state.oriented:
        t = es.edge_sorting_test(state.oriented, cfg.edge_sorting_min_expected)
        for test, chi2, p in (("key", t.key_chi2, t.key_p), ("ranks", t.ranks_chi2, t.ranks_p)):
            if p is not None and p <= cfg.edge_sorting_alpha:
                alert(
                    "edge_sorting", "edge_sorting", rank_test=test, statistic=round(chi2, 3),
                    p_value=p, threshold=cfg.edge_sorting_alpha, cards=t.cards,
                )
                break
    return replace(state, raised=frozenset(raised))


def _weak(state: ProtectionState, alert: Any) -> ProtectionState:
    """Feed the cards that left the shoe since the last look to the ``shuffle_weak``
    tests (per card: ``game.shuffle_tracking``) and alert on a test at its threshold."""
    if not state.weak_tests or state.weak_fed >= len(state.sequence):
        return state
    import math

    threshold = state.config.shuffle_weak_threshold
    new = state.sequence[state.weak_fed:]
    tests = []
    for name, test in state.weak_tests:
        test = test.feed(new)
        tests.append((name, test))
        if test.peak >= threshold:
            alert(
                f"shuffle_weak_{name}", "shuffle_weak", reference=name,
                statistic=round(test.peak, 2), threshold=threshold,
                false_alarm_bound=float(f"{math.exp(-threshold):.2g}"),
                cards_seen=test.cards, unread=test.unread,
                previous_shoe_known=state.previous_known, previous_shoe=state.previous_note,
                **test.evidence(),
            )
    return replace(state, weak_tests=tuple(tests), weak_fed=len(state.sequence))


def _against_previous(state: ProtectionState, enabled: bool, test: str,
                      decks: tuple[int, ...]) -> tuple[str | None, ...] | None:
    """The cards this shoe dealt (to its end, once it ended), for a test against the
    previous shoe's order that is ``enabled``, has not alerted this shoe, and was measured
    for this many ``decks``; None when the test does not run (or that order is not known)."""
    if not (enabled and state.previous_known) or test in state.raised \
            or state.decks not in decks:
        return None
    return state.sequence[: state.ended_cards] if state.ended else state.sequence


def _pair_count(state: ProtectionState, alert: Any) -> ProtectionState:
    """Look at the pair counts (``game.shuffle_pairs``) of the cards dealt so far against
    the previous shoe's order, when that is known, and alert on the larger z-score at its
    threshold."""
    from shoe_controller.game import shuffle_pairs as sp

    cfg = state.config
    test = "shuffle_pairs_previous_shoe"
    dealt = _against_previous(state, cfg.shuffle_pairs, test, sp.CALIBRATED_DECKS)
    read = sum(1 for c in dealt or () if c is not None)
    if dealt is None or read < sp.MIN_CARDS:
        return state
    tests = state.pair_tests
    if tests is None:
        tests = (("dealt order", sp.PairTest.start(sp.dealt_pairs(state.previous),
                                                   state.decks)),)
        if state.previous_places:
            tests += (("tray collected hand by hand", sp.PairTest.start(
                sp.tray_pairs(state.previous, state.previous_places), state.decks)),)
        state = replace(state, pair_tests=tests)
    looks = [(t.looks(dealt, (len(dealt),))[0], name) for name, t in tests]
    (z, count, mean), name = max(looks, key=lambda look: look[0][0])
    if z >= cfg.shuffle_pairs_z:
        alert(
            test, "shuffle_weak", reference="previous_shoe", statistic=round(z, 3),
            threshold=cfg.shuffle_pairs_z, count=round(count, 2), fair_mean=round(mean, 2),
            component=f"pair count, old neighbours {sp.DISTANCES} apart or less, {name}",
            estimated_riffles=f"about {max(sp.RIFFLES)} or fewer",
            false_alarm_rate="measured on fair shoes: docs/game.md (no bound)",
            cards_seen=read, unread=len(dealt) - read,
            previous_shoe_known=True, previous_shoe=state.previous_note,
        )
    return state


def _chain(state: ProtectionState, alert: Any) -> ProtectionState:
    """At each of the chain test's looks (``game.shuffle_chain.LOOKS`` cards dealt, and
    the shoe's end), the larger statistic of its two trays against the previous shoe's
    order, when that is known; alert at the threshold."""
    from shoe_controller.game import shuffle_chain as sc

    cfg = state.config
    test = "shuffle_chain_previous_shoe"
    dealt = _against_previous(state, cfg.shuffle_chain, test, sc.CALIBRATED_DECKS)
    if dealt is None:
        return state
    looks = sc.looks_passed(len(dealt))
    if looks <= state.chain_looks and not (state.ended and not state.chain_end):
        return state
    tests = state.chain_tests
    if tests is None:
        tests = (("dealt order", sc.ChainTest.start(state.previous, None, state.decks)),)
        if state.previous_places:
            tests += (("tray collected hand by hand", sc.ChainTest.start(
                state.previous, state.previous_places, state.decks)),)
    look, name = max(((t.look(dealt), name) for name, t in tests),
                     key=lambda pair: pair[0].excess)
    if look.excess >= cfg.shuffle_chain_nats:
        read = sum(1 for c in dealt if c is not None)
        riffles, strip = look.family
        alert(
            test, "shuffle_weak", reference="previous_shoe", statistic=round(look.excess, 2),
            threshold=cfg.shuffle_chain_nats, log_likelihood_ratio=round(look.log_lr, 2),
            z=round(look.z, 2), controls_mean=round(look.mean, 2),
            controls_sd=round(look.sd, 2),
            component=f"chain of old neighbours' new places, {name}",
            estimated_riffles=f"about {riffles}{', then a strip' if strip else ''}",
            false_alarm_rate="measured on fair shoes: docs/game.md (no bound)",
            cards_seen=read, unread=len(dealt) - read,
            previous_shoe_known=True, previous_shoe=state.previous_note,
        )
    return replace(state, chain_tests=tests, chain_looks=looks, chain_end=state.ended)


def shoe_fit(state: ProtectionState) -> tuple[ProtectionState, tuple[Any, ...]]:
    """The whole-shoe fit (``game.shuffle_fit``) of a shoe that has just ended at the cut
    card, against the previous shoe's order when that is known: a ``shuffle_weak`` alert
    (test ``shuffle_fit_previous_shoe``) when it fits a few riffles too well.

    Not part of :func:`protect`: it costs seconds, so the daemon and ``replay`` call it
    once after a live ``shoe_ended``, and folding a journal on resume does not (the alert
    is in the journal; the daemon runs it again only for a shoe whose end was the last
    thing journaled). Returns the state (the test marked as raised) and the alerts.

    >>> shoe_fit(initial_state())[1]  # no shoe has ended
    ()
    """
    from shoe_controller.game import shuffle_fit as sf
    from shoe_controller.game.events import IntegrityAlert

    cfg = state.config
    test = "shuffle_fit_previous_shoe"
    dealt = state.sequence[: state.ended_cards]  # not cards shown after the end
    if not (cfg.shuffle_fit and state.ended and state.complete and state.previous_known) \
            or test in state.raised \
            or sf.not_calibrated(state.previous, dealt, state.decks):
        return state, ()
    fit = sf.fit_test(state.previous, dealt, state.decks,
                      places=state.previous_places or None)
    if fit.z < cfg.shuffle_fit_z:
        return state, ()
    riffles, strip, by_hand = fit.family
    alert = IntegrityAlert(
        shoe=state.shoe, round=state.ended_round, kind="shuffle_weak",
        evidence={
            "test": test, "reference": "previous_shoe", "statistic": fit.z,
            "threshold": cfg.shuffle_fit_z, "score": fit.score,
            "old_neighbours_seen": fit.pairs,
            "component": f"whole-shoe fit, {riffles} riffles"
                         f"{' and a strip' if strip else ''}"
                         f"{', tray collected hand by hand' if by_hand else ''}",
            "estimated_riffles": f"about {riffles} or fewer",
            "false_alarm_rate": "measured on fair shoes: docs/game.md (no bound)",
            "cards_seen": sum(1 for c in dealt if c is not None),
            "unread": sum(1 for c in dealt if c is None),
            "previous_shoe_known": True, "previous_shoe": state.previous_note,
        },
    )
    return replace(state, raised=state.raised | {test}), (alert,)


def _ignore(state: ProtectionState, ev: Any) -> tuple[ProtectionState, tuple[Any, ...]]:
    return state, ()


_BY_CLASS: dict[type, Any] = {}
_HANDLERS = {
    "shoe_started": _shoe_started,
    "burn_indicator": _burned,
    "card_burned": _burned,
    "card_dealt": _dealt,
    "misdeal": _misdeal,
    "last_round": _last_round,
    "result_confirmed": _round_over,
    "round_voided": _round_over,
    "shoe_ended": _shoe_ended,
}
