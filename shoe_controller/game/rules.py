"""Table rules as data: deck count, burn rule, cut-card and misdeal policies, modes,
the paytable and which bets are offered until which round.

Every value has the default the documentation states (docs/config.md); the config file's
``[rules]``, ``[paytable]`` and ``[bet_availability]`` sections decode into these Structs.

>>> r = Rules()
>>> r.decks, r.burn, r.cut_card, r.extra_card, r.commission, r.rounds, r.confirm
(8, 'first_card', 'last_round', 'burn', 'commission', 'auto', 'auto')
>>> r.paytable.tie, r.paytable.banker, r.bet_availability.player_bonus
(8.0, 0.95, 40)
>>> offered_bets(r, 41)[:4]
('player', 'banker', 'tie', 'player_pair')
>>> "player_bonus" in offered_bets(r, 40), "player_bonus" in offered_bets(r, 41)
(True, False)
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from shoe_controller.game.insurance import InsuranceConfig

__all__ = [
    "BET_NAMES",
    "BetAvailability",
    "BurnRule",
    "Paytable",
    "Rules",
    "burn_count",
    "offered_bets",
]

#: Every bet the controller settles, in a stable order (the order of DESIGN.md).
BET_NAMES: Final = (
    "player",
    "banker",
    "tie",
    "player_pair",
    "banker_pair",
    "either_pair",
    "perfect_pair",
    "player_natural",
    "banker_natural",
    "player_bonus",
    "banker_bonus",
    "lucky_six",
    "lucky_six_2",
    "lucky_six_3",
    "lucky_seven",
    "lucky_seven_2",
    "lucky_seven_3",
    "super_lucky_seven",
)

BurnRule = Literal["first_card", "decks", "fixed", "none"]
CutCardPolicy = Literal["last_round", "one_more_round"]
ExtraCardPolicy = Literal["burn", "void", "carry"]
CommissionMode = Literal["commission", "no_commission"]
ButtonMode = Literal["auto", "button"]

Payout = Annotated[float, msgspec.Meta(ge=0, le=10000)]


class Paytable(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Net win per unit staked for every winning line (a loss is always -1, a push 0).

    Defaults are the rule sheets' (DESIGN.md).
    """

    #: Player wins.
    player: Payout = 1.0
    #: Banker win on a commission table (5% commission).
    banker: Payout = 0.95
    #: Banker win on a no-commission table, except with a total of 6 ...
    banker_no_commission: Payout = 1.0
    #: ... which pays this instead (no-commission tables).
    banker_no_commission_six: Payout = 0.5
    #: The round is a tie (Player and Banker bets push).
    tie: Payout = 8.0
    #: Player's / Banker's first two cards are a pair (same rank).
    player_pair: Payout = 11.0
    banker_pair: Payout = 11.0
    #: Either hand's first two cards a pair; paid once even when both are.
    either_pair: Payout = 5.0
    #: Either hand's first two cards the same rank and suit; paid once.
    perfect_pair: Payout = 25.0
    #: The Player hand is a natural (8 or 9 on two cards), whoever wins.
    player_natural: Payout = 3.5
    #: The Banker hand is a natural, whoever wins.
    banker_natural: Payout = 3.5
    #: Player/Banker Bonus: the hand wins with a natural.
    bonus_natural_win: Payout = 1.0
    #: Player/Banker Bonus: both hands naturals of equal total (a push by default).
    bonus_natural_tie: Annotated[float, msgspec.Meta(ge=-1, le=10000)] = 0.0
    #: Player/Banker Bonus: a non-natural win by 9, 8, 7, 6, 5, 4 points.
    bonus_margin_9: Payout = 30.0
    #: (win by 8)
    bonus_margin_8: Payout = 10.0
    bonus_margin_7: Payout = 6.0
    bonus_margin_6: Payout = 4.0
    bonus_margin_5: Payout = 2.0
    bonus_margin_4: Payout = 1.0
    #: Lucky Six: Banker wins with 6, on two cards / on three cards.
    lucky_six_two_cards: Payout = 12.0
    lucky_six_three_cards: Payout = 20.0
    #: Two-card Lucky Six: Banker wins with a two-card 6.
    lucky_six_2: Payout = 22.0
    #: Three-card Lucky Six: Banker wins with a three-card 6.
    lucky_six_3: Payout = 50.0
    #: Lucky Seven: Player wins with 7, on two cards / on three cards.
    lucky_seven_two_cards: Payout = 6.0
    lucky_seven_three_cards: Payout = 15.0
    #: Two-card Lucky Seven: Player wins with a two-card 7.
    lucky_seven_2: Payout = 15.0
    #: Three-card Lucky Seven: Player wins with a three-card 7.
    lucky_seven_3: Payout = 30.0
    #: Super Lucky Seven: Player 7 beats Banker 6, with 4 / 5 / 6 cards in all.
    super_lucky_seven_4: Payout = 30.0
    super_lucky_seven_5: Payout = 40.0
    super_lucky_seven_6: Payout = 100.0


#: Last round of the shoe on which a bet is offered; None (absent): the whole shoe;
#: 0: never. (TOML cannot write "none": leave the key out, or give a number larger than
#: any shoe, e.g. 999.)
LastRound = Annotated[int, msgspec.Meta(ge=0, le=1000)] | None


class BetAvailability(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The last round of a shoe on which each bet is offered (absent = every round, 0 = the
    bet is not offered at this table, 999 = every round). Defaults from the rule sheets:
    pairs close after round 60; Either/Perfect Pair, naturals and Lucky bets after 50;
    bonuses after 40."""

    player: LastRound = None
    banker: LastRound = None
    tie: LastRound = None
    player_pair: LastRound = 60
    banker_pair: LastRound = 60
    either_pair: LastRound = 50
    perfect_pair: LastRound = 50
    player_natural: LastRound = 50
    banker_natural: LastRound = 50
    player_bonus: LastRound = 40
    banker_bonus: LastRound = 40
    lucky_six: LastRound = 50
    lucky_six_2: LastRound = 50
    lucky_six_3: LastRound = 50
    lucky_seven: LastRound = 50
    lucky_seven_2: LastRound = 50
    lucky_seven_3: LastRound = 50
    super_lucky_seven: LastRound = 50


class Rules(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How this table plays. Frozen: a shoe's rules never change while it is dealt."""

    #: Decks in the shoe (52 cards each, no jokers).
    decks: Annotated[int, msgspec.Meta(ge=1, le=16)] = 8
    #: first_card: the first card is turned and burns its value (A=1, 10/J/Q/K=10);
    #: decks: burn as many cards as decks; fixed: burn ``burn_cards``; none: no burn.
    burn: BurnRule = "first_card"
    #: Cards burned under ``burn = "fixed"``.
    burn_cards: Annotated[int, msgspec.Meta(ge=1, le=8)] = 1
    #: last_round: the round in progress when the cut card shows (or the next one if it
    #: shows between rounds) is the last; one_more_round: finish it and deal one more.
    cut_card: CutCardPolicy = "last_round"
    #: A card drawn when none is due: burn (discard, the round stands), void (the round is
    #: cancelled, bets refunded) or carry (it becomes the first card of the next round).
    extra_card: ExtraCardPolicy = "burn"
    #: commission: Banker pays 0.95; no_commission: 1, or 0.5 on a Banker win with 6.
    commission: CommissionMode = "commission"
    #: auto: the next card after a finished round starts the next one; button: the dealer
    #: opens each round (NEW).
    rounds: ButtonMode = "auto"
    #: auto: a complete round's result is confirmed at once; button: the dealer confirms.
    confirm: ButtonMode = "auto"
    paytable: Paytable = msgspec.field(default_factory=Paytable)
    bet_availability: BetAvailability = msgspec.field(default_factory=BetAvailability)
    insurance: InsuranceConfig = msgspec.field(default_factory=InsuranceConfig)


def burn_count(rules: Rules, indicator_value: int | None = None) -> int:
    """How many cards to burn after the shoe starts.

    For ``first_card`` pass the indicator card's baccarat value (0 for 10/J/Q/K, which
    burn 10); the indicator itself is not counted.

    >>> burn_count(Rules(), 0), burn_count(Rules(), 1), burn_count(Rules(), 9)
    (10, 1, 9)
    >>> burn_count(Rules(burn="decks", decks=6)), burn_count(Rules(burn="fixed", burn_cards=3))
    (6, 3)
    >>> burn_count(Rules(burn="none"))
    0
    """
    if rules.burn == "first_card":
        if indicator_value is None:
            raise ValueError("the first_card burn rule needs the indicator card's value")
        return indicator_value or 10
    if rules.burn == "decks":
        return rules.decks
    if rules.burn == "fixed":
        return rules.burn_cards
    return 0


def offered_bets(rules: Rules, round_number: int) -> tuple[str, ...]:
    """Names of the bets offered on ``round_number`` (1-based) of a shoe, in BET_NAMES order.

    >>> len(offered_bets(Rules(), 1)), len(offered_bets(Rules(), 61))
    (18, 3)
    >>> offered_bets(Rules(bet_availability=BetAvailability(tie=0)), 1)[:3]
    ('player', 'banker', 'player_pair')
    """
    avail = rules.bet_availability
    out = []
    for name in BET_NAMES:
        last = getattr(avail, name)
        if last is None or round_number <= last:
            out.append(name)
    return tuple(out)
