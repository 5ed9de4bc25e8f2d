"""Pass voting: the strict rule of the module doc, checked by hand-counted frames.

The rule (shoe_controller/vision/passes.py, docs/vision.md): every confident frame of a
pass must say the same thing and at least ``min_frames`` of them must say it; a frame at
or above ``min_confidence`` is confident (a vote), below it an abstention; a decoded
foreign code is certain whatever its confidence. Issue 15's survivors: a single-frame
CUT counted twice (passing ``min_frames = 2`` with one frame), a dissenting frame at
exactly ``min_confidence`` no longer counted as a disagreement.
"""

from __future__ import annotations

import pytest

from shoe_controller.game.cards import parse_card
from shoe_controller.game.inputs import CardSeen, CutCardSeen, ForeignCard, UnreadableCard
from shoe_controller.vision.passes import EMPTY, PassTracker, Tally, vote
from shoe_controller.vision.reads import FrameRead

FPS = 60.0


def card(code: str, confidence: float = 0.9, orientation: str | None = "up") -> FrameRead:
    return FrameRead.of_card(parse_card(code), orientation, confidence)  # type: ignore[arg-type]


def tally(reads: list[FrameRead], min_confidence: float = 0.6) -> Tally:
    t = Tally()
    for i, r in enumerate(reads):
        t.add(i / FPS, r, min_confidence)
    return t


def run(reads: list[FrameRead], **kw) -> list[object]:
    tr = PassTracker(**kw)
    out: list[object] = []
    for i, r in enumerate([*reads, EMPTY, EMPTY, EMPTY]):
        out += tr.frame(i / FPS, r)
    return out + tr.flush()


def test_one_cut_frame_is_one_vote():
    t = tally([FrameRead.cut(0.9)])
    assert t.votes == {("cut", ""): 1} and t.frames == 1
    assert vote(t, min_frames=2) == UnreadableCard("only 1 confident frame of CUT, 2 needed")
    assert vote(t, min_frames=1) == CutCardSeen()
    assert run([FrameRead.cut(0.9)], min_frames=2) == [
        UnreadableCard("only 1 confident frame of CUT, 2 needed")]
    assert run([FrameRead.cut(0.9)] * 2, min_frames=2) == [CutCardSeen()]
    assert run([FrameRead.cut(0.9)] * 2, min_frames=3) == [
        UnreadableCard("only 2 confident frames of CUT, 3 needed")]


def test_each_kind_counts_one_vote_per_frame():
    for reads, key in [([card("QH")] * 3, ("card", "QH")),
                       ([FrameRead.cut(0.99)] * 3, ("cut", "")),
                       ([FrameRead.foreign("X1")] * 3, ("foreign", "X1"))]:
        t = tally(reads)
        assert t.votes == {key: 3} and t.frames == 3 and not t.abstentions


@pytest.mark.parametrize("mc", [0.6, 0.75, 0.5])
def test_a_dissent_at_exactly_min_confidence_is_a_disagreement(mc):
    reads = [card("QH"), card("QD", confidence=mc), card("QH")]
    out = vote(tally(reads, mc), min_frames=2)
    assert out == UnreadableCard("frames disagree: QH x2, QD x1")
    assert run(reads, min_frames=2, min_confidence=mc) == [out]
    # just below: an abstention, and the pass reads QH
    below = [card("QH"), card("QD", confidence=mc - 1e-9), card("QH")]
    assert vote(tally(below, mc), min_frames=2) == CardSeen(parse_card("QH"), "up", None)
    assert run(below, min_frames=2, min_confidence=mc) == [
        CardSeen(parse_card("QH"), "up", "index")]


def test_a_card_at_exactly_min_confidence_is_a_vote():
    reads = [card("7C", confidence=0.6)] * 2
    assert vote(tally(reads, 0.6), min_frames=2) == CardSeen(parse_card("7C"), "up", None)
    assert vote(tally(reads, 0.61), min_frames=1) == UnreadableCard(
        "no confident read in 2 frames (confidence below 0.61)")


def test_a_cut_frame_at_exactly_min_confidence_is_a_vote_and_dissents():
    assert vote(tally([FrameRead.cut(0.6)] * 2, 0.6), 2) == CutCardSeen()
    out = vote(tally([card("QH"), card("QH"), FrameRead.cut(0.6)], 0.6), 2)
    assert out == UnreadableCard("frames disagree: QH x2, CUT x1")


def test_a_foreign_code_votes_whatever_its_confidence():
    reads = [card("QH"), card("QH"), FrameRead.foreign("ZZ")]
    assert vote(tally(reads), 2) == UnreadableCard("frames disagree: QH x2, foreign 'ZZ' x1")
    assert vote(tally([FrameRead.foreign("ZZ")] * 2), 2) == ForeignCard("ZZ")


def test_orientation_only_when_unanimous():
    both = [card("9S", orientation="up"), card("9S", orientation="down")]
    assert vote(tally(both), 2) == CardSeen(parse_card("9S"), None, None)
    assert vote(tally([card("9S", orientation="down")] * 2), 2) == CardSeen(
        parse_card("9S"), "down", None)
    some = [card("9S", orientation=None), card("9S", orientation="down")]
    assert vote(tally(some), 2) == CardSeen(parse_card("9S"), "down", None)


def test_sensor_tail_a_different_card_at_exactly_min_confidence_starts_the_next_pass():
    """In the exited card's tail, a confident read of another card (confidence exactly
    min_confidence counts as confident) is the next card, not a tail frame."""
    t = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.0, exit_timeout_s=0.5,
                    min_confidence=0.6)
    out: list[object] = []
    clock = 0.0
    for r in [card("QH")] * 3:
        out += t.frame(clock, r)
        clock += 1 / FPS
    out += t.card_exit(clock)
    clock += 1 / FPS
    for r in [card("QH"), card("5D", confidence=0.6), card("5D", confidence=0.6)]:
        out += t.frame(clock, r)
        clock += 1 / FPS
    out += t.card_exit(clock)
    out += t.tick(clock + 1.0)
    assert out == [CardSeen(parse_card("QH"), "up", "index"),
                   CardSeen(parse_card("5D"), "up", "index")]
    assert t.tail_frames == 1


def test_empty_tally_says_why():
    assert vote(Tally(), 1) == UnreadableCard("a card left the shoe but no frame showed it")
    only_rejects = tally([FrameRead.rejected("glare"), FrameRead.rejected("glare"),
                          FrameRead.rejected("blur")])
    assert vote(only_rejects, 1) == UnreadableCard("no confident read in 3 frames (glare)")
