"""The inputs' own checks: a bad value is refused where an adapter builds the input, so it
can never reach the game core or the journal (game/inputs.py's contract).

Each refusal is one line naming the field and the value given; the expected texts are
written out here, not taken from the code.
"""

from __future__ import annotations

import pytest

from shoe_controller.game.cards import parse_card
from shoe_controller.game.inputs import CardSeen, ManualCard, Reveal

QH = parse_card("QH")


@pytest.mark.parametrize("orientation", [None, "up", "down"])
def test_a_card_read_with_any_documented_orientation_is_accepted(orientation: str | None
                                                                  ) -> None:
    seen = CardSeen(QH, orientation=orientation)  # type: ignore[arg-type]
    assert (seen.card.code, seen.orientation) == ("QH", orientation)


@pytest.mark.parametrize("bad", ["sideways", "UP", "", 1])
def test_an_orientation_outside_up_down_none_is_refused(bad: object) -> None:
    with pytest.raises(ValueError) as info:
        CardSeen(QH, orientation=bad)  # type: ignore[arg-type]
    assert str(info.value) == f"orientation must be 'up', 'down' or None, got {bad!r}"


@pytest.mark.parametrize("make, name", [(CardSeen, "CardSeen"), (ManualCard, "ManualCard")])
@pytest.mark.parametrize("bad", ["QH", None, ("Q", "H")])
def test_a_card_that_is_no_card_value_is_refused(make: type, name: str, bad: object) -> None:
    with pytest.raises(TypeError) as info:
        make(bad)
    assert str(info.value) == f"{name}.card must be a Card, got {bad!r}"


def test_a_manual_card_is_accepted() -> None:
    assert ManualCard(QH).card.code == "QH"


@pytest.mark.parametrize("side", ["player", "banker"])
def test_a_reveal_of_either_hand_is_accepted(side: str) -> None:
    assert Reveal(side).side == side  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["tie", "Player", "", None])
def test_a_reveal_of_anything_else_is_refused(bad: object) -> None:
    with pytest.raises(ValueError) as info:
        Reveal(bad)  # type: ignore[arg-type]
    assert str(info.value) == f"Reveal.side must be 'player' or 'banker', got {bad!r}"
