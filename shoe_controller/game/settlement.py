"""Settlement of every bet of DESIGN.md, driven by the paytable data.

:func:`settle` is the readable statement: given what decides the bets (a round's
:class:`~shoe_controller.game.round.Outcome` plus the pair facts, which need ranks and
suits), it returns the net result per unit staked of every bet: the paytable's figure
for a win, ``0.0`` for a push, ``-1.0`` for a loss. :class:`Settler` memoises it per
table: a shoe has only a few thousand distinct outcomes, so each finished round costs
one dictionary lookup.

>>> from shoe_controller.game.round import Outcome
>>> from shoe_controller.game.rules import Paytable
>>> o = Outcome(7, 6, 2, 3, "player", False, False)       # Player 7 beats Banker 6
>>> s = settle(o, Pairs(), Paytable(), "commission")
>>> s["player"], s["banker"], s["tie"], s["lucky_seven"], s["super_lucky_seven"]
(1.0, -1.0, -1.0, 6.0, 40.0)
>>> settle(Outcome(4, 6, 3, 3, "banker", False, False), Pairs(), Paytable(), "no_commission")[
...     "banker"]
0.5
"""

from __future__ import annotations

from typing import Final, NamedTuple

from shoe_controller.game.round import OUTCOME, Outcome
from shoe_controller.game.rules import BET_NAMES, CommissionMode, Paytable, Rules, offered_bets

__all__ = ["LOSS", "PUSH", "Pairs", "Settler", "pairs_of", "settle"]

LOSS: Final = -1.0
PUSH: Final = 0.0


class Pairs(NamedTuple):
    """Facts about the first two cards of each hand that decide the pair bets."""

    player_pair: bool = False
    banker_pair: bool = False
    #: Either hand's first two cards are the same rank *and* suit.
    perfect: bool = False

    @property
    def code(self) -> int:
        """A small int (0-7) for table keys."""
        return self.player_pair | self.banker_pair << 1 | self.perfect << 2


def pairs_of(player: tuple[str, ...] | list[str], banker: tuple[str, ...] | list[str]) -> Pairs:
    """Pair facts from card codes in deal order (canonical codes: rank char + suit).

    >>> pairs_of(["QH", "QS"], ["4C", "4C", "2D"])
    Pairs(player_pair=True, banker_pair=True, perfect=True)
    >>> pairs_of(["QH", "KH"], ["4C", "5C"])
    Pairs(player_pair=False, banker_pair=False, perfect=False)
    """
    p0, p1, b0, b1 = player[0], player[1], banker[0], banker[1]
    return Pairs(p0[0] == p1[0], b0[0] == b1[0], p0 == p1 or b0 == b1)


def _bonus(won: bool, natural: bool, tie: bool, margin: int, pt: Paytable) -> float:
    if won and natural:
        return pt.bonus_natural_win
    if tie and natural:
        return pt.bonus_natural_tie
    if won and margin >= 4:
        return (
            pt.bonus_margin_4,
            pt.bonus_margin_5,
            pt.bonus_margin_6,
            pt.bonus_margin_7,
            pt.bonus_margin_8,
            pt.bonus_margin_9,
        )[margin - 4]
    return LOSS


def settle(
    outcome: Outcome, pairs: Pairs, paytable: Paytable, commission: CommissionMode
) -> dict[str, float]:
    """Net result per unit of every bet in BET_NAMES for one finished round.

    >>> from shoe_controller.game.round import Outcome
    >>> tie = settle(Outcome(8, 8, 2, 2, "tie", True, True), Pairs(), Paytable(), "commission")
    >>> tie["player"], tie["banker"], tie["tie"], tie["player_bonus"], tie["player_natural"]
    (0.0, 0.0, 8.0, 0.0, 3.5)
    """
    pt = paytable
    pt_total, bt_total = outcome.player_total, outcome.banker_total
    winner = outcome.winner
    p_win, b_win, tie = winner == "player", winner == "banker", winner == "tie"
    natural = outcome.player_natural or outcome.banker_natural
    n_cards = outcome.player_cards + outcome.banker_cards

    if b_win:
        if commission == "commission":
            banker = pt.banker
        else:
            banker = pt.banker_no_commission_six if bt_total == 6 else pt.banker_no_commission
    else:
        banker = PUSH if tie else LOSS

    b6 = b_win and bt_total == 6
    p7 = p_win and pt_total == 7
    two_b, two_p = outcome.banker_cards == 2, outcome.player_cards == 2
    out = {
        "player": pt.player if p_win else PUSH if tie else LOSS,
        "banker": banker,
        "tie": pt.tie if tie else LOSS,
        "player_pair": pt.player_pair if pairs.player_pair else LOSS,
        "banker_pair": pt.banker_pair if pairs.banker_pair else LOSS,
        "either_pair": pt.either_pair if pairs.player_pair or pairs.banker_pair else LOSS,
        "perfect_pair": pt.perfect_pair if pairs.perfect else LOSS,
        "player_natural": pt.player_natural if outcome.player_natural else LOSS,
        "banker_natural": pt.banker_natural if outcome.banker_natural else LOSS,
        "player_bonus": _bonus(p_win, natural, tie, pt_total - bt_total, pt),
        "banker_bonus": _bonus(b_win, natural, tie, bt_total - pt_total, pt),
        "lucky_six": (pt.lucky_six_two_cards if two_b else pt.lucky_six_three_cards)
        if b6
        else LOSS,
        "lucky_six_2": pt.lucky_six_2 if b6 and two_b else LOSS,
        "lucky_six_3": pt.lucky_six_3 if b6 and not two_b else LOSS,
        "lucky_seven": (pt.lucky_seven_two_cards if two_p else pt.lucky_seven_three_cards)
        if p7
        else LOSS,
        "lucky_seven_2": pt.lucky_seven_2 if p7 and two_p else LOSS,
        "lucky_seven_3": pt.lucky_seven_3 if p7 and not two_p else LOSS,
        "super_lucky_seven": (
            pt.super_lucky_seven_4,
            pt.super_lucky_seven_5,
            pt.super_lucky_seven_6,
        )[n_cards - 4]
        if p7 and bt_total == 6
        else LOSS,
    }
    assert tuple(out) == BET_NAMES
    return {k: float(v) for k, v in out.items()}


class Settler:
    """Settlement for one table's rules, memoised on the few facts that decide it.

    The returned dicts are shared between rounds with the same facts: treat them as
    read-only (events are immutable values; decoding an event gives a fresh dict).

    >>> from shoe_controller.game.rules import Rules
    >>> from shoe_controller.game import round as rnd
    >>> node = rnd.START
    >>> for v in (9, 1, 0, 2):
    ...     node = rnd.deal(node, v)
    >>> s = Settler(Rules())
    >>> r = s.settle(node, Pairs(), 1)
    >>> r["player"], r["player_bonus"], r is s.settle(node, Pairs(), 1)
    (1.0, 1.0, True)
    >>> "player_bonus" in s.settle(node, Pairs(), 41)
    False
    """

    __slots__ = ("_tables", "by_round", "offered_by_round", "rules")

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        #: per round number: the bets offered, and the memo of their settlements
        #: (a list indexed by ``node * 8 + pairs code``, shared by rounds offering the
        #: same bets)
        self.offered_by_round: list[tuple[str, ...]] = []
        self.by_round: list[list[dict[str, float] | None]] = []
        self._tables: dict[tuple[str, ...], list[dict[str, float] | None]] = {}

    def _extend(self, round_number: int) -> None:
        while len(self.offered_by_round) <= round_number:
            bets = offered_bets(self.rules, len(self.offered_by_round))
            self.offered_by_round.append(bets)
            table = self._tables.get(bets)
            if table is None:
                table = self._tables[bets] = [None] * (len(OUTCOME) * 8)
            self.by_round.append(table)

    def offered(self, round_number: int) -> tuple[str, ...]:
        """Bets offered on a round (memoised)."""
        if round_number >= len(self.offered_by_round):
            self._extend(round_number)
        return self.offered_by_round[round_number]

    def settle(self, node: int, pairs: Pairs | int, round_number: int) -> dict[str, float]:
        """Settlement of the offered bets of a round that ended at ``node``.

        ``pairs`` is a :class:`Pairs` or its ``code``.
        """
        code = pairs if pairs.__class__ is int else pairs.code  # type: ignore[union-attr]
        if round_number >= len(self.by_round):
            self._extend(round_number)
        table = self.by_round[round_number]
        hit = table[node * 8 + code]
        if hit is None:
            outcome = OUTCOME[node]
            if outcome is None:
                raise ValueError("cannot settle an incomplete round")
            facts = Pairs(bool(code & 1), bool(code & 2), bool(code & 4))
            full = settle(outcome, facts, self.rules.paytable, self.rules.commission)
            hit = table[node * 8 + code] = {b: full[b] for b in self.offered_by_round[round_number]}
        return hit
