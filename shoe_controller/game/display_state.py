"""The public table display state: a pure projection folded over RELEASED domain events.

The publisher decides which journaled events may be shown (under ``on_result`` nothing of
a round leaves before the dealer confirms it) and folds only those through
:func:`project`; :func:`to_payload` gives the JSON retained on ``shoe/<table>/display/
state`` (schema: ``shoe_controller/publish/schemas/display_state.schema.json``). Because
it is a fold, the display state can always be rebuilt from the journal and re-sent.

What it never shows: burn card faces, integrity alerts, faults' details, analytics.

Events may be msgspec Structs (``shoe_controller.game.events``) or their dict form; an
event type this module does not know is ignored, so new event types never break a
display.

>>> s = DisplayState(table="T1")
>>> for ev in [
...     {"type": "shoe_started", "shoe": 1, "decks": 8},
...     {"type": "round_started", "shoe": 1, "round": 1},
...     {"type": "card_dealt", "shoe": 1, "round": 1, "hand": "player", "position": 1,
...      "card": "9H"},
...     {"type": "card_dealt", "shoe": 1, "round": 1, "hand": "banker", "position": 1,
...      "card": "KD"},
... ]:
...     s = project(s, ev)
>>> s.phase, s.player_cards, score(s.player_cards), s.cards_out
('dealing', ('9H',), 9, 2)
>>> p = to_payload(s)
>>> p["player"], p["shoe_progress"]
({'cards': ['9H'], 'score': 9}, {'cards_dealt': 2, 'cards_total': 416})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Final

import msgspec

from shoe_controller.game.cards import parse_card
from shoe_controller.game.roads import RoadResult, build_roads, roads_to_dict

__all__ = [
    "PAYLOAD_VERSION",
    "PHASES",
    "DisplayState",
    "MisdealNotice",
    "ResultBanner",
    "Statistics",
    "fold",
    "project",
    "roads_payload",
    "score",
    "to_payload",
]

#: Bumped when the payload changes incompatibly; the page checks it.
PAYLOAD_VERSION: Final = 1

#: What the table is doing, as the display tells players.
PHASES: Final = (
    "no_shoe",     # nothing released yet
    "new_shoe",    # a shoe was started (burn in progress), no round yet
    "dealing",     # a round is open: cards appear as they are released
    "result",      # the round's result is shown
    "voided",      # the round was cancelled: all bets refunded
    "shoe_ended",  # the shoe is finished
)


class ResultBanner(msgspec.Struct, frozen=True):
    """The result of the round just finished, as the banner shows it."""

    round: int
    winner: str
    player_total: int
    banker_total: int
    natural: bool
    player_pair: bool
    banker_pair: bool
    player_natural: bool
    banker_natural: bool
    confirmed: bool = False


class MisdealNotice(msgspec.Struct, frozen=True):
    """A misdeal as the table display tells it: the round, what happened, what is done."""

    round: int | None
    kind: str
    policy: str


class Statistics(msgspec.Struct, frozen=True):
    """Counts over the confirmed rounds of the current shoe."""

    rounds: int = 0
    banker: int = 0
    player: int = 0
    tie: int = 0
    player_pair: int = 0
    banker_pair: int = 0
    natural: int = 0
    player_natural: int = 0
    banker_natural: int = 0

    def add(self, r: ResultBanner) -> Statistics:
        return Statistics(
            rounds=self.rounds + 1,
            banker=self.banker + (r.winner == "banker"),
            player=self.player + (r.winner == "player"),
            tie=self.tie + (r.winner == "tie"),
            player_pair=self.player_pair + r.player_pair,
            banker_pair=self.banker_pair + r.banker_pair,
            natural=self.natural + r.natural,
            player_natural=self.player_natural + r.player_natural,
            banker_natural=self.banker_natural + r.banker_natural,
        )


class DisplayState(msgspec.Struct, frozen=True):
    """Everything the public display shows. Immutable: :func:`project` returns a new one."""

    table: str = ""
    shoe: int | None = None
    round: int | None = None
    phase: str = "no_shoe"
    decks: int | None = None
    #: the round the cards and result shown belong to: under on_result release the next
    #: round starts (no more bets) while its cards are still held back, and the table
    #: keeps showing the last result until they are released
    cards_round: int | None = None
    player_cards: tuple[str, ...] = ()
    banker_cards: tuple[str, ...] = ()
    prompt: str | None = None
    result: ResultBanner | None = None
    #: confirmed results of this shoe, in order (what the roads are drawn from; the roads
    #: themselves are computed when a payload is made, so folding a long journal is cheap)
    results: tuple[RoadResult, ...] = ()
    statistics: Statistics = msgspec.field(default_factory=Statistics)
    #: cards taken out of the shoe: burn indicator, burned, dealt and discarded cards
    cards_out: int = 0
    cut_card: bool = False
    last_round: bool = False
    last_round_number: int | None = None
    bets_open: bool = False
    bets_round: int | None = None
    bets: tuple[str, ...] = ()
    paused: bool = False
    #: why play stopped: the ``round_paused`` reason (a short code such as
    #: ``unreadable_card``, ``foreign_card``, ``link_down``, ``supervisor``); the page
    #: shows known codes in the players' language and a plain "please wait" for others
    pause_reason: str | None = None
    #: the last misdeal of this round: what happened (``kind``) and the house policy that
    #: applied (``policy``: burn, void, carry), never the card's face
    misdeal: MisdealNotice | None = None
    #: a short public message ("Round 12 void: refunded") until the next round starts
    notice: str | None = None


def score(cards: Iterable[str]) -> int | None:
    """Baccarat score of card codes (None for no card).

    >>> score(["9H", "5D"]), score(["KS", "TC"]), score([])
    (4, 0, None)
    """
    values = [parse_card(c).value for c in cards]
    return sum(values) % 10 if values else None


def _as_dict(event: object) -> Mapping[str, Any]:
    if isinstance(event, Mapping):
        return event
    # a tagged msgspec Struct: to_builtins includes its ``type`` tag
    out = msgspec.to_builtins(event)
    if not isinstance(out, dict):
        raise TypeError(f"not a domain event: {event!r}")
    return out


def _commit(s: DisplayState) -> DisplayState:
    """Make the shown result final: into the roads and the statistics."""
    r = s.result
    if r is None or r.confirmed:
        return s
    results = (*s.results, RoadResult(r.winner, r.player_pair, r.banker_pair,  # type: ignore[arg-type]
                                      r.natural))
    return msgspec.structs.replace(
        s,
        result=msgspec.structs.replace(r, confirmed=True),
        results=results,
        statistics=s.statistics.add(r),
    )


def _with_card(cards: tuple[str, ...], position: int, card: str) -> tuple[str, ...]:
    # positions are 1..3; a repeated (re-sent) event replaces, never duplicates
    out = list(cards)
    if 1 <= position <= len(out):
        out[position - 1] = card
    else:
        out.append(card)
    return tuple(out)


def _new_round(s: DisplayState, rnd: int | None) -> DisplayState:
    """Round ``rnd`` started: no more bets. What was shown stays until its cards arrive."""
    s = _commit(s)
    return msgspec.structs.replace(
        s, round=rnd, phase="dealing", prompt=None, notice=None, paused=False,
        pause_reason=None, misdeal=None, bets_open=False,
    )


def _cards_of(s: DisplayState, rnd: int | None) -> DisplayState:
    """Show round ``rnd``'s cards from now on (clearing the previous round's)."""
    if s.cards_round == rnd and s.round == rnd:
        return s
    if s.round != rnd:
        s = _new_round(s, rnd)
    s = _commit(s)
    return msgspec.structs.replace(s, cards_round=rnd, player_cards=(), banker_cards=(),
                                   result=None, phase="dealing")


def project(state: DisplayState, event: object) -> DisplayState:
    """Fold one released domain event into the display state.

    A result shown by ``round_result`` enters the roads and statistics when the dealer
    confirms it (``result_confirmed``), or when the game moves on without a confirmation
    (the next round, the end of the shoe); a round voided before that never does.

    >>> s = fold([{"type": "shoe_started", "shoe": 1, "decks": 8},
    ...           {"type": "round_result", "shoe": 1, "round": 1, "player": ["9H", "KD"],
    ...            "banker": ["2C", "3C"], "player_total": 9, "banker_total": 5,
    ...            "winner": "player", "natural": True, "player_pair": False,
    ...            "banker_pair": False}], table="T1")
    >>> s.result.winner, s.statistics.rounds
    ('player', 0)
    >>> s = project(s, {"type": "result_confirmed", "shoe": 1, "round": 1})
    >>> s.statistics.player, s.statistics.player_natural, [r.outcome for r in s.results]
    (1, 1, ['player'])
    """
    ev = _as_dict(event)
    kind = ev.get("type")
    s = state

    if kind == "shoe_started":
        return DisplayState(table=s.table, shoe=ev.get("shoe"), phase="new_shoe",
                            decks=ev.get("decks"))
    if kind in ("burn_indicator", "card_burned"):
        return msgspec.structs.replace(s, cards_out=s.cards_out + 1)
    if kind == "round_started":
        return _new_round(s, ev.get("round"))
    if kind == "bets_open":
        return msgspec.structs.replace(s, bets_open=True, bets_round=ev.get("round"),
                                       bets=tuple(ev.get("bets") or ()))
    if kind == "card_dealt":
        rnd = ev.get("round")
        if s.result is not None and s.result.round == rnd:
            return s  # re-sent after the result: the result already carries the cards
        s = _cards_of(s, rnd)
        hand = ev.get("hand")
        position = int(ev.get("position") or 0)
        card = str(ev.get("card"))
        before = len(s.player_cards) + len(s.banker_cards)
        if hand == "player":
            s = msgspec.structs.replace(
                s, player_cards=_with_card(s.player_cards, position, card))
        else:
            s = msgspec.structs.replace(
                s, banker_cards=_with_card(s.banker_cards, position, card))
        # a re-sent card replaces its position: only a card new to the round left the shoe
        grown = len(s.player_cards) + len(s.banker_cards) - before
        return msgspec.structs.replace(s, cards_out=s.cards_out + grown, bets_open=False)
    if kind == "draw_prompt":
        return msgspec.structs.replace(s, prompt=ev.get("prompt"))
    if kind == "round_result":
        if s.result is not None and s.result.round == ev.get("round"):
            return s  # re-sent: already shown
        if s.result is not None and not s.result.confirmed:
            s = _commit(s)  # an earlier round's result was never confirmed: keep it
        player = tuple(ev.get("player") or ())
        banker = tuple(ev.get("banker") or ())
        pt, bt = int(ev["player_total"]), int(ev["banker_total"])
        rnd = ev.get("round")
        # count the round's cards not already counted one by one as card_dealt
        shown = len(s.player_cards) + len(s.banker_cards) if s.cards_round == rnd else 0
        s = msgspec.structs.replace(
            s, cards_out=s.cards_out + max(0, len(player) + len(banker) - shown))
        banner = ResultBanner(
            round=int(ev.get("round") or 0),
            winner=str(ev["winner"]),
            player_total=pt,
            banker_total=bt,
            natural=bool(ev.get("natural")),
            player_pair=bool(ev.get("player_pair")),
            banker_pair=bool(ev.get("banker_pair")),
            player_natural=len(player) == 2 and pt >= 8,
            banker_natural=len(banker) == 2 and bt >= 8,
        )
        return msgspec.structs.replace(
            s, round=rnd, cards_round=rnd, phase="result", player_cards=player,
            banker_cards=banker, prompt=None, result=banner, bets_open=False,
        )
    if kind == "result_confirmed":
        if s.result is not None and s.result.round == ev.get("round"):
            return _commit(s)
        return s
    if kind == "round_voided":
        rnd = ev.get("round")
        if s.result is not None and s.result.round != rnd:
            s = _commit(s)  # an earlier round's result stands; this round's never shows
        return msgspec.structs.replace(
            s, round=rnd, cards_round=rnd, phase="voided", prompt=None, paused=False,
            pause_reason=None, player_cards=(), banker_cards=(), result=None,
            notice=f"Round {rnd} void: all bets refunded",
        )
    if kind == "round_paused":
        return msgspec.structs.replace(s, paused=True,
                                       pause_reason=str(ev.get("reason") or "") or None)
    if kind == "round_resumed":
        return msgspec.structs.replace(s, paused=False, pause_reason=None)
    if kind == "misdeal":
        policy = ev.get("policy")
        # a carried card is dealt again later (as card_dealt): count it then
        out = s.cards_out + (policy != "carry")
        notice = MisdealNotice(ev.get("round"), str(ev.get("kind") or ""), str(policy or ""))
        return msgspec.structs.replace(s, cards_out=out, notice="Misdeal", misdeal=notice)
    if kind == "cut_card":
        return msgspec.structs.replace(s, cut_card=True)
    if kind == "last_round":
        return msgspec.structs.replace(s, last_round=True, last_round_number=ev.get("round"))
    if kind == "shoe_ended":
        s = _commit(s)
        return msgspec.structs.replace(s, phase="shoe_ended", prompt=None, bets_open=False,
                                       paused=False, pause_reason=None)
    return s


def fold(events: Iterable[object], table: str = "") -> DisplayState:
    """The display state after ``events`` (a fresh state for ``table`` first).

    >>> fold([]).phase
    'no_shoe'
    """
    s = DisplayState(table=table)
    for ev in events:
        s = project(s, ev)
    return s


@lru_cache(maxsize=8)
def roads_payload(results: tuple[RoadResult, ...]) -> dict[str, Any]:
    """The roads of ``results`` as JSON-ready data, cached: a payload is made per released
    card under per_card release, the roads change once per round. Do not mutate the result.

    >>> roads_payload(())["big_road"]
    []
    """
    return roads_to_dict(build_roads(results))


def to_payload(state: DisplayState) -> dict[str, Any]:
    """The JSON-ready retained payload (see ``display_state.schema.json``).

    >>> p = to_payload(DisplayState(table="T1"))
    >>> p["version"], p["table"], p["phase"], p["result"], p["roads"]["big_road"]
    (1, 'T1', 'no_shoe', None, [])
    """
    s = state
    roads = dict(roads_payload(s.results))
    ask = roads.pop("ask")
    return {
        "version": PAYLOAD_VERSION,
        "table": s.table,
        "shoe": s.shoe,
        "round": s.round,
        "cards_round": s.cards_round,
        "phase": s.phase,
        "paused": s.paused,
        "pause_reason": s.pause_reason if s.paused else None,
        "notice": s.notice,
        "misdeal": msgspec.to_builtins(s.misdeal) if s.misdeal is not None else None,
        "player": {"cards": list(s.player_cards), "score": score(s.player_cards)},
        "banker": {"cards": list(s.banker_cards), "score": score(s.banker_cards)},
        "prompt": s.prompt,
        "result": msgspec.to_builtins(s.result) if s.result is not None else None,
        "roads": roads,
        "ask": ask,
        "statistics": msgspec.to_builtins(s.statistics),
        "shoe_progress": {
            "cards_dealt": s.cards_out,
            "cards_total": s.decks * 52 if s.decks else None,
        },
        "cut_card": s.cut_card,
        "last_round": s.last_round,
        "last_round_number": s.last_round_number,
        "bets_open": s.bets_open,
        "bets_round": s.bets_round if s.bets_open else None,
        "bets": list(s.bets) if s.bets_open else [],
    }
