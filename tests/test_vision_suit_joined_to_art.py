"""A calibration card whose suit touches the court art (ext:paris's KH: the heart's
point runs into the sword below it) was learned with the suit and the sword as one
part, 53 px high where the deck's hearts are 29. Its place was right, so nothing looked
at it again, and the deck's index geometry took it in: the suits reached 125 px from
the corner instead of 97, every crop grew to match, and any card whose corner lay
within that reach of the frame's edge had "no whole index in view" (ext:paris's KD and
KS by the frame's top edge, bench seed 73001). A suit this much taller than the same
suit on the deck's other cards is now cut out of the art as a suit out of place is (at
a narrow neck, else along the suit's box), and checked against them."""

from __future__ import annotations

from shoe_controller.sim import render
from shoe_controller.sim.render import FULL
from shoe_controller.vision.index_learn import SUIT_JOINED
from shoe_controller.vision.index_reader import IndexReader
from tests.support.vision_decks import learned_profile, verdict

PARIS = "ext:paris"


def test_the_kings_heart_is_learned_without_the_sword() -> None:
    geometry = learned_profile(PARIS).geometry
    _lo, med, hi = geometry["suit_h"]
    assert hi < SUIT_JOINED * med
    # the index's reach from the corner: the rank and the suit, not the sword
    assert geometry["suit_union"][3] < 100


def test_a_card_by_the_frames_edge_reads_again() -> None:
    """Full-range frames of bench/vision.py --seed 73001 (KD 941 and KS 1122): the index
    whole in view, its corner 85 px from the frame's top; read now."""
    reader = IndexReader(learned_profile(PARIS))
    for card, index in (("KD", 941), ("KS", 1122)):
        frame = render.render_frame(card, PARIS, FULL, 73001 * 1_000_003 + index)[0]
        assert verdict(reader.read(frame)) == card
