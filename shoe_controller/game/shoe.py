"""The shoe state machine: decide what each input means, and evolve the state by events.

Event sourcing, purely: :func:`decide` takes the current :class:`ShoeState` and one
input (:mod:`shoe_controller.game.inputs`) and returns the domain events it causes;
:func:`evolve` applies one event to a state. The journal stores events only, so folding
``evolve`` over them (:func:`fold`) rebuilds the state exactly, mid-round included.
:class:`Shoe` wraps the two for callers that just want to feed inputs.

>>> from shoe_controller.game.cards import parse_cards
>>> from shoe_controller.game.inputs import CardSeen, NewShoe
>>> shoe = Shoe(Rules(burn="none"))
>>> [e.type for e in shoe.apply(NewShoe())]
['shoe_started', 'bets_open']
>>> events = [e for c in parse_cards("7S KC 9D 5D 3H") for e in shoe.apply(CardSeen(c))]
>>> [e.type for e in events]  # doctest: +NORMALIZE_WHITESPACE
['round_started', 'card_dealt', 'card_dealt', 'card_dealt', 'card_dealt', 'draw_prompt',
 'card_dealt', 'draw_prompt', 'round_result', 'result_confirmed', 'bets_open']
>>> result = events[-3]
>>> result.player, result.banker, result.winner, result.settlement["player"]  # P 6, B 5+3
(('7S', '9D'), ('KC', '5D', '3H'), 'banker', -1.0)
>>> fold(Rules(burn="none"), [e for e in [*Shoe(Rules(burn="none")).apply(NewShoe()),
...                                       *events]]) == shoe.state
True

Phases of a shoe: ``no_shoe`` (nothing loaded yet), ``indicator`` (waiting for the
burn indicator), ``burning``, ``between`` (no round open), ``in_round`` (a round is open:
dealing, or complete and waiting for the dealer's confirmation), ``ended``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, Final

import msgspec

from shoe_controller.game import inputs as I
from shoe_controller.game.cards import Card, parse_card
from shoe_controller.game.events import (
    BetsOpen,
    BurnIndicator,
    CardBurned,
    CardDealt,
    CutCard,
    DomainEvent,
    DrawPrompt,
    Event,
    Fault,
    HandRevealed,
    InsuranceClosed,
    InsuranceOffer,
    InsuranceSettlement,
    InsuranceVoided,
    IntegrityAlert,
    LastRound,
    Misdeal,
    ResultConfirmed,
    RoundPaused,
    RoundResult,
    RoundResumed,
    RoundStarted,
    RoundVoided,
    ShoeEnded,
    ShoeStarted,
)
from shoe_controller.game.insurance import applicable_rows
from shoe_controller.game.inventory import (
    LANE_BITS,
    SHIFT_BY_CODE,
    counts,
    remaining,
    remaining_by_rank,
)
from shoe_controller.game.round import (
    COMPLETE,
    DUE_HAND,
    DUE_POSITION,
    NEXT,
    OUTCOME,
    PROMPT,
    START,
)
from shoe_controller.game.rules import Rules, burn_count
from shoe_controller.game.settlement import Settler
from shoe_controller.game.supervisor import audit, refusal

__all__ = [
    "BETWEEN",
    "BURNING",
    "ENDED",
    "INDICATOR",
    "IN_ROUND",
    "NO_SHOE",
    "Shoe",
    "ShoeState",
    "Table",
    "decide",
    "evolve",
    "fold",
    "initial_state",
    "step",
    "table_for",
]

NO_SHOE: Final = "no_shoe"
INDICATOR: Final = "indicator"
BURNING: Final = "burning"
BETWEEN: Final = "between"
IN_ROUND: Final = "in_round"
ENDED: Final = "ended"

#: Pause reason of an unreadable card; the round waits for a manual entry or a void.
UNREADABLE: Final = "unreadable_card"

_MASK: Final = (1 << LANE_BITS) - 1
_VALUE: Final[dict[str, int]] = {c: parse_card(c).value for c in SHIFT_BY_CODE}


class Table:
    """A table's rules compiled for the hot path (settlement memo, offered bets).

    Equal when the rules are equal, so a state rebuilt from a journal compares equal.
    """

    __slots__ = (
        "auto_confirm",
        "auto_rounds",
        "decks",
        "defer_result",
        "insurance",
        "plain",
        "reveal_auto",
        "rules",
        "settler",
    )

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.settler = Settler(rules)
        self.decks = rules.decks
        self.auto_rounds = rules.rounds == "auto"
        self.auto_confirm = rules.confirm == "auto"
        #: the insurance side game, or None when this table does not offer it
        self.insurance = rules.insurance if rules.insurance.enabled else None
        self.reveal_auto = rules.insurance.reveal == "auto"
        #: with insurance and a confirm button, round_result waits for the confirmation
        #: (offers made while the hands are revealed are settled in it)
        self.defer_result = self.insurance is not None and not self.auto_confirm
        #: no side game: the fused fast path of step() applies
        self.plain = self.insurance is None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and other.rules == self.rules

    def __hash__(self) -> int:
        return hash(self.rules)

    def __repr__(self) -> str:
        return f"Table({self.rules!r})"


@lru_cache(maxsize=64)
def table_for(rules: Rules) -> Table:
    """The (shared) compiled table for ``rules``."""
    return Table(rules)


class ShoeState(msgspec.Struct, frozen=True, gc=False):
    """Everything the shoe knows, as one immutable value (see module doc for phases).

    Counters are per shoe: ``burned``/``discarded`` count identified cards (the burn
    indicator is a burned card), ``unread`` cards that left the shoe unread and were
    written off, ``carried`` holds misdealt cards kept for the next round
    (``extra_card = "carry"``). ``inventory`` packs the count of each of the 52 cards read
    (:mod:`~shoe_controller.game.inventory`); ``dealt`` is derived from it.
    """

    table: Table
    shoe: int = 0
    phase: str = NO_SHOE
    burn_left: int = 0
    round: int = 0
    node: int = START
    player: tuple[str, ...] = ()
    banker: tuple[str, ...] = ()
    last_round: int = 0
    cut_seen: bool = False
    paused: str | None = None
    pending: bool = False
    carried: tuple[str, ...] = ()
    inventory: int = 0
    burned: int = 0
    discarded: int = 0
    unread: int = 0
    #: insurance: cards of each hand revealed (reveal buttons), the round's offers, the
    #: ids of those still open, and whether the round's insurance was voided
    revealed: tuple[int, int] = (0, 0)
    offers: tuple[InsuranceOffer, ...] = ()
    open_offers: tuple[int, ...] = ()
    insurance_void: bool = False

    @property
    def rules(self) -> Rules:
        return self.table.rules

    @property
    def reads(self) -> int:
        """Cards read (identified) in this shoe."""
        return sum(counts(self.inventory))

    @property
    def dealt(self) -> int:
        """Identified cards dealt into rounds in this shoe."""
        return self.reads - self.burned - self.discarded - len(self.carried)

    @property
    def round_open(self) -> bool:
        return self.phase == IN_ROUND

    @property
    def open_round(self) -> int | None:
        """The open round's number, or None between rounds."""
        return self.round if self.phase == IN_ROUND else None

    @property
    def awaiting_confirm(self) -> bool:
        """The round is complete and the dealer has not yet confirmed its result."""
        return self.phase == IN_ROUND and COMPLETE[self.node]

    def due(self) -> tuple[str, int] | None:
        """(hand, position) of the card due next, or None."""
        if self.phase != IN_ROUND or self.paused is not None:
            return None
        hand = DUE_HAND[self.node]
        return None if hand is None else (hand, DUE_POSITION[self.node])

    def seen(self, card: Card) -> int:
        """How many times ``card`` was read in this shoe."""
        return (self.inventory >> (LANE_BITS * card.index)) & _MASK

    def remaining(self) -> tuple[int, ...]:
        """Cards of each kind left in the shoe, indexed by ``Card.index`` (negative where
        more were read than the decks hold). Unread cards are not subtracted.

        >>> s = Shoe(Rules(burn="none", decks=1))
        >>> _ = s.apply(I.CardSeen(parse_card("AS")))
        >>> s.state.remaining()[:2], sum(s.state.remaining())
        ((0, 1), 51)
        """
        return remaining(self.inventory, self.table.decks)

    def remaining_by_rank(self) -> tuple[int, ...]:
        """Cards of each rank left, ace .. king at index 0 .. 12."""
        return remaining_by_rank(self.inventory, self.table.decks)


def initial_state(rules: Rules | None = None) -> ShoeState:
    """The state before any event: no shoe loaded yet."""
    return ShoeState(table_for(rules or Rules()))


# --------------------------------------------------------------------------- decide


def decide(state: ShoeState, inp: I.Input) -> tuple[Event, ...]:
    """The events that input ``inp`` causes in ``state`` (pure; state is not changed).

    >>> s = initial_state(Rules(burn="none"))
    >>> decide(s, I.NewShoe())
    (ShoeStarted(shoe=1, decks=8), BetsOpen(shoe=1, round=1, bets=(...)))
    """
    handler = _HANDLERS.get(type(inp))
    if handler is None:
        raise TypeError(f"not a shoe input: {inp!r}")
    if state.open_offers and type(inp) in _LEAVES_SHOE:
        # insurance offers close when the next card leaves the shoe
        closed = _closing(state, "card")
        return (*closed, *handler(evolve(state, closed[0]), inp))
    return handler(state, inp)


def _then(state: ShoeState, events: list[Event],
          more: Callable[[ShoeState], Iterable[Event]]) -> tuple[Event, ...]:
    """Append ``more(state after events)`` to ``events`` (composite decisions)."""
    for ev in events:
        state = evolve(state, ev)
    events.extend(more(state))
    return tuple(events)


def _excess(state: ShoeState, code: str) -> IntegrityAlert | None:
    seen = (state.inventory >> (LANE_BITS * _INDEX[code])) & _MASK
    if seen >= state.table.decks:
        return IntegrityAlert(
            state.shoe,
            state.open_round,
            "excess_card",
            {"card": code, "seen": seen + 1, "decks": state.table.decks},
        )
    return None


def _close(state: ShoeState, rnd: int) -> list[Event]:
    """Events after round ``rnd`` closes (confirmed or voided): shoe end or next bets."""
    if rnd == state.last_round:
        return [ShoeEnded(state.shoe, rnd, "cut_card")]
    return [BetsOpen(state.shoe, rnd + 1, state.table.settler.offered(rnd + 1))]


def _round_result(state: ShoeState, nxt: int, player: tuple[str, ...],
                  banker: tuple[str, ...]) -> RoundResult:
    """The round_result of a round complete at node ``nxt`` with these cards."""
    rnd = state.round
    p0, p1, b0, b1 = player[0], player[1], banker[0], banker[1]
    player_pair, banker_pair = p0[0] == p1[0], b0[0] == b1[0]
    pairs = player_pair | banker_pair << 1 | (p0 == p1 or b0 == b1) << 2  # Pairs.code
    pt, bt, _np, _nb, winner, p_nat, b_nat = OUTCOME[nxt]
    insurance: tuple[InsuranceSettlement, ...] = ()
    if state.offers:
        insurance = tuple(
            InsuranceSettlement(
                o.offer, o.side, o.insures, o.odds, o.stage,
                "void" if state.insurance_void else "won" if o.insures == winner else "lost",
                0.0 if state.insurance_void else o.odds if o.insures == winner else -1.0,
            )
            for o in state.offers
        )
    return RoundResult(
        state.shoe,
        rnd,
        player,
        banker,
        pt,
        bt,
        winner,
        p_nat or b_nat,
        player_pair,
        banker_pair,
        _settle(state.table.settler, nxt, pairs, rnd),
        insurance,
    )


def _settle(settler: Settler, node: int, pairs: int, rnd: int) -> dict[str, float]:
    """Settler.settle, with its memo hit inlined (once per round in the hot path)."""
    try:
        hit = settler.by_round[rnd][node * 8 + pairs]
    except IndexError:
        hit = None
    return hit if hit is not None else settler.settle(node, pairs, rnd)


def _closing(state: ShoeState, reason: str) -> list[Event]:
    """insurance_closed for the offers still open, if any."""
    if not state.open_offers:
        return []
    return [InsuranceClosed(state.shoe, state.round, state.open_offers, reason)]


def _result(state: ShoeState, nxt: int, player: tuple[str, ...], banker: tuple[str, ...]
            ) -> list[Event]:
    """The events of a round that just completed at node ``nxt`` with these cards."""
    table = state.table
    if table.defer_result:
        return []  # round_result comes with the dealer's confirmation
    result = _round_result(state, nxt, player, banker)
    if not table.auto_confirm:
        return [result]
    shoe, rnd = state.shoe, state.round
    if state.open_offers or rnd == state.last_round:
        head: list[Event] = [*_closing(state, "result"), result, ResultConfirmed(shoe, rnd)]
        return [*head, *_close(state, rnd)]
    return [result, ResultConfirmed(shoe, rnd), BetsOpen(shoe, rnd + 1, _offered(table, rnd + 1))]


def _offered(table: Table, rnd: int) -> tuple[str, ...]:
    """Settler.offered, with its memo hit inlined."""
    try:
        return table.settler.offered_by_round[rnd]
    except IndexError:
        return table.settler.offered(rnd)


def _totals(cards: tuple[str, ...]) -> int:
    return sum(_VALUE[c] for c in cards) % 10


def _offers(state: ShoeState, player: tuple[str, ...], banker: tuple[str, ...],
            revealed: tuple[int, int]) -> list[Event]:
    """insurance_offer events for the rows that apply now and were not offered yet."""
    cfg = state.table.insurance
    np_, nb = len(player), len(banker)
    stage = "2/2" if (np_, nb) == (2, 2) else "3/2" if (np_, nb) == (3, 2) else None
    if cfg is None or stage is None:
        return []  # a Banker three-card stage (or an early reveal) never offers
    pt = _totals(player) if revealed[0] >= np_ else None
    bt = _totals(banker) if revealed[1] >= nb else None
    done = {(o.stage, o.side, o.insures, o.odds, o.player_total, o.banker_total)
            for o in state.offers}
    out: list[Event] = []
    n = len(state.offers)
    for row in applicable_rows(cfg, stage, pt, bt):
        key = (stage, row.side, row.insures, row.odds, pt, bt)
        if key in done:
            continue
        n += 1
        out.append(InsuranceOffer(state.shoe, state.round, n, row.side, row.insures, row.odds,
                                  stage, pt, bt))
    return out


def _deal(state: ShoeState, code: str, orientation: str | None) -> list[Event]:
    """A card dealt to the open round's due slot (the caller checked one is due)."""
    node = state.node
    shoe, rnd = state.shoe, state.round
    hand = DUE_HAND[node]
    evs: list[Event] = [CardDealt(shoe, rnd, hand, DUE_POSITION[node], code, orientation)]
    nxt = NEXT[node * 10 + _VALUE[code]]
    if hand == "player":
        player, banker = (*state.player, code), state.banker
    else:
        player, banker = state.player, (*state.banker, code)
    table = state.table
    if table.insurance is not None and table.reveal_auto and not COMPLETE[nxt]:
        # no reveal buttons: the cards count as shown when dealt; offer while a card
        # is still to come
        evs.extend(_offers(state, player, banker, (len(player), len(banker))))
    prompt = PROMPT[nxt]
    if prompt is not None:
        evs.append(DrawPrompt(shoe, rnd, prompt))
    if COMPLETE[nxt]:
        evs.extend(_result(state, nxt, player, banker))
    return evs


def _start_round(state: ShoeState) -> list[Event]:
    """Open the next round and deal any carried cards into it."""
    first = RoundStarted(state.shoe, state.round + 1)
    if not state.carried:
        return [first]
    evs: list[Event] = [first]
    s = evolve(state, first)
    for code in state.carried:
        if DUE_HAND[s.node] is None:
            break  # (never with fewer than four carried cards) the rest wait
        for ev in _closing(s, "card"):  # a carried card closes offers like any card
            evs.append(ev)
            s = evolve(s, ev)
        for ev in _deal(s, code, None):
            evs.append(ev)
            s = evolve(s, ev)
    return evs


def _extra(state: ShoeState, code: str | None, kind: str) -> list[Event]:
    """A card when none is due: apply the extra-card policy (or burn where it cannot)."""
    policy = state.table.rules.extra_card
    rnd = state.open_round
    if policy == "void" and rnd is not None:
        return [
            *_closing(state, "void"),
            Misdeal(state.shoe, rnd, kind, code, "void"),
            RoundVoided(state.shoe, rnd, "misdeal"),
            *_close(state, rnd),
        ]
    if policy == "carry" and state.phase != ENDED:
        if code is None:  # cannot carry a card nobody read: wait for a manual entry
            return [
                Fault(state.shoe, rnd, UNREADABLE, "misdealt card unreadable: enter it"),
                RoundPaused(state.shoe, rnd, UNREADABLE),
            ]
        return [Misdeal(state.shoe, rnd, kind, code, "carry")]
    return [Misdeal(state.shoe, rnd, kind, code, "burn")]


def _on_card(state: ShoeState, inp: I.CardSeen | I.ManualCard) -> tuple[Event, ...]:
    code = inp.card.code
    orientation = getattr(inp, "orientation", None)
    phase = state.phase
    if (
        phase is IN_ROUND
        and state.paused is None
        and DUE_HAND[state.node] is not None
        and (state.inventory >> (LANE_BITS * _INDEX[code])) & _MASK < state.table.decks
    ):
        return tuple(_deal(state, code, orientation))  # the hot path
    if phase is NO_SHOE:
        return _then(state, list(_new_shoe(state)), lambda s: _on_card(s, inp))
    evs: list[Event] = []
    alert = _excess(state, code)
    if alert is not None:
        evs.append(alert)
    if state.paused is not None:
        evs.append(Misdeal(state.shoe, state.open_round, "card_while_paused", code, "burn"))
    elif phase is IN_ROUND:
        if DUE_HAND[state.node] is not None:
            evs.extend(_deal(state, code, orientation))
        else:
            evs.extend(_extra(state, code, "extra_card"))
    elif phase is BETWEEN:
        if state.table.auto_rounds:
            # the card opens the round and is dealt into it (an excess alert comes then)
            return _then(state, _start_round(state), lambda s: _on_card(s, inp))
        evs.extend(_extra(state, code, "no_round_open"))
    elif phase is INDICATOR:
        n = burn_count(state.table.rules, _VALUE[code])
        evs.append(BurnIndicator(state.shoe, code, n))
    elif phase is BURNING:
        evs.extend(_burn(state, code))
    else:  # ENDED
        evs.extend(_extra(state, code, "after_shoe_end"))
    return tuple(evs)


def _on_manual(state: ShoeState, inp: I.ManualCard) -> tuple[Event, ...]:
    """The supervisor's entry of the unreadable card the shoe waits for, and only that
    one (a camera read now is the NEXT card, never taken for the unreadable one);
    anything else is refused (:func:`~shoe_controller.game.supervisor.refusal`). The
    card's event says ``source: "manual"`` and who entered it."""
    why = refusal(state, inp)
    if why is not None:
        return _refused(state, why, inp)
    who = audit(inp)
    resumed = RoundResumed(state.shoe, state.open_round, **who)
    events = _on_card(evolve(state, resumed), inp)
    who["source"] = "manual"
    code, stamped, out = inp.card.code, False, [resumed]
    for ev in events:
        if not stamped and getattr(ev, "card", None) == code and isinstance(
                ev, CardDealt | BurnIndicator):
            ev, stamped = _replace(ev, **who), True
        out.append(ev)
    return tuple(out)


def _burn(state: ShoeState, code: str | None) -> list[Event]:
    evs: list[Event] = [CardBurned(state.shoe, code, "burn")]
    if state.burn_left == 1:
        evs.append(BetsOpen(state.shoe, 1, state.table.settler.offered(1)))
    return evs


def _on_unreadable(state: ShoeState, inp: I.UnreadableCard) -> tuple[Event, ...]:
    phase = state.phase
    if phase is NO_SHOE:
        return _then(state, list(_new_shoe(state)), lambda s: _on_unreadable(s, inp))
    rnd = state.open_round
    if state.paused is not None:
        return (Misdeal(state.shoe, rnd, "card_while_paused", None, "burn"),)
    if phase is BURNING:
        return tuple(_burn(state, None))
    if phase is BETWEEN and state.table.auto_rounds:
        return _then(state, _start_round(state), lambda s: _on_unreadable(s, inp))
    if phase is BETWEEN:
        return tuple(_extra(state, None, "no_round_open"))
    if phase is ENDED:
        return tuple(_extra(state, None, "after_shoe_end"))
    if phase is IN_ROUND and DUE_HAND[state.node] is None:
        return tuple(_extra(state, None, "extra_card"))
    # a card that decides something (a round's card, the burn indicator): never guess
    return (
        Fault(state.shoe, rnd, UNREADABLE, inp.reason),
        RoundPaused(state.shoe, rnd, UNREADABLE),
    )


def _on_foreign(state: ShoeState, inp: I.ForeignCard) -> tuple[Event, ...]:
    if state.phase is NO_SHOE:
        return _then(state, list(_new_shoe(state)), lambda s: _on_foreign(s, inp))
    rnd = state.open_round
    alert = IntegrityAlert(state.shoe, rnd, "foreign_card", {"payload": inp.payload})
    if state.paused is not None:
        return (alert,)
    return (alert, RoundPaused(state.shoe, rnd, "foreign_card"))


def _on_cut(state: ShoeState, inp: I.CutCardSeen) -> tuple[Event, ...]:
    phase = state.phase
    if phase is NO_SHOE:
        return _then(state, list(_new_shoe(state)), lambda s: _on_cut(s, inp))
    if state.cut_seen or phase is ENDED:
        return (
            IntegrityAlert(
                state.shoe, state.open_round, "duplicate_cut_card", {"rounds": state.round}
            ),
        )
    if phase is IN_ROUND:
        extra = 1 if state.table.rules.cut_card == "one_more_round" else 0
        return (
            CutCard(state.shoe, state.round, "mid_round"),
            LastRound(state.shoe, state.round + extra),
        )
    return (
        CutCard(state.shoe, None, "between_rounds"),
        LastRound(state.shoe, state.round + 1),
    )


def _new_shoe(state: ShoeState) -> tuple[Event, ...]:
    evs: list[Event] = []
    if state.phase is IN_ROUND:
        evs.extend(_closing(state, "void"))
        evs.append(RoundVoided(state.shoe, state.round, "new_shoe"))
    if state.phase is not NO_SHOE and state.phase is not ENDED:
        evs.append(ShoeEnded(state.shoe, state.round, "new_shoe"))
    shoe = state.shoe + 1
    rules = state.table.rules
    evs.append(ShoeStarted(shoe, rules.decks))
    if rules.burn == "none":
        evs.append(BetsOpen(shoe, 1, state.table.settler.offered(1)))
    return tuple(evs)


def _on_new_shoe(state: ShoeState, inp: I.NewShoe) -> tuple[Event, ...]:
    return _new_shoe(state)


def _refused(state: ShoeState, what: str, inp: Any = None) -> tuple[Event, ...]:
    return (Fault(state.shoe, state.open_round, "input_refused", what, **audit(inp)),)


def _missing(state: ShoeState, what: str) -> tuple[Event, ...]:
    """The dealer closed a round while a card was still due: a fault; the round pauses."""
    hand, pos = DUE_HAND[state.node], DUE_POSITION[state.node]
    return (
        Fault(state.shoe, state.round, "missing_card", f"{what} while {hand} card {pos} is due"),
        RoundPaused(state.shoe, state.round, "missing_card"),
    )


def _on_new_round(state: ShoeState, inp: I.NewRound) -> tuple[Event, ...]:
    if state.phase is NO_SHOE:
        return _then(state, list(_new_shoe(state)), lambda s: _on_new_round(s, inp))
    if state.paused is not None:
        return _refused(state, "new round while paused")
    if state.phase is BETWEEN:
        return tuple(_start_round(state))
    if state.phase is IN_ROUND:
        if DUE_HAND[state.node] is not None:
            return _missing(state, "new round")
        return _refused(state, "new round before the result was confirmed")
    return _refused(state, f"new round during {state.phase}")


def _on_confirm(state: ShoeState, inp: I.ConfirmResult) -> tuple[Event, ...]:
    if state.phase is not IN_ROUND:
        return ()  # nothing to confirm (auto-confirmed already): a harmless extra press
    if state.paused is not None:
        return _refused(state, "confirm while paused")
    if DUE_HAND[state.node] is not None:
        return _missing(state, "result confirmed")
    if state.table.defer_result:
        result = _round_result(state, state.node, state.player, state.banker)
        return (*_closing(state, "result"), result, ResultConfirmed(state.shoe, state.round),
                *_close(state, state.round))
    return (ResultConfirmed(state.shoe, state.round), *_close(state, state.round))


def _on_pause(state: ShoeState, inp: I.Pause) -> tuple[Event, ...]:
    """A supervisor's pause. Refused (journaled, so the supervisor sees it did nothing)
    before any shoe and when the shoe is already paused: the first pause's reason stands.
    """
    if state.phase is NO_SHOE:
        return _refused(state, "pause before any shoe", inp)
    if state.paused is not None:
        return _refused(state, f"pause while already paused ({state.paused})", inp)
    return (RoundPaused(state.shoe, state.open_round, inp.reason, **audit(inp)),)


def _on_resume(state: ShoeState, inp: I.Resume) -> tuple[Event, ...]:
    if state.paused is None:
        return ()
    if state.pending:
        return (
            Fault(
                state.shoe,
                state.open_round,
                "manual_card_required",
                "an unreadable card must be entered (or the round voided) first",
                **audit(inp),
            ),
        )
    return (RoundResumed(state.shoe, state.open_round, **audit(inp)),)


def _on_void(state: ShoeState, inp: I.Void) -> tuple[Event, ...]:
    rnd = state.open_round
    if inp.source is not None and (why := refusal(state, inp)) is not None:
        return _refused(state, why, inp)  # a result known and no key, or nothing to void
    who = audit(inp)
    if inp.source is not None:
        who["key"] = inp.key
        if rnd is not None and COMPLETE[state.node]:
            who["after_result"] = True
    evs: list[Event] = []
    if state.pending:
        if state.phase is INDICATOR:
            return (
                Fault(
                    state.shoe,
                    None,
                    "manual_card_required",
                    "the burn indicator decides the burn: enter it",
                    **audit(inp),
                ),
            )
        evs.append(Misdeal(state.shoe, rnd, "unread_card", None, "void" if rnd else "burn"))
    if rnd is not None:
        evs.extend(_closing(state, "void"))
        evs.append(RoundVoided(state.shoe, rnd, inp.reason, **who))
        evs.extend(_close(state, rnd))
    elif state.paused is not None:
        evs.append(RoundResumed(state.shoe, None, **audit(inp)))
    return tuple(evs)


def _on_fault(state: ShoeState, inp: I.Fault) -> tuple[Event, ...]:
    rnd = state.open_round
    ev = Fault(state.shoe, rnd, inp.kind, inp.detail)
    if rnd is not None and state.paused is None:
        return (ev, RoundPaused(state.shoe, rnd, inp.kind))
    return (ev,)


def _on_shoe_opened(state: ShoeState, inp: I.ShoeOpened) -> tuple[Event, ...]:
    """Lid or presence sensor: nothing between shoes (loading, unloading); during a shoe,
    a fault like any other (journaled, the round paused, the alarm on until the
    supervisor acts)."""
    if state.phase is NO_SHOE or state.phase is ENDED:
        return ()
    return _on_fault(state, I.Fault(inp.kind, inp.detail or "during a shoe"))


def _on_reveal(state: ShoeState, inp: I.Reveal) -> tuple[Event, ...]:
    """A reveal button: offers for the rows that now apply (reveal-button tables)."""
    table = state.table
    if table.insurance is None or table.reveal_auto or state.phase is not IN_ROUND:
        return ()  # no reveal points here: the press changes nothing
    if state.paused is not None:
        return _refused(state, "reveal while paused")
    cards = len(state.player) if inp.side == "player" else len(state.banker)
    already = state.revealed[0] if inp.side == "player" else state.revealed[1]
    if cards == already:
        return ()  # nothing new to show
    evs: list[Event] = [*_closing(state, "reveal"), HandRevealed(state.shoe, state.round,
                                                                  inp.side, cards)]
    s = state
    for ev in evs:
        s = evolve(s, ev)
    hidden = s.revealed != (len(s.player), len(s.banker))
    if hidden or not COMPLETE[s.node]:  # something still to show or to come
        evs.extend(_offers(s, s.player, s.banker, s.revealed))
    return tuple(evs)


def _on_void_insurance(state: ShoeState, inp: I.VoidInsurance) -> tuple[Event, ...]:
    if state.table.insurance is None:
        return ()
    if state.phase is not IN_ROUND or state.insurance_void:
        return _refused(state, "no round insurance to void")
    return (*_closing(state, "void"), InsuranceVoided(state.shoe, state.round, inp.reason))


_HANDLERS: dict[type, Callable[[ShoeState, Any], tuple[Event, ...]]] = {
    I.CardSeen: _on_card,
    I.ManualCard: _on_manual,
    I.UnreadableCard: _on_unreadable,
    I.ForeignCard: _on_foreign,
    I.CutCardSeen: _on_cut,
    I.NewShoe: _on_new_shoe,
    I.NewRound: _on_new_round,
    I.ConfirmResult: _on_confirm,
    I.Reveal: _on_reveal,
    I.Pause: _on_pause,
    I.Resume: _on_resume,
    I.Void: _on_void,
    I.VoidInsurance: _on_void_insurance,
    I.Fault: _on_fault,
    I.ShoeOpened: _on_shoe_opened,
}

#: inputs that mean a card (or something) left the shoe: open insurance offers close (a
#: manual card is the one that left unread: its UnreadableCard closed them already)
_LEAVES_SHOE: Final = frozenset({I.CardSeen, I.UnreadableCard, I.ForeignCard})

_INDEX: Final[dict[str, int]] = {c: parse_card(c).index for c in SHIFT_BY_CODE}

# --------------------------------------------------------------------------- evolve

_replace = msgspec.structs.replace


def _ev_card_dealt(s: ShoeState, ev: CardDealt) -> ShoeState:
    code = ev.card
    node = NEXT[s.node * 10 + _VALUE[code]]
    if ev.hand == "player":
        player, banker = (*s.player, code), s.banker
    else:
        player, banker = s.player, (*s.banker, code)
    if s.carried:  # a carried card was counted when it was read
        return _replace(s, node=node, player=player, banker=banker, carried=s.carried[1:])
    return _replace(
        s, node=node, player=player, banker=banker, inventory=s.inventory + SHIFT_BY_CODE[code]
    )


def _ev_same(s: ShoeState, ev: Any) -> ShoeState:
    return s


def _ev_shoe_started(s: ShoeState, ev: ShoeStarted) -> ShoeState:
    rules = s.table.rules
    if rules.burn == "first_card":
        return ShoeState(s.table, ev.shoe, INDICATOR)
    n = burn_count(rules)
    return ShoeState(s.table, ev.shoe, BURNING if n else BETWEEN, burn_left=n)


def _ev_burn_indicator(s: ShoeState, ev: BurnIndicator) -> ShoeState:
    return _replace(
        s,
        phase=BURNING if ev.burn_count else BETWEEN,
        burn_left=ev.burn_count,
        burned=s.burned + 1,
        inventory=s.inventory + SHIFT_BY_CODE[ev.card],
    )


def _ev_card_burned(s: ShoeState, ev: CardBurned) -> ShoeState:
    left = s.burn_left - 1
    phase = BURNING if left > 0 else BETWEEN
    if ev.card is None:
        return _replace(s, phase=phase, burn_left=left, unread=s.unread + 1)
    return _replace(
        s,
        phase=phase,
        burn_left=left,
        burned=s.burned + 1,
        inventory=s.inventory + SHIFT_BY_CODE[ev.card],
    )


def _ev_round_started(s: ShoeState, ev: RoundStarted) -> ShoeState:
    if s.offers or s.revealed != (0, 0) or s.insurance_void:
        return _replace(s, phase=IN_ROUND, round=ev.round, node=START, player=(), banker=(),
                        revealed=(0, 0), offers=(), open_offers=(), insurance_void=False)
    return _replace(s, phase=IN_ROUND, round=ev.round, node=START, player=(), banker=())


def _ev_hand_revealed(s: ShoeState, ev: HandRevealed) -> ShoeState:
    p, b = s.revealed
    return _replace(s, revealed=(ev.cards, b) if ev.hand == "player" else (p, ev.cards))


def _ev_offer(s: ShoeState, ev: InsuranceOffer) -> ShoeState:
    return _replace(s, offers=(*s.offers, ev), open_offers=(*s.open_offers, ev.offer))


def _ev_insurance_closed(s: ShoeState, ev: InsuranceClosed) -> ShoeState:
    return _replace(s, open_offers=())


def _ev_insurance_voided(s: ShoeState, ev: InsuranceVoided) -> ShoeState:
    return _replace(s, insurance_void=True, open_offers=())


def _ev_closed(s: ShoeState, ev: Any) -> ShoeState:
    return _replace(s, phase=BETWEEN, paused=None, pending=False)


def _ev_cut(s: ShoeState, ev: CutCard) -> ShoeState:
    return _replace(s, cut_seen=True)


def _ev_last_round(s: ShoeState, ev: LastRound) -> ShoeState:
    return _replace(s, last_round=ev.round)


def _ev_shoe_ended(s: ShoeState, ev: ShoeEnded) -> ShoeState:
    # carried cards can never be dealt now: they count as discarded
    return _replace(
        s, phase=ENDED, paused=None, pending=False, carried=(),
        discarded=s.discarded + len(s.carried),
    )


def _ev_misdeal(s: ShoeState, ev: Misdeal) -> ShoeState:
    if ev.card is None:
        # an unread card written off: only the write-off of the card the round waits for
        # (a void's "unread_card") ends the wait; another unreadable card read in the
        # meantime (card_while_paused) is discarded, and the round still waits
        return _replace(s, unread=s.unread + 1,
                        pending=s.pending and ev.kind != "unread_card")
    inventory = s.inventory + SHIFT_BY_CODE[ev.card]
    if ev.policy == "carry":
        return _replace(s, carried=(*s.carried, ev.card), inventory=inventory)
    return _replace(s, discarded=s.discarded + 1, inventory=inventory)


def _ev_paused(s: ShoeState, ev: RoundPaused) -> ShoeState:
    return _replace(s, paused=ev.reason, pending=ev.reason == UNREADABLE)


def _ev_resumed(s: ShoeState, ev: RoundResumed) -> ShoeState:
    return _replace(s, paused=None, pending=False)


_EVOLVERS: dict[type, Callable[[ShoeState, Any], ShoeState]] = {
    CardDealt: _ev_card_dealt,
    ShoeStarted: _ev_shoe_started,
    BurnIndicator: _ev_burn_indicator,
    CardBurned: _ev_card_burned,
    RoundStarted: _ev_round_started,
    ResultConfirmed: _ev_closed,
    RoundVoided: _ev_closed,
    CutCard: _ev_cut,
    LastRound: _ev_last_round,
    ShoeEnded: _ev_shoe_ended,
    Misdeal: _ev_misdeal,
    RoundPaused: _ev_paused,
    RoundResumed: _ev_resumed,
    HandRevealed: _ev_hand_revealed,
    InsuranceOffer: _ev_offer,
    InsuranceClosed: _ev_insurance_closed,
    InsuranceVoided: _ev_insurance_voided,
}


def evolve(state: ShoeState, event: DomainEvent) -> ShoeState:
    """The state after ``event``. Events that change nothing here (prompts, results
    before confirmation, alerts, analyses, bets open) return ``state`` itself.

    >>> s = evolve(initial_state(Rules(burn="none")), ShoeStarted(shoe=1, decks=8))
    >>> s.shoe, s.phase
    (1, 'between')
    """
    return _EVOLVERS.get(type(event), _ev_same)(state, event)


def fold(rules: Rules, events: Iterable[DomainEvent], state: ShoeState | None = None
         ) -> ShoeState:
    """Rebuild a state by folding :func:`evolve` over ``events`` (a journal replay)."""
    s = state if state is not None else initial_state(rules)
    for ev in events:
        s = evolve(s, ev)
    return s


# ------------------------------------------------------------------ step (fused)

#: Card -> (code, value, bit offset of its inventory lane, lane increment).
_CARD_INFO: Final[dict[Card, tuple[str, int, int, int]]] = {
    parse_card(c): (c, _VALUE[c], LANE_BITS * _INDEX[c], SHIFT_BY_CODE[c]) for c in _VALUE
}
#: node * 10 + value -> (next node, hand, position, prompt on arrival, complete), or None
#: when no card is due at the node: one lookup per card in the hot path.
_TRANSITIONS: Final[tuple[tuple[int, str, int, str | None, bool] | None, ...]] = tuple(
    None
    if DUE_HAND[n] is None
    else (
        NEXT[n * 10 + v],
        DUE_HAND[n],
        DUE_POSITION[n],
        PROMPT[NEXT[n * 10 + v]],
        COMPLETE[NEXT[n * 10 + v]],
    )
    for n in range(len(DUE_HAND))
    for v in range(10)
)


def step(
    state: ShoeState,
    inp: I.Input,
    # bound once as locals: this function runs for every card the shoe reads
    _card_seen: type = I.CardSeen,
    _info: dict = _CARD_INFO,
    _transitions: tuple = _TRANSITIONS,
    _mask: int = _MASK,
    _in_round: str = IN_ROUND,
    _between: str = BETWEEN,
    _replace: Callable[..., ShoeState] = _replace,
    _dealt: type = CardDealt,
    _prompted: type = DrawPrompt,
    _started: type = RoundStarted,
    _bets_open: type = BetsOpen,
) -> tuple[ShoeState, list[Event]]:
    """decide and evolve in one: ``(state after the events, events)``.

    Exactly ``decide(state, inp)`` and the fold of :func:`evolve` over it (the property
    tests check this); the common inputs (a card due in an open round, the first card of
    an automatic round) take a fused path that builds the next state directly.

    >>> s, evs = step(initial_state(Rules(burn="none")), I.NewShoe())
    >>> s.phase, [e.type for e in evs]
    ('between', ['shoe_started', 'bets_open'])
    """
    if inp.__class__ is _card_seen and state.paused is None and state.table.plain:
        code, value, bits, shift = _info[inp.card]
        table = state.table
        inventory = state.inventory
        if (inventory >> bits) & _mask < table.decks:
            phase = state.phase
            if phase is _in_round:
                tr = _transitions[state.node * 10 + value]
                if tr is not None:
                    nxt, hand, position, prompt, complete = tr
                    shoe, rnd = state.shoe, state.round
                    ev = _dealt(shoe, rnd, hand, position, code, inp.orientation)
                    if not complete:
                        if hand == "player":
                            new = _replace(state, node=nxt, player=(*state.player, code),
                                           inventory=inventory + shift)
                        else:
                            new = _replace(state, node=nxt, banker=(*state.banker, code),
                                           inventory=inventory + shift)
                        if prompt is None:
                            return new, [ev]
                        return new, [ev, _prompted(shoe, rnd, prompt)]
                    if hand == "player":
                        player, banker = (*state.player, code), state.banker
                    else:
                        player, banker = state.player, (*state.banker, code)
                    tail = _result(state, nxt, player, banker)
                    if table.auto_confirm and tail[-1].__class__ is _bets_open:
                        # the round closes at once: one new state for card and close
                        new = _replace(state, node=nxt, player=player, banker=banker,
                                       inventory=inventory + shift, phase=_between)
                    else:
                        new = _replace(state, node=nxt, player=player, banker=banker,
                                       inventory=inventory + shift)
                        for e in tail[1:]:
                            new = evolve(new, e)
                    return new, [ev, _prompted(shoe, rnd, prompt), *tail]
            elif phase is _between and table.auto_rounds and not state.carried:
                shoe, rnd = state.shoe, state.round + 1
                new = _replace(
                    state,
                    phase=_in_round,
                    round=rnd,
                    node=NEXT[value],
                    player=(code,),
                    banker=(),
                    inventory=inventory + shift,
                )
                return new, [_started(shoe, rnd), _dealt(shoe, rnd, "player", 1, code,
                                                         inp.orientation)]
    events = decide(state, inp)
    for ev in events:
        state = _EVOLVERS.get(type(ev), _ev_same)(state, ev)
    return state, list(events)


class Shoe:
    """Convenience wrapper: holds the state, applies inputs, returns the events.

    >>> shoe = Shoe(Rules(burn="none"))
    >>> [e.type for e in shoe.apply(I.NewShoe())]
    ['shoe_started', 'bets_open']
    >>> shoe.state.phase
    'between'
    """

    __slots__ = ("state",)

    def __init__(self, rules: Rules | None = None, state: ShoeState | None = None) -> None:
        self.state = state if state is not None else initial_state(rules)

    @property
    def rules(self) -> Rules:
        return self.state.table.rules

    def apply(self, inp: I.Input) -> list[Event]:
        """Decide the events of ``inp``, evolve the state by them, return them."""
        self.state, events = step(self.state, inp)
        return events

    @classmethod
    def from_events(cls, rules: Rules, events: Iterable[DomainEvent]) -> Shoe:
        """A shoe resumed from journaled events."""
        return cls(state=fold(rules, events))
