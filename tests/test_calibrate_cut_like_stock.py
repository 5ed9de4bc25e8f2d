"""``shoe-calibrate learn`` warns when the cut card it learned is coloured like the
cards' stock (``cut_like_the_stock``): the reader tells a plain region for the cut card
by its colour alone, so a card whose print is all out of the window would read as that
cut card. condensed-jumbo-art's light-grey cut card is 0.02 from its white stock's
chromaticity and 0.78 times as light: warned. A cut card of another colour (classic's
red, bookman-dark-cut's charcoal, paris's orange): no warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from calibration.learn import _summary, cut_like_the_stock
from tests.support.vision_decks import learned_profile


def test_a_cut_card_coloured_like_the_stock_is_warned_of() -> None:
    profile = learned_profile("condensed-jumbo-art")
    warnings = cut_like_the_stock(profile)
    assert len(warnings) == 1 and "(CUT) is coloured like the cards' stock" in warnings[0]
    text = _summary(profile, Path("p.npz"), "frames")
    assert warnings[0] in text and text.endswith("wrote p.npz")


@pytest.mark.parametrize("style", ("classic", "bookman-dark-cut", "ext:paris"))
def test_a_cut_card_of_another_colour_is_not(style: str) -> None:
    profile = learned_profile(style)
    assert cut_like_the_stock(profile) == []
    assert "warning" not in _summary(profile, Path("p.npz"), "frames")
