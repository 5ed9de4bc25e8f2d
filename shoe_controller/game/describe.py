"""One readable line per domain event (replay output, logs).

>>> from shoe_controller.game.events import RoundResult
>>> print(describe(RoundResult(shoe=1, round=12, player=("7S", "9D", "3H"),
...     banker=("KC", "5D"), player_total=9, banker_total=5, winner="player",
...     natural=False, player_pair=False, banker_pair=False, settlement={})))
round 12  P 7S 9D 3H = 9  B KC 5D = 5  PLAYER
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shoe_controller.game import events as E

__all__ = ["describe"]


def _rnd(r: int | None) -> str:
    return f"round {r}  " if r is not None else ""


def _where(e: Any) -> str:
    """ "round R  " where the event has a round, else "shoe S  "."""
    return f"round {e.round}  " if e.round is not None else f"shoe {e.shoe}  "


def _result(e: E.RoundResult) -> str:
    flags = [
        f
        for f, on in (
            ("natural", e.natural),
            ("player pair", e.player_pair),
            ("banker pair", e.banker_pair),
        )
        if on
    ]
    line = (
        f"round {e.round}  P {' '.join(e.player)} = {e.player_total}  "
        f"B {' '.join(e.banker)} = {e.banker_total}  {e.winner.upper()}"
    )
    if flags:
        line += "  (" + ", ".join(flags) + ")"
    for ins in e.insurance:
        line += f"  insurance #{ins.offer} {ins.side} vs {ins.insures}: {ins.outcome} {ins.net:+g}"
    return line


def _dealt(e: E.CardDealt) -> str:
    o = {"up": " (upright)", "down": " (upside down)"}.get(e.orientation or "", "")
    return f"round {e.round}  {e.hand} card {e.position}: {e.card}{o}"


_FORMATS: dict[type, Callable[[Any], str]] = {
    E.ShoeStarted: lambda e: f"shoe {e.shoe}  started ({e.decks} decks)",
    E.BurnIndicator: lambda e: f"shoe {e.shoe}  burn indicator {e.card}: burn {e.burn_count}",
    E.CardBurned: lambda e: f"shoe {e.shoe}  burned {e.card or '(unread card)'}",
    E.RoundStarted: lambda e: f"round {e.round}  started",
    E.CardDealt: _dealt,
    E.DrawPrompt: lambda e: f"round {e.round}  {e.prompt.replace('_', ' ')}",
    E.RoundResult: _result,
    E.ResultConfirmed: lambda e: f"round {e.round}  result confirmed",
    E.CutCard: lambda e: (
        f"round {e.round}  CUT CARD (mid-round)"
        if e.round is not None
        else f"shoe {e.shoe}  CUT CARD (between rounds)"
    ),
    E.LastRound: lambda e: f"round {e.round}  will be the last round of shoe {e.shoe}",
    E.ShoeEnded: lambda e: f"shoe {e.shoe}  ended after {e.rounds} rounds ({e.reason})",
    E.Misdeal: lambda e: (
        f"{_where(e)}MISDEAL {e.kind.replace('_', ' ')}: "
        f"{e.card or '(unread card)'} -> {e.policy}"
    ),
    E.RoundPaused: lambda e: f"{_where(e)}PAUSED ({e.reason})",
    E.RoundResumed: lambda e: f"{_where(e)}resumed",
    E.RoundVoided: lambda e: f"round {e.round}  VOIDED ({e.reason}): all bets refunded",
    E.IntegrityAlert: lambda e: (
        f"{_where(e)}ALERT {e.kind}"
        + ("  " + " ".join(f"{k}={v}" for k, v in sorted(e.evidence.items())) if e.evidence
           else "")
    ),
    E.BetsOpen: lambda e: f"round {e.round}  bets open: {' '.join(e.bets)}",
    E.Fault: lambda e: f"{_where(e)}FAULT {e.kind}" + (f": {e.detail}" if e.detail else ""),
    E.InsuranceOffer: lambda e: (
        f"round {e.round}  insurance #{e.offer} ({e.stage}): {e.side} bet insured against "
        f"{e.insures} at {e.odds:g}"
    ),
    E.HandRevealed: lambda e: f"round {e.round}  {e.hand} hand revealed ({e.cards} cards)",
    E.InsuranceVoided: lambda e: f"round {e.round}  INSURANCE VOID ({e.reason}): refunded",
    E.InsuranceClosed: lambda e: (
        f"round {e.round}  insurance closed ({e.reason}): "
        + " ".join(f"#{o}" for o in e.offers)
    ),
}


def describe(event: E.DomainEvent) -> str:
    """A one-line, human description of ``event``.

    >>> from shoe_controller.game.events import Misdeal
    >>> describe(Misdeal(shoe=1, round=4, kind="extra_card", card="7H", policy="burn"))
    'round 4  MISDEAL extra card: 7H -> burn'
    """
    fmt = _FORMATS.get(type(event))
    if fmt is not None:
        return fmt(event)
    data = E.event_to_dict(event)
    kind = data.pop("type")
    data.pop("shoe", None)
    rnd = data.pop("round", None)
    if kind == "shoe_analysis":
        he = data.get("house_edge", {})
        best = sorted(he.items(), key=lambda kv: kv[1])[:3]
        return f"{_rnd(rnd)}analysis: lowest house edge " + ", ".join(
            f"{k} {v:.4%}" for k, v in best
        )
    return f"{_rnd(rnd)}{kind} " + " ".join(f"{k}={v}" for k, v in data.items())
