"""The replay text's tokens against a deliberately simple reference tokenizer written
here from DESIGN.md's contract ("tokens, whitespace-separated, `#` to end of line is a
comment"), read in every way a file can arrive in pieces (issue 15's campaign: mutants of
the streaming tokenizer's piece boundaries, its 64-character limit and its error fields
survived).

The reference reads the whole text at once, character by character: no pieces, no carry,
no regular expression. Every split of each text into two pieces, and into one-character
pieces, must give the same tokens, line and column numbers, and the same error at the
same token.
"""

from __future__ import annotations

import pytest

from shoe_controller.game.inputs import CardSeen, NewShoe
from shoe_controller.game.replay_text import (
    MAX_TOKEN,
    ReplayParseError,
    Token,
    iter_inputs,
    iter_tokens,
    parse_token,
)


def reference(text: str) -> list[tuple[str, int, int, int]]:
    """(text, 1-based number, line, column) of every token, the whole text at once."""
    out: list[tuple[str, int, int, int]] = []
    line, col, i = 1, 1, 0
    while i < len(text):
        c = text[i]
        if c == "\n":
            line, col, i = line + 1, 1, i + 1
        elif c == "#":
            while i < len(text) and text[i] != "\n":
                i, col = i + 1, col + 1
        elif c.isspace():
            i, col = i + 1, col + 1
        else:
            j = i
            while j < len(text) and not text[j].isspace() and text[j] != "#":
                j += 1
            out.append((text[i:j], len(out) + 1, line, col))
            col, i = col + (j - i), j
    return out


def read(pieces: list[str]) -> tuple[list[tuple[str, int, int, int]], ReplayParseError | None]:
    got: list[tuple[str, int, int, int]] = []
    try:
        for t in iter_tokens(pieces):
            got.append(tuple(t))  # type: ignore[arg-type]
    except ReplayParseError as exc:
        return got, exc
    return got, None


def splits(text: str):
    yield [text]
    for k in range(len(text) + 1):
        yield [text[:k], text[k:]]
    yield list(text)


LONG = "A" * MAX_TOKEN        # the longest token accepted
TEXTS = [
    "SHOE 9h 10s^ # burn\n qhv CUT",
    "AS\n\n  KD\tQH  # a comment # with a hash\nRESULT\r\n  \t7c",
    "BXD KXX XAX\nX # X\n  XX",                 # 'X' in tokens: a cut is only at spaces
    f"AS\n#{'c' * 100}\nKD",                     # a comment word longer than any token
    f"AS #{'c' * 100}\n  KD",
    f"#{'c' * 100}\nKD",
    f"AS # a comment ending in a long word {'w' * 90}\n 5H",
    f" {LONG}\n{LONG} KD",                       # tokens of exactly MAX_TOKEN characters
    f"KD {LONG}",
    f"\n{LONG}\n",
    "   \n  \n",
    "",
]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_tokens_in_any_pieces_are_the_reference_s(text: str) -> None:
    want = reference(text)
    for pieces in splits(text):
        got, err = read(pieces)
        assert err is None, (pieces, err)
        assert got == want, pieces


TOO_LONG = [
    ("B" * (MAX_TOKEN + 1), 1),
    (f"AS KD\n  # fine\n   {'Z' * (MAX_TOKEN + 30)} QH", 3),
    (f"AS\n\t{'Q' * (MAX_TOKEN + 1)}", 2),
    (f"AS {'K' * 200}", 2),
]


@pytest.mark.parametrize(("text", "number"), TOO_LONG, ids=range(len(TOO_LONG)))
def test_a_token_too_long_is_named_where_it_is_in_any_pieces(text: str, number: int) -> None:
    """The stream stops at the first token longer than MAX_TOKEN: the tokens before it are
    given, and the error names it (clipped), its number, line and column."""
    want = reference(text)
    bad = next(t for t in want if len(t[0]) > MAX_TOKEN)
    assert bad[1] == number
    clipped = bad[0][:MAX_TOKEN] + "..."
    whole = (f"a token of {len(bad[0])} characters: no card or keyword is longer than "
             f"{MAX_TOKEN}")
    streamed = (f"a token of more than {MAX_TOKEN} characters: no card or keyword is that "
                "long")
    seen = set()
    for pieces in splits(text):
        got, err = read(pieces)
        assert got == want[:number - 1], pieces
        assert err is not None, pieces
        assert tuple(err.token) == (clipped, *bad[1:]), pieces
        assert err.problem in (whole, streamed), (pieces, err.problem)
        assert str(err) == (f"token {bad[1]} {clipped!r} (line {bad[2]}, column {bad[3]}): "
                            f"{err.problem}")
        seen.add(err.problem)
    # a token still open at a piece's end is refused as soon as it passes the limit; one
    # whose end is in the same piece is refused with its length
    assert seen == {whole, streamed} if text.endswith(" QH") else streamed in seen


def test_a_card_token_is_a_card_seen_from_the_replay() -> None:
    inp = parse_token(Token("qhv", 1, 1, 1))
    assert isinstance(inp, CardSeen)
    assert (str(inp.card), inp.orientation, inp.source) == ("QH", "down", "replay")


def test_a_replay_always_starts_a_shoe_once() -> None:
    """DESIGN.md: input starts a new shoe; a leading SHOE is that same shoe."""
    def inputs(text: str) -> list[str]:
        return [type(i).__name__ for i in iter_inputs(iter_tokens([text]))]

    assert inputs("") == ["NewShoe"]
    assert inputs("# nothing but a comment\n") == ["NewShoe"]
    assert inputs("AS KD") == ["NewShoe", "CardSeen", "CardSeen"]
    assert inputs("SHOE AS") == ["NewShoe", "CardSeen"]
    assert inputs("AS SHOE KD") == ["NewShoe", "CardSeen", "NewShoe", "CardSeen"]
    assert isinstance(next(iter_inputs([])), NewShoe)
