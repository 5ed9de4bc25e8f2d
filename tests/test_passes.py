"""Pass tracker: frames of one card pass -> exactly one input, by strict voting."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.game.inputs import CardSeen, CutCardSeen, ForeignCard, UnreadableCard
from shoe_controller.vision.config import VisionConfig
from shoe_controller.vision.passes import EMPTY, PassTracker, Tally, vote
from shoe_controller.vision.reads import FrameRead

FPS = 60.0


def card(code: str, orientation: str | None = "up", confidence: float = 0.9) -> FrameRead:
    return FrameRead.of_card(parse_card(code), orientation, confidence)  # type: ignore[arg-type]


def feed(tracker: PassTracker, reads: list[FrameRead], t0: float = 0.0) -> list[object]:
    out: list[object] = []
    for i, r in enumerate(reads):
        out += tracker.frame(t0 + i / FPS, r)
    return out


# -- presence mode -------------------------------------------------------------------


def test_one_pass_one_read_with_orientation() -> None:
    t = PassTracker(min_frames=3, gap_frames=2, source="barcode")
    out = feed(t, [EMPTY, card("9S", "down")] * 1 + [card("9S", "down")] * 4 + [EMPTY] * 5)
    assert out == [CardSeen(parse_card("9S"), "down", "barcode")]
    assert t.passes == 1 and not t.in_pass


def test_single_empty_frame_inside_a_pass_does_not_split_it() -> None:
    t = PassTracker(min_frames=2, gap_frames=2)
    out = feed(t, [card("AH"), card("AH"), EMPTY, card("AH"), EMPTY, EMPTY])
    assert out == [CardSeen(parse_card("AH"), "up", "index")]


def test_gap_frames_split_two_passes_of_the_same_card() -> None:
    # Eight decks hold eight of every card: two passes of KD are two cards.
    t = PassTracker(min_frames=2, gap_frames=2)
    out = feed(t, [card("KD")] * 3 + [EMPTY] * 2 + [card("KD")] * 3 + [EMPTY] * 2)
    assert out == [CardSeen(parse_card("KD"), "up", "index")] * 2


def test_disagreeing_frames_give_unreadable_never_the_majority() -> None:
    t = PassTracker(min_frames=2)
    out = feed(t, [card("6C")] * 9 + [card("8C")] + [EMPTY] * 2)
    assert len(out) == 1 and isinstance(out[0], UnreadableCard)
    assert "disagree" in out[0].reason and "6C x9" in out[0].reason and "8C x1" in out[0].reason


def test_too_few_confident_frames_is_unreadable() -> None:
    t = PassTracker(min_frames=3)
    reads = [card("5H"), card("5H", confidence=0.3), FrameRead.rejected("blur"), EMPTY, EMPTY]
    (out,) = feed(t, reads)
    assert out == UnreadableCard("only 1 confident frame of 5H, 3 needed")


def test_low_confidence_dissent_is_an_abstention_not_a_vote() -> None:
    t = PassTracker(min_frames=2, min_confidence=0.6)
    out = feed(t, [card("5H"), card("5D", confidence=0.4), card("5H"), EMPTY, EMPTY])
    assert out == [CardSeen(parse_card("5H"), "up", "index")]


def test_only_rejections_is_unreadable_with_the_main_reason() -> None:
    t = PassTracker()
    reads = [FrameRead.rejected("index cut off")] * 3 + [FrameRead.rejected("blur")] + [EMPTY] * 2
    (out,) = feed(t, reads)
    assert isinstance(out, UnreadableCard)
    assert out.reason == "no confident read in 4 frames (index cut off)"


def test_cut_card_and_foreign_code() -> None:
    t = PassTracker(min_frames=2)
    out = feed(t, [FrameRead.cut(0.99)] * 3 + [EMPTY] * 2)
    out += feed(t, [FrameRead.foreign("ACME-7")] * 2 + [EMPTY] * 2, t0=1.0)
    assert out == [CutCardSeen(), ForeignCard("ACME-7")]


def test_foreign_mixed_with_card_is_unreadable() -> None:
    t = PassTracker(min_frames=1)
    (out,) = feed(t, [card("QH"), FrameRead.foreign("X1"), EMPTY, EMPTY])
    assert isinstance(out, UnreadableCard) and "foreign 'X1' x1" in out.reason


def test_orientation_reported_only_when_unanimous() -> None:
    t = PassTracker(min_frames=2)
    out = feed(t, [card("3S", "up"), card("3S", "down"), card("3S", None), EMPTY, EMPTY])
    assert out == [CardSeen(parse_card("3S"), None, "index")]
    out = feed(t, [card("3S", None), card("3S", "down"), EMPTY, EMPTY], t0=1.0)
    assert out == [CardSeen(parse_card("3S"), "down", "index")]


def test_flush_decides_a_pass_cut_by_the_end_of_the_stream() -> None:
    t = PassTracker(min_frames=2)
    assert feed(t, [card("2D")] * 3) == []
    assert t.in_pass
    assert t.flush() == [CardSeen(parse_card("2D"), "up", "index")]
    assert t.flush() == []


def test_empty_window_reads_as_nothing() -> None:
    t = PassTracker()
    assert feed(t, [EMPTY] * 100) == [] and t.flush() == [] and t.passes == 0


# -- sensor mode ---------------------------------------------------------------------


def test_sensor_exit_closes_the_pass_after_grace() -> None:
    t = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.05)
    assert feed(t, [card("JC")] * 4) == []  # t = 0 .. 0.05
    assert t.card_exit(0.06) == []
    # A frame inside the grace period still belongs to the pass...
    assert t.frame(0.09, card("JC")) == []
    # ...the first frame after it decides the pass and starts the next one.
    assert t.frame(0.12, EMPTY) == [CardSeen(parse_card("JC"), "up", "index")]


def test_sensor_tick_decides_without_frames() -> None:
    t = PassTracker(sensor=True, exit_grace_s=0.05)
    feed(t, [card("JC")] * 3)
    t.card_exit(0.05)
    assert t.tick(0.08) == []
    assert t.tick(0.2) == [CardSeen(parse_card("JC"), "up", "index")]


def test_sensor_exit_without_any_frame_is_unreadable() -> None:
    t = PassTracker(sensor=True)
    feed(t, [EMPTY] * 5)
    t.card_exit(0.1)
    (out,) = t.tick(1.0)
    assert out == UnreadableCard("a card left the shoe but no frame showed it")


def test_sensor_two_presences_for_one_exit_is_unreadable() -> None:
    # Two identical cards with one sensor event: reading one would lose the other.
    t = PassTracker(sensor=True, gap_frames=2)
    feed(t, [card("4H")] * 3 + [EMPTY] * 3 + [card("4H")] * 3)
    t.card_exit(0.2)
    (out,) = t.flush()
    assert isinstance(out, UnreadableCard) and "2 separate cards" in out.reason


def test_sensor_card_seen_without_exit_is_reported_after_timeout() -> None:
    t = PassTracker(sensor=True, exit_timeout_s=1.0)
    feed(t, [card("TS")] * 3 + [EMPTY] * 3)
    assert t.tick(0.5) == []
    (out,) = t.tick(1.5)
    assert isinstance(out, UnreadableCard) and "no card-exit event" in out.reason
    assert not t.in_pass


def test_sensor_two_exits_in_a_row() -> None:
    t = PassTracker(sensor=True, min_frames=2)
    feed(t, [card("8H")] * 3 + [EMPTY] * 2)
    assert t.card_exit(0.1) == []
    out = t.card_exit(0.12)  # the second exit closes the first pass at once
    assert out == [CardSeen(parse_card("8H"), "up", "index")]
    (second,) = t.tick(1.0)
    assert isinstance(second, UnreadableCard)  # no frame showed the second card


def test_late_frames_are_dropped_not_counted_into_the_next_pass() -> None:
    t = PassTracker(sensor=True, exit_grace_s=0.0)
    feed(t, [card("8H")] * 3)
    t.card_exit(0.05)
    assert t.tick(0.06) == [CardSeen(parse_card("8H"), "up", "index")]
    assert t.frame(0.04, card("8H")) == []
    assert t.late_frames == 1 and not t.in_pass


def test_exit_events_ignored_in_presence_mode() -> None:
    t = PassTracker(sensor=False)
    assert t.card_exit(1.0) == [] and t.tick(5.0) == [] and t.flush() == []


def test_from_config() -> None:
    cfg = msgspec.convert({"min_frames": 4, "pass_boundary": "auto"}, VisionConfig)
    assert PassTracker.from_config(cfg, sensor=True, source="both").sensor
    assert not PassTracker.from_config(cfg, sensor=False, source="both").sensor
    forced = msgspec.convert({"pass_boundary": "presence"}, VisionConfig)
    t = PassTracker.from_config(forced, sensor=True, source="x")
    assert not t.sensor and t.min_frames == 2
    with pytest.raises(ValueError):
        PassTracker(min_frames=0)


# -- properties ----------------------------------------------------------------------

codes = st.sampled_from([c.code for c in ALL_CARDS])


@st.composite
def clean_passes(draw: st.DrawFn) -> tuple[list[str], list[FrameRead]]:
    """Passes of consistent confident frames, with abstentions, separated by gaps."""
    truth = draw(st.lists(codes, min_size=1, max_size=12))
    frames: list[FrameRead] = [EMPTY] * draw(st.integers(0, 3))
    for code in truth:
        body = [card(code, "down")] * draw(st.integers(2, 8))
        for _ in range(draw(st.integers(0, 3))):
            pos = draw(st.integers(0, len(body)))
            noise = draw(st.sampled_from([FrameRead.rejected("blur"), card("AS", confidence=0.1)]))
            body.insert(pos, noise)
        # A single empty frame inside a pass (below gap_frames) must not split it.
        if draw(st.booleans()) and len(body) > 2:
            body.insert(1, EMPTY)
        frames += body + [EMPTY] * draw(st.integers(2, 4))
    return truth, frames


@settings(max_examples=200, deadline=None)
@given(clean_passes())
def test_property_each_clean_pass_is_exactly_one_right_card(
    case: tuple[list[str], list[FrameRead]],
) -> None:
    truth, frames = case
    t = PassTracker(min_frames=2, gap_frames=2)
    out = feed(t, frames) + t.flush()
    assert out == [CardSeen(parse_card(c), "down", "index") for c in truth]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(codes, st.integers(0, 4)), min_size=1, max_size=30), st.data())
def test_property_never_a_card_that_not_every_confident_frame_said(
    passes: list[tuple[str, int]], data: st.DataObject
) -> None:
    """Arbitrary dissent: the output is either the unanimous card or unreadable."""
    t = PassTracker(min_frames=2, gap_frames=2)
    outs: list[object] = []
    clock = 0.0
    expected: list[tuple[set[str], int]] = []
    for code, n_dissent in passes:
        body = [card(code)] * data.draw(st.integers(1, 5))
        dissent = data.draw(st.lists(codes, min_size=n_dissent, max_size=n_dissent))
        for other in dissent:
            body.insert(data.draw(st.integers(0, len(body))), card(other))
        said = {r.card.code for r in body if r.card is not None}
        expected.append((said, len(body)))
        for r in [*body, EMPTY, EMPTY]:
            outs += t.frame(clock, r)
            clock += 1 / FPS
    assert len(outs) == len(passes)  # exactly one input per pass, never lost
    for out, (said, n) in zip(outs, expected, strict=True):
        if isinstance(out, CardSeen):
            assert said == {out.card.code} and n >= 2
        else:
            assert isinstance(out, UnreadableCard)
            assert len(said) > 1 or n < 2


def test_vote_empty_tally() -> None:
    assert vote(Tally(), 1) == UnreadableCard("a card left the shoe but no frame showed it")


def test_sensor_tail_frames_of_the_exited_card_are_not_a_new_card() -> None:
    t = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.0, exit_timeout_s=0.5)
    out = feed(t, [card("QH")] * 4)  # t = 0 .. 0.05
    out += t.card_exit(0.06)
    # The card lingers two frames after its exit (same read, then a rejection), then gone.
    for i, r in enumerate([card("QH"), FrameRead.rejected("cut off"), EMPTY, EMPTY]):
        out += t.frame(0.07 + i / FPS, r)
    out += t.tick(5.0)  # long after: no "seen without exit" for the tail
    assert out == [CardSeen(parse_card("QH"), "up", "index")]
    assert t.tail_frames == 2 and not t.in_pass


def test_sensor_next_card_right_behind_the_tail_starts_a_new_pass() -> None:
    t = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.0)
    out = feed(t, [card("QH")] * 3)
    out += t.card_exit(0.04)
    out += feed(t, [card("QH"), card("7D"), card("7D"), card("7D")], t0=0.05)
    out += t.card_exit(0.2)
    out += t.tick(0.3)
    assert out == [
        CardSeen(parse_card("QH"), "up", "index"),
        CardSeen(parse_card("7D"), "up", "index"),
    ]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(codes, st.integers(2, 6), st.integers(0, 2), st.integers(0, 4)),
        min_size=1,
        max_size=15,
    )
)
def test_property_sensor_mode_one_read_per_exit(passes: list[tuple[str, int, int, int]]) -> None:
    """Card frames, the exit event, a short tail of the same card, a gap: each exit gives
    exactly its card, in order, and nothing else ever comes out."""
    t = PassTracker(sensor=True, min_frames=2, gap_frames=2, exit_grace_s=0.01)
    clock, out = 0.0, []
    for code, n, tail, gap in passes:
        for r in [card(code)] * n:
            out += t.frame(clock, r)
            clock += 1 / FPS
        out += t.card_exit(clock - 0.5 / FPS)
        for r in [card(code)] * tail + [EMPTY] * (2 + gap):
            out += t.frame(clock, r)
            clock += 1 / FPS
    out += t.tick(clock + 10) + t.flush()
    assert out == [CardSeen(parse_card(c), "up", "index") for c, *_ in passes]


def test_sensor_tail_is_bounded_in_time() -> None:
    """The same card again, right behind, long after the exit: a new card, not a tail."""
    t = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.0, tail_limit_s=0.1)
    out = feed(t, [card("KD")] * 3)
    out += t.card_exit(0.04)
    out += feed(t, [card("KD")] * 3, t0=0.05)  # within 0.1 s: the exited card's tail
    out += feed(t, [card("KD")] * 3, t0=0.2)  # later: the next KD
    out += t.card_exit(0.25)
    out += t.tick(1.0)
    assert out == [CardSeen(parse_card("KD"), "up", "index")] * 2
    assert t.tail_frames == 3
