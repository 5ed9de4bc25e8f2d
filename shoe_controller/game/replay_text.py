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
its line and column. :func:`iter_tokens` reads the text as a stream of chunks with
bounded memory whatever its size (``replay`` parses a file twice: once to check every
token, once to run it), and refuses a token longer than :data:`MAX_TOKEN` characters.

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

import re
from collections.abc import Iterable, Iterator
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

__all__ = [
    "KEYWORDS",
    "MAX_TOKEN",
    "ReplayParseError",
    "Token",
    "iter_inputs",
    "iter_tokens",
    "parse_replay",
    "parse_token",
    "replay_inputs",
]

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


#: The longest token accepted (the longest keyword, VOID_INSURANCE, has 14 characters).
MAX_TOKEN: Final = 64
_LEXEME = re.compile(r"\n|#[^\n]*|[^\s#]+")


def iter_tokens(chunks: Iterable[str]) -> Iterator[Token]:
    """The tokens of a replay text given as consecutive pieces (a file read in blocks),
    holding no more than one piece plus one token at a time: comments are skipped as
    they stream past, however long, and a run of non-space characters longer than
    :data:`MAX_TOKEN` is a :class:`ReplayParseError` (clipped in the message).

    >>> [(t.text, t.line, t.column) for t in iter_tokens(["AS K", "D # c", "om\\n  QH"])]
    [('AS', 1, 1), ('KD', 1, 4), ('QH', 2, 3)]
    """
    number, line, line_start, offset = 0, 1, 0, 0
    carry, in_comment = "", False
    pieces = iter(chunks)
    final = False
    while not final:
        piece = next(pieces, None)
        final = piece is None
        buf = carry + (piece or "")
        pos = 0
        if in_comment:
            j = buf.find("\n")
            if j < 0:
                offset += len(buf)
                carry = ""
                continue
            pos, in_comment = j, False
        end = len(buf)
        if not final and buf.find("#", max(pos, buf.rfind("\n", pos) + 1)) < 0:
            # keep the last, maybe unfinished, token for the next piece (a comment open
            # on the last line is consumed to the end: it goes on there)
            cut = max(buf.rfind(c, pos) for c in " \t\n\r\f\v")
            end = cut + 1 if cut >= 0 else pos
        for m in _LEXEME.finditer(buf, pos, end):
            text = m.group()
            if text == "\n":
                line += 1
                line_start = offset + m.end()
            elif text[0] == "#":
                if m.end() == end and not final:
                    in_comment = True  # it goes on in the next piece
            else:
                number += 1
                tok = Token(text, number, line, offset + m.start() - line_start + 1)
                if len(text) > MAX_TOKEN:
                    raise ReplayParseError(
                        tok._replace(text=text[:MAX_TOKEN] + "..."),
                        f"a token of {len(text)} characters: no card or keyword is longer "
                        f"than {MAX_TOKEN}")
                yield tok
        carry = buf[end:]
        offset += end
        if len(carry) > MAX_TOKEN and not in_comment:
            number += 1
            tok = Token(carry[:MAX_TOKEN] + "...", number, line, offset - line_start + 1)
            raise ReplayParseError(tok, f"a token of more than {MAX_TOKEN} characters: no "
                                        "card or keyword is that long")


def parse_token(tok: Token) -> Input:
    """The input one token stands for; ReplayParseError when it is none."""
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
    return [(parse_token(tok), tok) for tok in iter_tokens([text])]


def iter_inputs(tokens: Iterable[Token]) -> Iterator[Input]:
    """The inputs of a replay's tokens, as a stream, starting with a new shoe (a leading
    ``SHOE`` is that same shoe, not a second one); ReplayParseError at a bad token."""
    first = True
    for tok in tokens:
        inp = parse_token(tok)
        if first and not isinstance(inp, NewShoe):
            yield NewShoe()
        first = False
        yield inp
    if first:
        yield NewShoe()


def replay_inputs(text: str) -> list[Input]:
    """The inputs of a replay, starting with a new shoe (input always starts one: a
    leading ``SHOE`` is that same shoe, not a second one).

    >>> replay_inputs("SHOE AS") == replay_inputs("AS")
    True
    """
    return list(iter_inputs(iter_tokens([text])))
