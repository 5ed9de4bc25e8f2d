"""The replay text format: a recorded shoe as whitespace-separated tokens (pure parser).

Tokens (case-insensitive; ``#`` starts a comment to the end of the line):

- a card: rank ``A 2-9 T 10 J Q K`` + suit ``S H D C`` (``TS``, ``10s``, ``qh``), with an
  optional orientation suffix: ``^`` read upright, ``v`` read upside down (``QH^``,
  ``QHv``);
- ``CUT`` the cut card passes; ``SHOE`` a new (shuffled) shoe begins;
- ``NEW`` the dealer opens a round; ``RESULT`` the dealer confirms the result;
- ``PAUSE``, ``RESUME``, ``VOID`` supervisor actions;
- ``REVEAL_P``, ``REVEAL_B`` the dealer reveals Player's / Banker's hand (insurance);
  ``VOID_INSURANCE`` the supervisor voids the round's insurance bets.

Everything is parsed before anything is run, so a bad token stops a replay before any
output: :class:`ReplayParseError` names the token, its 1-based number in the input, and
its line and column.

>>> [str(i) for i, _ in parse_replay("SHOE  9h 10s^ # burn\\n qhv CUT")]
['NewShoe()', "CardSeen(card=Card('9H'), orientation=None, source='replay')", \
"CardSeen(card=Card('TS'), orientation='up', source='replay')", \
"CardSeen(card=Card('QH'), orientation='down', source='replay')", 'CutCardSeen()']
>>> parse_replay("AS\\n  ZZ")
Traceback (most recent call last):
...
shoe_controller.game.replay_text.ReplayParseError: token 2 'ZZ' (line 2, column 3): \
not a card or keyword: ...
"""

from __future__ import annotations

from typing import Final, NamedTuple

from shoe_controller.game.cards import CardParseError, parse_card
from shoe_controller.game.inputs import (
    CardSeen,
    ConfirmResult,
    CutCardSeen,
    Input,
    NewRound,
    NewShoe,
    Pause,
    Resume,
    Reveal,
    Void,
    VoidInsurance,
)

__all__ = ["KEYWORDS", "ReplayParseError", "Token", "parse_replay", "replay_inputs"]

#: keyword -> the input it stands for
KEYWORDS: Final[dict[str, Input]] = {
    "CUT": CutCardSeen(),
    "SHOE": NewShoe(),
    "NEW": NewRound(),
    "RESULT": ConfirmResult(),
    "PAUSE": Pause("supervisor"),
    "RESUME": Resume(),
    "VOID": Void("supervisor"),
    "REVEAL_P": Reveal("player"),
    "REVEAL_B": Reveal("banker"),
    "VOID_INSURANCE": VoidInsurance("supervisor"),
}

_ORIENTATION: Final = {"^": "up", "V": "down"}


class Token(NamedTuple):
    """Where a token was: its text, 1-based number in the input, line and column."""

    text: str
    number: int
    line: int
    column: int


class ReplayParseError(ValueError):
    """A token that is neither a card nor a keyword, with where it was."""

    def __init__(self, token: Token, problem: str) -> None:
        self.token = token
        self.problem = problem
        super().__init__(
            f"token {token.number} {token.text!r} (line {token.line}, column {token.column}): "
            f"{problem}"
        )


def _tokens(text: str):
    number = 0
    for line_no, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0]
        col = 0
        for part in body.split():
            col = body.index(part, col)
            number += 1
            yield Token(part, number, line_no, col + 1)
            col += len(part)


def _parse_token(tok: Token) -> Input:
    word = tok.text.upper()
    keyword = KEYWORDS.get(word)
    if keyword is not None:
        return keyword
    orientation = None
    if len(word) > 2 and word[-1] in _ORIENTATION:
        orientation = _ORIENTATION[word[-1]]
        word = word[:-1]
    try:
        card = parse_card(word)
    except CardParseError:
        raise ReplayParseError(
            tok,
            "not a card or keyword: expected a card (rank A 2-9 T 10 J Q K, suit S H D C, "
            "optionally ^ or v for upright/upside down) or one of "
            + " ".join(KEYWORDS),
        ) from None
    return CardSeen(card, orientation, "replay")  # type: ignore[arg-type]


def parse_replay(text: str) -> list[tuple[Input, Token]]:
    """Every token of ``text`` as (input, token), or ReplayParseError for the first bad one.

    >>> [t.number for _, t in parse_replay("as kd\\nRESULT")]
    [1, 2, 3]
    """
    return [(_parse_token(tok), tok) for tok in _tokens(text)]


def replay_inputs(text: str) -> list[Input]:
    """The inputs of a replay, starting with a new shoe (input always starts one: a
    leading ``SHOE`` is that same shoe, not a second one).

    >>> replay_inputs("SHOE AS") == replay_inputs("AS")
    True
    """
    inputs = [inp for inp, _ in parse_replay(text)]
    if not inputs or not isinstance(inputs[0], NewShoe):
        inputs.insert(0, NewShoe())
    return inputs
