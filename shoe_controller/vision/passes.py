"""One physical card pass -> exactly one game input, by voting across its frames.

A card sliding out of the shoe is seen in several frames. Each frame gets a verdict
(:class:`~shoe_controller.vision.reads.FrameRead`); this module groups the frames of one
pass and turns them into one input for the game: ``CardSeen``, ``CutCardSeen``,
``ForeignCard`` or ``UnreadableCard``. A misread card decides money, so the vote is
strict: every confident frame must say the same thing, and at least ``min_frames`` of
them must say it; otherwise the pass is unreadable (the round stops for the dealer)
rather than a guess. Frames rejected by the reader, or below ``min_confidence``, are
abstentions, not votes.

A pass is bounded by:
- the shoe's card-exit sensor (``sensor=True``): the frames since the previous exit up
  to this exit (plus ``exit_grace_s``) are the pass. An exit with no card in any frame is
  unreadable; a card in the window with no exit event within ``exit_timeout_s`` is
  unreadable too (a missed sensor event must never lose a card silently); two separate
  presences for one exit are unreadable (two cards, one sensor event). Frames of the
  exited card still in view after its pass (the same read, or no confident read, until
  ``gap_frames`` empty frames, for at most ``tail_limit_s``) are its tail and ignored; a
  confident read of anything else starts the next pass at once.
- otherwise, presence in the window: a pass starts at the first non-empty frame and ends
  after ``gap_frames`` consecutive empty frames.

Pure logic: no clock, no I/O. Timestamps come in with the frames and sensor events (one
monotonic clock for both), and :meth:`PassTracker.tick` lets the caller say what time
it is when no frame arrives.

>>> from shoe_controller.game.cards import parse_card
>>> qh = FrameRead.of_card(parse_card("QH"), "up", 0.9)
>>> t = PassTracker(min_frames=2, gap_frames=2)
>>> [t.frame(i / 60, r) for i, r in enumerate([qh, qh, qh, EMPTY])]
[[], [], [], []]
>>> t.frame(4 / 60, EMPTY)
[CardSeen(card=Card('QH'), orientation='up', source='index')]
>>> qd = FrameRead.of_card(parse_card("QD"), "up", 0.9)
>>> for i, r in enumerate([qh, qd, qh, EMPTY, EMPTY]):
...     out = t.frame(1 + i / 60, r)
>>> out
[UnreadableCard(reason='frames disagree: QH x2, QD x1')]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from shoe_controller.game.inputs import CardSeen, CutCardSeen, ForeignCard, UnreadableCard
from shoe_controller.vision.reads import FrameRead

__all__ = ["EMPTY", "PassInput", "PassTracker", "Tally", "vote"]

PassInput = CardSeen | CutCardSeen | ForeignCard | UnreadableCard

#: The verdict on a frame of the empty window.
EMPTY = FrameRead.empty()


@dataclass(slots=True)
class Tally:
    """What the frames of one pass said so far (counts only: a long pass costs nothing)."""

    frames: int = 0
    #: Confident verdicts: ("card", "QH") / ("cut", "") / ("foreign", payload) -> frames.
    votes: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Orientation reported by confident card frames: (code, "up"/"down") -> frames.
    orientations: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Rejections and low-confidence frames: reason -> frames.
    abstentions: Counter[str] = field(default_factory=Counter)
    #: Separate presences of something in the window (sensor mode: should be one).
    presences: int = 0
    first_t: float = 0.0
    last_seen_t: float = 0.0
    cards: dict[str, FrameRead] = field(default_factory=dict)

    def add(self, t: float, read: FrameRead, min_confidence: float) -> None:
        """Count one non-empty frame."""
        if self.frames == 0:
            self.first_t = t
        self.frames += 1
        self.last_seen_t = t
        if read.kind == "reject":
            self.abstentions[read.reason or "rejected"] += 1
        elif read.kind == "foreign":
            # A decoded code is certain, whatever confidence the reader attached to it.
            self.votes["foreign", read.payload or ""] += 1
        elif read.confidence < min_confidence:
            self.abstentions[f"confidence below {min_confidence:g}"] += 1
        elif read.kind == "cut":
            self.votes["cut", ""] += 1
        elif read.kind == "card" and read.card is not None:
            code = read.card.code
            self.votes["card", code] += 1
            self.cards.setdefault(code, read)
            if read.orientation is not None:
                self.orientations[code, read.orientation] += 1
        else:
            self.abstentions[f"frame of kind {read.kind!r} without a card"] += 1


def _vote_key(read: FrameRead, min_confidence: float) -> tuple[str, str] | None:
    """The vote a frame casts, as :meth:`Tally.add` counts it; None for an abstention."""
    if read.kind == "foreign":
        return ("foreign", read.payload or "")
    if read.kind not in ("card", "cut") or read.confidence < min_confidence:
        return None
    if read.kind == "cut":
        return ("cut", "")
    return ("card", read.card.code) if read.card is not None else None


def _label(key: tuple[str, str]) -> str:
    kind, value = key
    return {"card": value, "cut": "CUT", "foreign": f"foreign {value!r}"}[kind]


def vote(tally: Tally, min_frames: int, source: str | None = None) -> PassInput:
    """The one input a pass's frames add up to; unreadable unless they agree.

    >>> from shoe_controller.game.cards import parse_card
    >>> t = Tally()
    >>> for _ in range(3):
    ...     t.add(0.0, FrameRead.of_card(parse_card("7D"), "down", 0.95), 0.6)
    >>> vote(t, min_frames=2, source="index")
    CardSeen(card=Card('7D'), orientation='down', source='index')
    >>> vote(t, min_frames=4)
    UnreadableCard(reason='only 3 confident frames of 7D, 4 needed')
    >>> t.add(0.0, FrameRead.rejected("index cut off"), 0.6)
    >>> vote(t, min_frames=2).card
    Card('7D')
    """
    if len(tally.votes) > 1:
        ranked = sorted(tally.votes.items(), key=lambda kv: (-kv[1], kv[0]))
        listing = ", ".join(f"{_label(key)} x{n}" for key, n in ranked)
        return UnreadableCard(f"frames disagree: {listing}")
    if not tally.votes:
        if not tally.frames:
            return UnreadableCard("a card left the shoe but no frame showed it")
        reason, _n = max(tally.abstentions.items(), key=lambda kv: (kv[1], kv[0]))
        return UnreadableCard(f"no confident read in {tally.frames} frames ({reason})")
    (((kind, value), count),) = tally.votes.items()
    if count < min_frames:
        plural = "frame" if count == 1 else "frames"
        return UnreadableCard(
            f"only {count} confident {plural} of {_label((kind, value))}, {min_frames} needed"
        )
    if kind == "cut":
        return CutCardSeen()
    if kind == "foreign":
        return ForeignCard(value)
    card = tally.cards[value].card
    assert card is not None
    # Orientation feeds integrity checks (edge sorting): report it only when unanimous.
    seen = {o for (code, o) in tally.orientations if code == value}
    orientation = seen.pop() if len(seen) == 1 else None
    return CardSeen(card, orientation, source)  # type: ignore[arg-type]


class PassTracker:
    """Groups frame reads into card passes and votes each into one game input.

    Feed every frame's verdict in order with :meth:`frame`, the shoe's card-exit sensor
    events with :meth:`card_exit`, the current time with :meth:`tick` when frames stop,
    and :meth:`flush` at the end of a stream. Each returns the inputs completed by it.
    """

    def __init__(
        self,
        *,
        min_confidence: float = 0.6,
        min_frames: int = 2,
        gap_frames: int = 2,
        sensor: bool = False,
        exit_grace_s: float = 0.05,
        exit_timeout_s: float = 1.0,
        source: str | None = "index",
        tail_limit_s: float = 0.25,
    ) -> None:
        if min_frames < 1 or gap_frames < 1:
            raise ValueError("min_frames and gap_frames must be at least 1")
        self.min_confidence = min_confidence
        self.min_frames = min_frames
        self.gap_frames = gap_frames
        self.sensor = sensor
        self.exit_grace_s = exit_grace_s
        self.exit_timeout_s = exit_timeout_s
        self.source = source
        self.tail_limit_s = tail_limit_s
        self._tally = Tally()
        self._empty_run = 0
        self._present = False
        self._pending_exit: float | None = None
        self._boundary = float("-inf")
        # Sensor mode: the exited card may linger in view for a frame or two after its
        # exit event; those tail frames must not start a "new card" (see frame()).
        self._tail = False
        self._tail_key: tuple[str, str] | None = None
        #: Frames of an exited card still in view after its pass was decided (ignored).
        self.tail_frames = 0
        #: Frames that arrived timestamped before a pass already decided (ignored).
        self.late_frames = 0
        #: Passes decided so far.
        self.passes = 0

    @classmethod
    def from_config(cls, config: object, *, sensor: bool, source: str | None) -> PassTracker:
        """Build from a :class:`~shoe_controller.vision.config.VisionConfig`.

        ``sensor`` says whether the shoe has a card-exit sensor (used when the config's
        ``pass_boundary`` is ``auto``).
        """
        boundary = getattr(config, "pass_boundary", "auto")
        use_sensor = sensor if boundary == "auto" else boundary == "sensor"
        return cls(
            min_confidence=config.min_confidence,  # type: ignore[attr-defined]
            min_frames=config.min_frames,  # type: ignore[attr-defined]
            gap_frames=config.gap_frames,  # type: ignore[attr-defined]
            sensor=use_sensor,
            exit_grace_s=config.exit_grace_s,  # type: ignore[attr-defined]
            exit_timeout_s=config.exit_timeout_s,  # type: ignore[attr-defined]
            source=source,
        )

    @property
    def in_pass(self) -> bool:
        """True while frames of an undecided pass are held."""
        return self._tally.frames > 0 or self._pending_exit is not None

    def frame(self, t: float, read: FrameRead) -> list[PassInput]:
        """One frame's verdict, taken at monotonic time ``t``."""
        if t <= self._boundary:
            self.late_frames += 1
            return []
        out = self.tick(t)
        if self._tail and t > self._boundary + self.tail_limit_s:
            self._tail = False  # a card that left the shoe cannot stay in view this long
        if self._tail:
            if read.kind == "empty":
                self._empty_run += 1
                if self._empty_run >= self.gap_frames:
                    self._tail = False
                return out
            key = _vote_key(read, self.min_confidence)
            if key is None or key == self._tail_key:
                self._empty_run = 0
                self.tail_frames += 1
                return out
            # A confident read of something else: the next card has arrived.
            self._tail = False
        if read.kind == "empty":
            self._empty_run += 1
            if self._empty_run >= self.gap_frames:
                self._present = False
                if not self.sensor and self._tally.frames:
                    out.append(self._decide())
            return out
        self._empty_run = 0
        if not self._present:
            self._present = True
            self._tally.presences += 1
        self._tally.add(t, read, self.min_confidence)
        return out

    def card_exit(self, t: float) -> list[PassInput]:
        """The shoe's card-exit sensor saw a card leave at monotonic time ``t``.

        Ignored (beyond closing a pass) when the tracker works by presence.
        """
        if not self.sensor:
            return []
        out: list[PassInput] = []
        if self._pending_exit is not None:
            # A second exit before the first was decided: the first ends where it is.
            out.append(self._close_exit())
        self._pending_exit = t
        return out

    def tick(self, now: float) -> list[PassInput]:
        """Let time pass: decide a pass whose grace period or exit timeout has run out."""
        out: list[PassInput] = []
        if self._pending_exit is not None and now > self._pending_exit + self.exit_grace_s:
            out.append(self._close_exit())
        elif (
            self.sensor
            and self._pending_exit is None
            and self._tally.frames
            and not self._present
            and now - self._tally.last_seen_t > self.exit_timeout_s
        ):
            self._tally = Tally()
            self.passes += 1
            out.append(UnreadableCard("a card was seen in the window but no card-exit event came"))
        return out

    def flush(self) -> list[PassInput]:
        """End of the stream: decide whatever is held."""
        if self._pending_exit is not None:
            return [self._close_exit()]
        if self._tally.frames and not self.sensor:
            return [self._decide()]
        if self._tally.frames:
            self._tally = Tally()
            self.passes += 1
            return [UnreadableCard("a card was seen in the window but no card-exit event came")]
        return []

    def _close_exit(self) -> PassInput:
        assert self._pending_exit is not None
        self._boundary = self._pending_exit + self.exit_grace_s
        self._pending_exit = None
        self._tail = self._present
        self._tail_key = next(iter(self._tally.votes)) if len(self._tally.votes) == 1 else None
        if self._tally.presences > 1:
            n = self._tally.presences
            self._reset()
            return UnreadableCard(f"{n} separate cards were seen for one card-exit event")
        return self._decide()

    def _decide(self) -> PassInput:
        result = vote(self._tally, self.min_frames, self.source)
        self._reset()
        return result

    def _reset(self) -> None:
        self._tally = Tally()
        self.passes += 1
        # A card still in the window when the pass is cut (sensor) starts a new presence.
        if self._present:
            self._tally.presences = 0
            self._present = False
