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


def _sensor(**kw) -> PassTracker:
    return PassTracker(sensor=True, min_frames=2, exit_grace_s=0.0, exit_timeout_s=0.5, **kw)


def _feed_at(t: PassTracker, t0: float, reads: list[FrameRead]) -> tuple[list, float]:
    out: list = []
    clock = t0
    for r in reads:
        out += t.frame(clock, r)
        clock += 1 / FPS
    return out, clock


@pytest.mark.parametrize("what", [
    [FrameRead.cut(0.9)] * 3, [FrameRead.foreign("ZZ-1")] * 3, [FrameRead.foreign("")] * 3])
def test_tail_frames_of_a_cut_or_foreign_pass_are_its_tail(what):
    """After the exit, the same read lingering in view is the same card's tail, whatever
    kind it is: one input per pass, never a second one from the tail."""
    t = _sensor()
    out, clock = _feed_at(t, 0.0, what)
    out += t.card_exit(clock)
    more, clock = _feed_at(t, clock + 1 / FPS, [*what[:2], EMPTY, EMPTY])
    out += more + t.tick(clock + 1.0)
    assert len(out) == 1 and t.tail_frames == 2 and t.passes == 1
    kind = what[0].kind
    assert out[0] == (CutCardSeen() if kind == "cut" else ForeignCard(what[0].payload or ""))


def test_tail_frames_without_a_confident_read_of_another_card_stay_tail():
    t = _sensor()
    out, clock = _feed_at(t, 0.0, [card("QH")] * 3)
    out += t.card_exit(clock)
    tail = [card("5D", confidence=0.3), FrameRead.rejected("cut off"),
            FrameRead("card", None, None, 0.9), card("QH", confidence=0.2)]
    more, clock = _feed_at(t, clock + 1 / FPS, [*tail, EMPTY, EMPTY])
    out += more + t.tick(clock + 1.0)
    assert out == [CardSeen(parse_card("QH"), "up", "index")]
    assert t.tail_frames == 4 and t.passes == 1 and not t.in_pass


def test_a_sensor_pass_with_no_exit_is_unreadable_at_the_end_of_the_stream():
    t = _sensor()
    out, _ = _feed_at(t, 0.0, [card("QH")] * 3)
    assert out == []
    assert t.flush() == [UnreadableCard("a card was seen in the window but no card-exit "
                                        "event came")]
    assert t.passes == 1 and not t.in_pass and t.flush() == []
    out, _ = _feed_at(t, 5.0, [card("9S")] * 2)
    assert t.flush() == [UnreadableCard("a card was seen in the window but no card-exit "
                                        "event came")]
    assert t.passes == 2


def test_passes_are_counted_one_each():
    t = PassTracker(min_frames=2, gap_frames=2)
    out: list = []
    clock = 0.0
    for code in ["QH", "5D", "7C"]:
        more, clock = _feed_at(t, clock, [card(code)] * 3 + [EMPTY] * 3)
        out += more
    assert [o.card.code for o in out] == ["QH", "5D", "7C"] and t.passes == 3
    t2 = _sensor()
    out, clock = _feed_at(t2, 0.0, [card("QH")] * 3)
    t2.card_exit(clock)
    t2.tick(clock + 1)
    out, clock = _feed_at(t2, clock + 2, [card("5D")] * 3)
    t2.card_exit(clock)
    t2.tick(clock + 1)
    assert t2.passes == 2


def test_frames_stamped_before_a_decided_pass_end_are_late():
    t = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.05, exit_timeout_s=0.5)
    out, _ = _feed_at(t, 0.0, [card("QH")] * 3)
    out += t.card_exit(1.0)
    out += t.tick(1.2)  # the grace ran out: decided; the pass ends at 1.05
    assert out == [CardSeen(parse_card("QH"), "up", "index")]
    assert t.frame(1.04, card("5D")) == [] and t.late_frames == 1
    assert t.frame(1.05, card("5D")) == [] and t.late_frames == 2
    t.frame(1.06, card("5D"))
    assert t.late_frames == 2


def test_from_config_takes_every_setting():
    from shoe_controller.vision.config import VisionConfig

    cfg = VisionConfig(min_confidence=0.75, min_frames=3, gap_frames=4, exit_grace_s=0.125,
                       exit_timeout_s=2.5, pass_boundary="auto")
    t = PassTracker.from_config(cfg, sensor=True, source="barcode")
    assert (t.min_confidence, t.min_frames, t.gap_frames, t.exit_grace_s, t.exit_timeout_s,
            t.sensor, t.source) == (0.75, 3, 4, 0.125, 2.5, True, "barcode")
    assert PassTracker.from_config(cfg, sensor=False, source=None).sensor is False
    for boundary, sensor, want in [("sensor", False, True), ("presence", True, False)]:
        c2 = VisionConfig(pass_boundary=boundary)
        assert PassTracker.from_config(c2, sensor=sensor, source=None).sensor is want

    class Old:  # a config from before pass_boundary existed: "auto"
        min_confidence, min_frames, gap_frames, exit_grace_s, exit_timeout_s = (
            0.6, 2, 2, 0.05, 1.0)

    assert PassTracker.from_config(Old(), sensor=True, source=None).sensor is True
    assert PassTracker.from_config(Old(), sensor=False, source=None).sensor is False


@pytest.mark.parametrize("first, second, want", [
    ([card("QH")] * 3, [FrameRead.cut(0.9)] * 3, CutCardSeen()),
    ([card("QH")] * 3, [FrameRead.foreign("ZZ-2")] * 3, ForeignCard("ZZ-2")),
    ([FrameRead.foreign("ZZ-1")] * 3, [FrameRead.foreign("ZZ-2")] * 3, ForeignCard("ZZ-2")),
    ([FrameRead.cut(0.9)] * 3, [card("5D")] * 3, CardSeen(parse_card("5D"), "up", "index")),
    ([FrameRead.foreign("ZZ-1")] * 3, [FrameRead.cut(0.9)] * 3, CutCardSeen()),
])
def test_in_the_tail_a_confident_read_of_anything_else_is_the_next_pass(first, second, want):
    """The module's rule: frames of the exited card still in view are its tail; "a
    confident read of anything else starts the next pass at once", whatever its kind (a
    cut card or another foreign code after a card, a card after the cut card)."""
    t = _sensor()
    out, clock = _feed_at(t, 0.0, first)
    out += t.card_exit(clock)
    more, clock = _feed_at(t, clock + 1 / FPS, second)  # no empty frame in between
    out += more + t.card_exit(clock) + t.tick(clock + 1.0)
    assert len(out) == 2 and out[1] == want
    assert t.tail_frames == 0 and t.passes == 2


def test_a_tail_frame_at_exactly_tail_limit_s_is_still_tail():
    """The exited card's tail lasts "for at most tail_limit_s" after the pass's end (the
    exit plus the grace): a frame of it at exactly that limit is still tail, one later is
    a new pass. Binary-exact times: exit 1.0, no grace, limit 0.25."""
    t = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.0, exit_timeout_s=0.5,
                    tail_limit_s=0.25)
    out, _ = _feed_at(t, 0.5, [card("QH")] * 3)
    out += t.card_exit(1.0)
    out += t.frame(1.125, card("QH"))  # decides the pass (grace over), then tail
    out += t.frame(1.25, card("QH"))   # exactly at the limit: tail
    assert out == [CardSeen(parse_card("QH"), "up", "index")] and t.tail_frames == 2
    assert not t.in_pass
    out += t.frame(1.3125, card("QH"))  # past it: the start of a new pass
    assert t.tail_frames == 2 and t.in_pass


def test_a_card_still_in_view_when_its_pass_is_decided_then_two_more_is_two_presences():
    """Sensor mode: the exited card lingers (tail), then another card starts the next pass
    at once: that is one presence. An empty gap and a third card make it two separate
    presences for the next exit: unreadable, never one of the two guessed."""
    t = _sensor(gap_frames=2)
    out, clock = _feed_at(t, 0.0, [card("QH")] * 3)
    out += t.card_exit(clock)
    more, clock = _feed_at(t, clock + 1 / FPS,
                           [card("QH"), card("5D"), card("5D"), EMPTY, EMPTY,
                            card("7C"), card("7C")])
    out += more + t.card_exit(clock) + t.tick(clock + 1.0)
    assert out == [CardSeen(parse_card("QH"), "up", "index"),
                   UnreadableCard("2 separate cards were seen for one card-exit event")]


def test_the_tail_ends_only_after_gap_frames_empty_frames():
    """The tail lasts "until gap_frames empty frames": with gap_frames = 3, two empty
    frames between the exited card's lingering frames do not end it; three do (and
    the same card seen after that is a new pass)."""
    t = _sensor(gap_frames=3, tail_limit_s=10.0)
    out, clock = _feed_at(t, 0.0, [card("QH")] * 3)
    out += t.card_exit(clock)
    more, clock = _feed_at(t, clock + 1 / FPS,
                           [card("QH"), EMPTY, EMPTY, card("QH"), EMPTY, EMPTY, card("QH")])
    out += more
    assert out == [CardSeen(parse_card("QH"), "up", "index")]
    assert t.tail_frames == 3 and not t.in_pass
    more, clock = _feed_at(t, clock, [EMPTY, EMPTY, EMPTY, card("QH")])
    assert more == [] and t.tail_frames == 3 and t.in_pass


def test_the_most_frequent_abstention_is_the_reason():
    rejects = [FrameRead.rejected("blur"), FrameRead.rejected("glare"),
               FrameRead.rejected("blur")]
    assert vote(tally(rejects), 1) == UnreadableCard("no confident read in 3 frames (blur)")
    low = [card("QH", confidence=0.2), FrameRead.rejected("glare"), card("5D", confidence=0.1)]
    assert vote(tally(low), 1) == UnreadableCard(
        "no confident read in 3 frames (confidence below 0.6)")


@pytest.mark.parametrize("reads", [
    [card("QH"), card("QD")],
    [card("QH"), card("QD"), FrameRead.cut(0.9), FrameRead.foreign("Z")],
    [card("9S"), card("9S"), card("2C"), card("2C"), card("KD")],
    [FrameRead.rejected("glare"), FrameRead.rejected("blur")],
    [FrameRead.rejected("a"), FrameRead.rejected("c"), FrameRead.rejected("b"),
     card("QH", confidence=0.1)],
])
def test_a_pass_reads_the_same_whatever_order_its_frames_came_in(reads):
    """The vote is over counts: the same frames in any order give the same input, and
    equal counts are listed in one fixed order (the reason a dealer sees must not depend
    on which frame came first)."""
    import itertools

    results = {vote(tally(list(p)), 1) for p in itertools.permutations(reads)}
    assert len(results) == 1


def test_a_frame_at_exactly_the_exit_plus_grace_still_belongs_to_the_pass():
    """A sensor pass is "the frames since the previous exit up to this exit (plus
    exit_grace_s)": at exactly exit + grace the pass is not decided yet, and a frame then
    is counted in it. Binary-exact times: exit 1.0, grace 0.25."""
    t = PassTracker(sensor=True, min_frames=3, exit_grace_s=0.25, exit_timeout_s=5.0)
    out = t.frame(0.5, card("QH")) + t.frame(0.75, card("QH")) + t.card_exit(1.0)
    assert out == [] and t.tick(1.25) == [] and t.in_pass
    assert t.frame(1.25, card("QH")) == []
    assert t.tick(1.3125) == [CardSeen(parse_card("QH"), "up", "index")]
    assert t.passes == 1


def test_a_card_with_no_exit_is_unreadable_only_after_exit_timeout_s():
    """"A card in the window with no exit event within exit_timeout_s is unreadable":
    not before, not at exactly the timeout (an exit then is still within it), once
    after; each such pass counted once. Binary-exact times: last frame 10.0, timeout 1.0."""
    no_exit = UnreadableCard("a card was seen in the window but no card-exit event came")
    t = PassTracker(sensor=True, min_frames=2, gap_frames=2, exit_grace_s=0.0,
                    exit_timeout_s=1.0)
    for ts, r in [(9.875, card("QH")), (10.0, card("QH")), (10.0625, EMPTY),
                  (10.125, EMPTY)]:
        assert t.frame(ts, r) == []
    assert t.tick(10.5) == [] and t.tick(11.0) == [] and t.in_pass
    assert t.tick(11.0625) == [no_exit] and t.passes == 1 and not t.in_pass
    assert t.tick(20.0) == [] and t.passes == 1
    for ts, r in [(30.0, card("5D")), (30.125, EMPTY), (30.25, EMPTY)]:
        t.frame(ts, r)
    assert t.tick(31.5) == [no_exit] and t.passes == 2
    # an exit at exactly the timeout still pairs with the pass
    t2 = PassTracker(sensor=True, min_frames=2, gap_frames=2, exit_grace_s=0.0,
                     exit_timeout_s=1.0)
    for ts, r in [(9.875, card("QH")), (10.0, card("QH")), (10.0625, EMPTY),
                  (10.125, EMPTY)]:
        t2.frame(ts, r)
    assert t2.tick(11.0) == [] and t2.card_exit(11.0) == []
    assert t2.tick(11.0625) == [CardSeen(parse_card("QH"), "up", "index")]


def test_the_tracker_defaults_are_the_documented_ones():
    """docs/vision.md's settings table (and "at most 0.25 s" for the tail) is what a
    PassTracker built without arguments uses."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "vision.md").read_text()
    documented = {k: float(v) for k, v in re.findall(r"^\| `(\w+)` \| `([\d.]+)` \|", doc,
                                                     re.M)}
    t = PassTracker()
    for name in ("min_confidence", "min_frames", "gap_frames", "exit_grace_s",
                 "exit_timeout_s"):
        assert getattr(t, name) == documented[name], name
    assert "at most 0.25 s" in doc and t.tail_limit_s == 0.25
    assert (t.sensor, t.source) == (False, "index")


@pytest.mark.parametrize("kw", [{"min_frames": 0}, {"gap_frames": 0}, {"min_frames": -1}])
def test_frames_settings_below_one_are_refused(kw):
    with pytest.raises(ValueError, match=r"^min_frames and gap_frames must be at least 1$"):
        PassTracker(**kw)


def test_one_frame_settings_work():
    """gap_frames = 1: one empty frame ends a presence; min_frames = 1: one frame reads."""
    out = run([card("QH"), EMPTY, card("5D")], min_frames=1, gap_frames=1)
    assert out == [CardSeen(parse_card("QH"), "up", "index"),
                   CardSeen(parse_card("5D"), "up", "index")]


def test_a_tally_remembers_when_its_pass_began_and_was_last_seen():
    t = Tally()
    for ts in (2.5, 2.75, 3.0):
        t.add(ts, FrameRead.of_card(parse_card("QH"), "up", 0.9), 0.6)
    assert (t.first_t, t.last_seen_t, t.frames) == (2.5, 3.0, 3)


def test_a_rejection_without_a_reason_says_rejected():
    assert vote(tally([FrameRead.rejected("")] * 2), 1) == UnreadableCard(
        "no confident read in 2 frames (rejected)")


def test_each_abstaining_frame_counts_once_whatever_its_kind():
    """One rejection and two low-confidence frames: the low confidence is the most
    frequent reason (a rejection is one frame, not two)."""
    reads = [FrameRead.rejected("glare"), card("QH", confidence=0.1), card("5D", confidence=0.2)]
    assert vote(tally(reads), 1) == UnreadableCard(
        "no confident read in 3 frames (confidence below 0.6)")


def test_abstentions_are_counted_one_per_frame_for_every_reason():
    """The reason given is the most frequent one, each frame counted once: one low
    confidence frame against two rejections "a"; two card frames without a card
    against one rejection "zz" (ties would go to the later name)."""
    low = [FrameRead.rejected("a"), card("QH", confidence=0.1), FrameRead.rejected("a")]
    assert vote(tally(low), 1) == UnreadableCard("no confident read in 3 frames (a)")
    nocard = [FrameRead("card", None, None, 0.9), FrameRead.rejected("zz"),
              FrameRead("card", None, None, 0.9)]
    assert vote(tally(nocard), 1) == UnreadableCard(
        "no confident read in 3 frames (frame of kind 'card' without a card)")
    one_nocard = [FrameRead.rejected("a"), FrameRead("card", None, None, 0.9),
                  FrameRead.rejected("a")]
    assert vote(tally(one_nocard), 1) == UnreadableCard("no confident read in 3 frames (a)")
    cut_low = [FrameRead.cut(0.1), FrameRead.cut(0.2), FrameRead.rejected("zz")]
    assert vote(tally(cut_low), 1) == UnreadableCard(
        "no confident read in 3 frames (confidence below 0.6)")
