"""An independent, deliberately simple second statement of the game rules, for tests.

Written from DESIGN.md's rule text and the published paytables (DESIGN.md, "Bets and
payouts"; the insurance rule sheet of issue 8), never from shoe_controller.game: no
import of it here, no shared table, no clever encoding. Slow and plain on purpose, so a
mutant of the fast code under test cannot also change the reference.

>>> deal_round(["7S", "KC", "9D", "5D", "3H", "2C"])
(['7S', '9D'], ['KC', '5D', '3H'])
>>> settle(["7S", "9D"], ["KC", "5D", "3H"])["banker"]
0.95
"""

from __future__ import annotations

from collections.abc import Iterator


def value(code: str) -> int:
    """A=1, 2-9 face value, 10/J/Q/K = 0 (codes like 'TS', 'QH', 'AS')."""
    rank = code[0]
    if rank == "A":
        return 1
    if rank in ("T", "J", "Q", "K"):
        return 0
    return int(rank)


def total(cards: list[str]) -> int:
    """A hand's score: the sum of its values mod 10."""
    s = 0
    for c in cards:
        s += value(c)
    return s % 10


def natural(cards: list[str]) -> bool:
    """8 or 9 on two cards."""
    return len(cards) == 2 and total(cards) in (8, 9)


def banker_draws(banker_total: int, player_third: str | None) -> bool:
    """DESIGN.md: 'If Player stood, Banker draws on 0-5. If Player drew a third card worth
    v, Banker with 0-2 draws; 3 draws unless v=8; 4 draws on v=2-7; 5 on v=4-7; 6 on
    v=6-7; 7 stands.'"""
    if player_third is None:
        return banker_total <= 5
    v = value(player_third)
    if banker_total in (0, 1, 2):
        return True
    if banker_total == 3:
        return v != 8
    if banker_total == 4:
        return v in (2, 3, 4, 5, 6, 7)
    if banker_total == 5:
        return v in (4, 5, 6, 7)
    if banker_total == 6:
        return v in (6, 7)
    return False


def deal_round(cards: list[str] | Iterator[str]) -> tuple[list[str], list[str]]:
    """Deal P, B, P, B then the third cards by the tableau, from ``cards``; return the
    hands. Takes only the cards the round needs."""
    it = iter(cards)
    player = [next(it)]
    banker = [next(it)]
    player.append(next(it))
    banker.append(next(it))
    if natural(player) or natural(banker):
        return player, banker
    third = None
    if total(player) <= 5:  # Player draws on 0-5, stands on 6-7
        third = next(it)
        player.append(third)
    if banker_draws(total(banker), third):
        banker.append(next(it))
    return player, banker


def cards_needed(cards: list[str]) -> int:
    """How many of ``cards`` one round takes."""
    p, b = deal_round(cards)
    return len(p) + len(b)


def winner(player: list[str], banker: list[str]) -> str:
    p, b = total(player), total(banker)
    if p > b:
        return "player"
    if b > p:
        return "banker"
    return "tie"


#: The published default paytable (DESIGN.md), net win per unit.
PLAYER, BANKER_COMMISSION, TIE = 1.0, 0.95, 8.0
BANKER_NO_COMMISSION, BANKER_NO_COMMISSION_SIX = 1.0, 0.5


def settle(player: list[str], banker: list[str], commission: bool = True) -> dict[str, float]:
    """Net result per unit of all 18 bets (win: the table's figure; push 0; loss -1)."""
    w = winner(player, banker)
    pt, bt = total(player), total(banker)
    pn, bn = natural(player), natural(banker)
    cards = len(player) + len(banker)
    out: dict[str, float] = {}

    out["player"] = PLAYER if w == "player" else (0.0 if w == "tie" else -1.0)
    if w == "banker":
        if commission:
            out["banker"] = BANKER_COMMISSION
        elif bt == 6:
            out["banker"] = BANKER_NO_COMMISSION_SIX
        else:
            out["banker"] = BANKER_NO_COMMISSION
    elif w == "tie":
        out["banker"] = 0.0
    else:
        out["banker"] = -1.0
    out["tie"] = TIE if w == "tie" else -1.0

    p_pair = player[0][0] == player[1][0]           # same rank
    b_pair = banker[0][0] == banker[1][0]
    perfect = player[0] == player[1] or banker[0] == banker[1]  # same rank and suit
    out["player_pair"] = 11.0 if p_pair else -1.0
    out["banker_pair"] = 11.0 if b_pair else -1.0
    out["either_pair"] = 5.0 if (p_pair or b_pair) else -1.0
    out["perfect_pair"] = 25.0 if perfect else -1.0
    out["player_natural"] = 3.5 if pn else -1.0
    out["banker_natural"] = 3.5 if bn else -1.0

    margin_pays = {9: 30.0, 8: 10.0, 7: 6.0, 6: 4.0, 5: 2.0, 4: 1.0}

    def bonus(side: str, own_total: int, other_total: int, own_natural: bool) -> float:
        if w == side and own_natural:
            return 1.0                       # natural win 1
        if w == "tie" and (pn or bn):
            return 0.0                       # natural tie push
        if w == side and not own_natural:
            return margin_pays.get(own_total - other_total, -1.0)
        return -1.0

    out["player_bonus"] = bonus("player", pt, bt, pn)
    out["banker_bonus"] = bonus("banker", bt, pt, bn)

    six = w == "banker" and bt == 6
    out["lucky_six"] = (12.0 if len(banker) == 2 else 20.0) if six else -1.0
    out["lucky_six_2"] = 22.0 if six and len(banker) == 2 else -1.0
    out["lucky_six_3"] = 50.0 if six and len(banker) == 3 else -1.0
    seven = w == "player" and pt == 7
    out["lucky_seven"] = (6.0 if len(player) == 2 else 15.0) if seven else -1.0
    out["lucky_seven_2"] = 15.0 if seven and len(player) == 2 else -1.0
    out["lucky_seven_3"] = 30.0 if seven and len(player) == 3 else -1.0
    if seven and bt == 6:
        out["super_lucky_seven"] = {4: 30.0, 5: 40.0, 6: 100.0}[cards]
    else:
        out["super_lucky_seven"] = -1.0
    return out


#: DESIGN.md, bet availability: pairs close after round 60; Either/Perfect Pair,
#: naturals and Lucky bets after 50; bonuses after 40. Player, Banker, Tie: always.
LAST_ROUND = {
    "player_pair": 60, "banker_pair": 60,
    "either_pair": 50, "perfect_pair": 50, "player_natural": 50, "banker_natural": 50,
    "lucky_six": 50, "lucky_six_2": 50, "lucky_six_3": 50,
    "lucky_seven": 50, "lucky_seven_2": 50, "lucky_seven_3": 50, "super_lucky_seven": 50,
    "player_bonus": 40, "banker_bonus": 40,
}
ALL_BETS = ["player", "banker", "tie", "player_pair", "banker_pair", "either_pair",
            "perfect_pair", "player_natural", "banker_natural", "player_bonus",
            "banker_bonus", "lucky_six", "lucky_six_2", "lucky_six_3", "lucky_seven",
            "lucky_seven_2", "lucky_seven_3", "super_lucky_seven"]


def offered(round_number: int) -> set[str]:
    """The bets open on a round (defaults)."""
    return {b for b in ALL_BETS if round_number <= LAST_ROUND.get(b, 10**9)}


def burn_after_indicator(indicator: str) -> int:
    """'the first card is turned and burns that many cards (10/J/Q/K burn 10)'."""
    return value(indicator) or 10


# ----------------------------------------------------------------- insurance (issue 8)

#: (side, stage, player score, banker score, insured event, odds), as the sheet lists them.
INSURANCE_SHEET = [
    ("banker", "2/2", "unrevealed", "7", "player", 2.0),
    ("banker", "2/2", "unrevealed", "8", "player", 7.0),
    ("banker", "2/2", "unrevealed", "9", "tie", 8.0),
    ("banker", "2/2", "0-3", "4", "player", 1.5),
    ("banker", "2/2", "0-4", "5", "player", 2.0),
    ("banker", "2/2", "0-5", "6", "player", 3.0),
    ("banker", "2/2", "0-5", "7", "player", 4.0),
    ("banker", "3/2", "0", "1-6", "tie", 8.0),
    ("banker", "3/2", "1", "2-6", "player", 7.0),
    ("banker", "3/2", "2", "3-6", "player", 4.0),
    ("banker", "3/2", "3", "4", "player", 2.0),
    ("banker", "3/2", "4", "5", "player", 2.0),
    ("player", "2/2", "7", "unrevealed", "banker", 2.0),
    ("player", "2/2", "8", "unrevealed", "banker", 7.0),
    ("player", "2/2", "9", "unrevealed", "tie", 10.0),
    ("player", "2/2", "5", "4", "banker", 2.0),
    ("player", "2/2", "6", "0-5", "banker", 3.0),
    ("player", "2/2", "7", "0-5", "banker", 4.0),
    ("player", "3/2", "4", "0-3", "banker", 1.5),
    ("player", "3/2", "5", "0-4", "banker", 2.0),
    ("player", "3/2", "6", "0-5", "banker", 3.0),
    ("player", "3/2", "7", "0-6", "banker", 4.0),
    ("player", "3/2", "8", "0-6", "banker", 8.0),
    ("player", "3/2", "9", "0-6", "tie", 10.0),
]


def _fits(spec: str, score: int | None) -> bool:
    if spec == "unrevealed":
        return score is None
    if score is None:
        return False
    if "-" in spec:
        lo, hi = spec.split("-")
        return int(lo) <= score <= int(hi)
    return score == int(spec)


def insurance_rows(stage: str, player_score: int | None, banker_score: int | None
                   ) -> list[tuple[str, str, float]]:
    """(side, insures, odds) of the sheet's rows that apply; None = unrevealed."""
    return [(side, insures, odds) for side, st, p, b, insures, odds in INSURANCE_SHEET
            if st == stage and _fits(p, player_score) and _fits(b, banker_score)]


def auto_reveal_offers(player: list[str], banker: list[str]) -> list[tuple[str, str, str, float]]:
    """Offers of a round at a table without reveal buttons (each card counts as shown when
    dealt): after the first four cards and after Player's third card, while a card is
    still to come. (stage, side, insures, odds), in order."""
    out = []
    if len(player) + len(banker) > 4:  # a card came after the first four
        out += [("2/2", *r) for r in insurance_rows("2/2", total(player[:2]),
                                                     total(banker[:2]))]
    if len(player) == 3 and len(banker) == 3:  # Banker's card came after Player's third
        out += [("3/2", *r) for r in insurance_rows("3/2", total(player), total(banker[:2]))]
    return out


def insurance_result(insures: str, odds: float, round_winner: str, void: bool) -> float:
    if void:
        return 0.0
    return odds if insures == round_winner else -1.0
