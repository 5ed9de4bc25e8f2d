"""A whole virtual table for `simulate`: shuffled shoes, a virtual dealer, error injection.

The daemon under simulation is the real one (shoe_controller.daemon) with its real
adapters: the dealer station on gpiozero's MockFactory pins, the firmware bridge's
device simulator on a pty (card exits and the shoe's scanner reads arrive over the
serial protocol), optionally the synthetic camera through the real reader and pass
tracker, the journal and the MQTT publisher.

The virtual dealer is the person at the table. It only sees what a dealer sees — the
events the daemon journals, as the dealer panel shows them — and acts physically:
deals the next card of its shuffled shoe when one is due, presses confirm on the
mock pins, loads a new shoe, turns the supervisor key when a fault calls. What is due
is a pure fold over the journaled events (:class:`DealerView`); so after a SIGKILL the
dealer reads the journal, knows how many cards of which shoe left it, and carries on
with the same shoe (shoes are shuffled from ``(seed, shoe number)``).

>>> v = DealerView(decks=8, burn="first_card")
>>> for ev in [{"type": "shoe_started", "shoe": 1, "decks": 8},
...            {"type": "burn_indicator", "shoe": 1, "card": "2H", "burn_count": 2}]:
...     v = v.apply(ev)
>>> v.phase, v.burn_left, v.consumed
('burning', 2, 1)
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal

import msgspec

from shoe_controller.dealer.lights import event_field, event_type
from shoe_controller.game.cards import ALL_CARDS, Card, parse_card
from shoe_controller.game.inputs import (
    CardSeen,
    ConfirmResult,
    CutCardSeen,
    ForeignCard,
    Input,
    ManualCard,
    NewRound,
    NewShoe,
    Pause,
    Resume,
    UnreadableCard,
)

__all__ = [
    "INJECT_KINDS",
    "DealerView",
    "Holds",
    "Injection",
    "VirtualDealer",
    "cut_position",
    "parse_inject",
    "shuffled_shoe",
]

log = logging.getLogger("shoe_controller.sim")

#: Error kinds `simulate --inject` knows.
INJECT_KINDS = ("extra-card", "unreadable", "foreign", "broker-outage")
#: Integrity alerts that are information for the pit, not a stop at the table.
INFO_ALERTS = frozenset({"advantage"})
#: Seconds between the supervisor's tries to resume a round paused with no alarm waiting.
RESUME_EVERY = 1.0


# -- [simulate] ---------------------------------------------------------------------------


class SimulateConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[simulate]``: defaults of `shoe-controller simulate` (its options override them).

    >>> SimulateConfig().shoes, SimulateConfig().reader
    (1, 'scanner')
    """

    #: Stop once the journal holds this many finished shoes.
    shoes: Annotated[int, msgspec.Meta(ge=1)] = 1
    #: Seconds between cards (0 = as fast as possible).
    pace: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    #: Shuffle seed: the same seed deals the same shoes.
    seed: int | str = 1
    #: Who reads the cards: the shoe's scanner over the serial link (fast), or synthetic
    #: camera frames through the real barcode or index reader and pass tracker.
    reader: Literal["scanner", "barcode", "index"] = "scanner"
    #: Errors to inject, as for ``--inject`` (e.g. "extra-card=0.02,unreadable=1").
    inject: str = ""
    #: Length of each injected broker outage, seconds.
    outage_seconds: Annotated[float, msgspec.Meta(gt=0)] = 3.0
    #: Seconds to wait at the end for the outbox to empty (when the broker is reachable).
    drain_timeout: Annotated[float, msgspec.Meta(ge=0)] = 30.0

    def __post_init__(self) -> None:
        parse_inject(self.inject, "inject")  # a bad spec is refused when the file is loaded


# -- shoes ------------------------------------------------------------------------------


def shuffled_shoe(seed: int | str, shoe: int, decks: int = 8) -> list[Card]:
    """The cards of shoe number ``shoe`` in dealing order: ``decks`` full decks,
    Fisher-Yates shuffled by a generator seeded from ``(seed, shoe)``.

    >>> a = shuffled_shoe(7, 1)
    >>> len(a), a == shuffled_shoe(7, 1), a == shuffled_shoe(7, 2)
    (416, True, False)
    >>> sorted(c.code for c in shuffled_shoe(1, 1, decks=1)) == sorted(c.code for c in ALL_CARDS)
    True
    """
    cards = [c for _ in range(decks) for c in ALL_CARDS]
    random.Random(f"shoe:{seed}:{shoe}").shuffle(cards)
    return cards


def cut_position(seed: int | str, shoe: int, cards: int) -> int:
    """Index of the card the cut card sits in front of: between 3/4 and 5/6 of a deck...
    precisely, 52 to 78 cards before the end of the shoe (about 70 rounds of 8 decks).

    >>> 416 - 78 <= cut_position(3, 1, 416) <= 416 - 52
    True
    """
    rng = random.Random(f"cut:{seed}:{shoe}")
    return cards - rng.randint(min(52, cards // 2), min(78, cards - 1))


# -- error injection ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Injection:
    """One kind of injected error: a per-opportunity ``rate`` (0-1) or a ``count``."""

    kind: str
    rate: float = 0.0
    count: int = 0


def parse_inject(text: str | None, what: str = "--inject") -> dict[str, Injection]:
    """``--inject`` text: comma-separated ``KIND[=N]``; N < 1 is a rate per round, N >= 1
    a count of times per shoe; KIND alone means once per shoe.

    >>> sorted(parse_inject("extra-card=0.05,unreadable=2,foreign").items())[0]
    ('extra-card', Injection(kind='extra-card', rate=0.05, count=0))
    >>> parse_inject("foreign")["foreign"].count
    1
    >>> parse_inject("bogus=1")
    Traceback (most recent call last):
    ...
    ValueError: --inject: unknown kind 'bogus'; known kinds: extra-card, unreadable, ...
    """
    out: dict[str, Injection] = {}
    if not text:
        return out
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        kind, _, value = part.partition("=")
        kind = kind.strip()
        if kind not in INJECT_KINDS:
            raise ValueError(f"{what}: unknown kind {kind!r}; known kinds: "
                             + ", ".join(INJECT_KINDS))
        try:
            n = float(value) if value else 1.0
        except ValueError:
            raise ValueError(f"{what}: {part!r}: expected {kind}=RATE (0-1) or "
                             f"{kind}=COUNT (a whole number)") from None
        if n < 0 or (n >= 1 and n != int(n)):
            raise ValueError(f"{what}: {part!r}: a rate is 0-1, a count a whole number")
        out[kind] = Injection(kind, rate=n, count=0) if n < 1 else Injection(kind, count=int(n))
    return out


# -- what the dealer sees ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DealerView:
    """What is due at the table, folded from journaled events (pure).

    ``phase``: ``no_shoe`` (load one), ``indicator`` (turn the first card), ``burning``
    (``burn_left`` cards to burn), ``between`` (rounds: deal / press new round),
    ``initial`` (the first four cards), ``draw`` (a prompted third card), ``wait`` (the
    core is deciding), ``result`` (confirm it). ``consumed`` counts the cards of the
    current shoe that left it and the journal accounts for; the next card dealt is
    ``shoe[consumed]``. ``alarm`` is the fault awaiting the supervisor, if any.
    """

    decks: int = 8
    burn: str = "first_card"
    burn_cards: int = 1
    shoe: int = 0
    shoes_ended: int = 0
    phase: str = "no_shoe"
    burn_left: int = 0
    round: int = 0
    round_cards: int = 0
    consumed: int = 0
    cut_seen: bool = False
    paused: bool = False
    carry: int = 0
    alarm: tuple[str, str] | None = None
    events: int = 0
    last_result: dict[str, Any] | None = field(default=None, compare=False)

    def _after_burn(self) -> DealerView:
        return replace(self, phase="between" if self.burn_left <= 0 else "burning")

    def apply(self, event: Any) -> DealerView:
        """The view after one journaled event (dict or Struct)."""
        kind = event_type(event)
        v = replace(self, events=self.events + 1)
        if kind == "shoe_started":
            v = replace(v, shoe=int(event_field(event, "shoe")), consumed=0, cut_seen=False,
                        paused=False, carry=0, alarm=None, round=0, round_cards=0)
            if v.burn == "first_card":
                return replace(v, phase="indicator")
            n = {"decks": v.decks, "fixed": v.burn_cards}.get(v.burn, 0)
            return replace(v, burn_left=n)._after_burn()
        if kind == "burn_indicator":
            return replace(v, consumed=v.consumed + 1,
                           burn_left=int(event_field(event, "burn_count")))._after_burn()
        if kind == "card_burned":
            v = replace(v, consumed=v.consumed + 1)
            if v.phase == "burning":
                v = replace(v, burn_left=v.burn_left - 1)._after_burn()
            return v
        if kind == "round_started":
            return replace(v, phase="initial", round=int(event_field(event, "round")),
                           round_cards=0)
        if kind == "card_dealt":
            # A carried misdeal card was counted when it came out; do not count it twice.
            consumed = v.consumed + (0 if v.carry else 1)
            cards = v.round_cards + 1
            phase = "initial" if cards < 4 else "wait"
            return replace(v, consumed=consumed, carry=max(0, v.carry - 1), round_cards=cards,
                           phase=phase)
        if kind == "draw_prompt":
            prompt = event_field(event, "prompt")
            return replace(v, phase="draw" if prompt in ("player_draws", "banker_draws")
                           else "wait")
        if kind == "round_result":
            return replace(v, phase="result", last_result=_as_dict(event))
        if kind == "result_confirmed":
            return replace(v, phase="between")
        if kind == "round_voided":  # by the supervisor; the misdeal policy's void still calls
            alarm = v.alarm if event_field(event, "reason") == "misdeal" else None
            return replace(v, phase="between", alarm=alarm)
        if kind == "shoe_ended":
            return replace(v, phase="no_shoe", shoes_ended=v.shoes_ended + 1, alarm=None)
        if kind == "cut_card":
            return replace(v, cut_seen=True)
        if kind == "misdeal":
            policy = event_field(event, "policy")
            return replace(v, consumed=v.consumed + 1, carry=v.carry + (policy == "carry"),
                           alarm=("misdeal", str(event_field(event, "kind"))))
        if kind == "round_paused":
            return replace(v, paused=True)
        if kind == "round_resumed":
            return replace(v, paused=False, alarm=None)
        if kind == "fault" and event_field(event, "kind") != "input_refused":
            # (a refusal answers the supervisor's own action: it calls nobody)
            return replace(v, alarm=("fault", str(event_field(event, "kind"))))
        if kind == "integrity_alert" and event_field(event, "kind") not in INFO_ALERTS:
            return replace(v, alarm=("integrity_alert", str(event_field(event, "kind"))))
        return v

    def situation(self) -> tuple[Any, ...]:
        """What the dealer acts on (everything but the event count and the last result)."""
        return (self.shoe, self.shoes_ended, self.phase, self.burn_left, self.round,
                self.round_cards, self.consumed, self.cut_seen, self.paused, self.carry,
                self.alarm)

    def fold(self, events: Iterable[Any]) -> DealerView:
        v = self
        for ev in events:
            v = v.apply(ev)
        return v


def _as_dict(event: Any) -> dict[str, Any]:
    if isinstance(event, dict):
        return event
    from shoe_controller.game.events import event_to_dict

    return event_to_dict(event)


# -- the dealer ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Holds:
    """Seconds the virtual table keeps a state on screen (`simulate --hold-*`): the
    supervisor takes ``supervisor`` s to come to a paused table (paused, misdeal), the
    dealer leaves bets open ``bets`` s before each round's first card, and the shoe is
    shuffled for ``shoe_break`` s between shoes (shoe ended / shuffling).

    >>> Holds().supervisor, Holds(shoe_break=20).shoe_break
    (0.0, 20)
    """

    supervisor: float = 0.0
    bets: float = 0.0
    shoe_break: float = 0.0


#: How the dealer's hands reach the daemon: ``card(card)`` (a card passes the reader),
#: ``unreadable(card)``, ``foreign(payload)``, ``cut()``, ``new_shoe()``, ``press(name)``,
#: ``key(on)``, ``manual(card)``; and what they feel: ``locked()`` (the shoe's draw lock
#: holds the cards back), and the supervisor's ``resume()`` (the control socket's).
@dataclass
class Hands:
    card: Callable[[Card], None]
    unreadable: Callable[[Card], None]
    foreign: Callable[[str], None]
    cut: Callable[[], None]
    new_shoe: Callable[[], None]
    press: Callable[[str], None]
    key: Callable[[bool], None]
    manual: Callable[[Card], None]
    locked: Callable[[], bool] | None = None
    resume: Callable[[], None] | None = None


def direct_hands(submit: Callable[[Input, str], None]) -> Hands:
    """Hands that put inputs straight on the daemon's queue (no serial, no pins).

    Used by unit tests of the dealer; `simulate` goes through the pty and the mock pins.
    """
    presses = {"confirm": ConfirmResult(), "new_round": NewRound()}
    return Hands(
        card=lambda c: submit(CardSeen(c, None, "sim"), "sim"),
        unreadable=lambda c: submit(UnreadableCard("simulated unreadable pass"), "sim"),
        foreign=lambda p: submit(ForeignCard(p), "sim"),
        cut=lambda: submit(CutCardSeen(), "sim"),
        new_shoe=lambda: submit(NewShoe(), "sim"),
        press=lambda name: submit(presses[name], name),
        key=lambda on: submit(Pause("supervisor key") if on else Resume(),
                              "key_on" if on else "key_off"),
        manual=lambda c: submit(ManualCard(c), "supervisor"),
        resume=lambda: submit(Resume(), "supervisor"),
    )


class VirtualDealer:
    """Deals shuffled shoes into the daemon, following what the table shows.

    ``observe(entries)`` is registered as a daemon observer (it runs on the core loop's
    thread); :meth:`run` runs on its own thread and acts through ``hands``.
    """

    def __init__(
        self,
        hands: Hands,
        *,
        shoes: int,
        seed: int | str,
        rules: Any,
        pace: float = 0.0,
        inject: dict[str, Injection] | None = None,
        on_broker_outage: Callable[[], None] | None = None,
        timeout: float = 10.0,
        holds: Holds | None = None,
    ) -> None:
        self.hands = hands
        self.holds = holds or Holds()
        self.shoes = shoes
        self.seed = seed
        self.rules = rules
        self.pace = pace
        self.inject = inject or {}
        self.on_broker_outage = on_broker_outage
        self.timeout = timeout
        self.rng = random.Random(f"inject:{seed}")
        self.view = DealerView(decks=rules.decks, burn=rules.burn, burn_cards=rules.burn_cards)
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._deck: list[Card] = []
        self._deck_shoe = 0
        self._cut_at = 0
        self._injected: dict[tuple[int, str], int] = {}
        self.results: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._last_resume = 0.0
        #: times the dealer found the shoe's draw lock engaged and waited
        self.lock_waits = 0

    # -- seeing --------------------------------------------------------------------------

    def catch_up(self, events: Iterable[Any]) -> None:
        """Fold events already journaled before this run (resume after a restart)."""
        with self._cond:
            self.view = self.view.fold(events)

    def observe(self, entries: Sequence[Any]) -> None:
        with self._cond:
            for entry in entries:
                ev = entry.data if hasattr(entry, "data") else entry
                self.view = self.view.apply(ev)
                if event_type(ev) == "round_result":
                    self.results.append(ev)
            self._cond.notify_all()

    def _wait_change(self, before: DealerView, timeout: float | None = None) -> bool:
        """Wait until the table shows something the dealer acts on changed since
        ``before`` (not merely another event: an analysis or an info alert arriving after
        a card must not make the dealer deal the same card twice); False on timeout."""
        key = before.situation()
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        with self._cond:
            while self.view.situation() == key and not self._stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- acting ----------------------------------------------------------------------------

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()

    def _hold(self, seconds: float) -> bool:
        """Keep the table as it is for ``seconds`` (so a screen shows the state); True if
        the run was stopped meanwhile."""
        return seconds > 0 and self._stop.wait(seconds)

    def _deck_for(self, shoe: int) -> list[Card]:
        if self._deck_shoe != shoe:
            self._deck = shuffled_shoe(self.seed, shoe, self.rules.decks)
            self._cut_at = cut_position(self.seed, shoe, len(self._deck))
            self._deck_shoe = shoe
        return self._deck

    def _should(self, kind: str, shoe: int) -> bool:
        """Whether to inject ``kind`` at this opportunity (rates per opportunity, counts
        spread over the first rounds of each shoe)."""
        spec = self.inject.get(kind)
        if spec is None:
            return False
        if spec.rate:
            return self.rng.random() < spec.rate
        done = self._injected.get((shoe, kind), 0)
        if done < spec.count and self.rng.random() < 0.2:
            self._injected[(shoe, kind)] = done + 1
            return True
        return False

    def _act(self, v: DealerView) -> bool:
        """Do the one thing due in view ``v``; False when the run is complete."""
        if v.phase == "no_shoe":
            if v.shoes_ended >= self.shoes:
                return False
            if v.shoes_ended and self._hold(self.holds.shoe_break):
                return False  # stopped while the shoe was being shuffled
            self.hands.new_shoe()
            return True
        if v.phase == "wait":
            return True  # the core is deciding: watch for the next event
        if v.paused:
            # Play is stopped and the supervisor has been (no alarm is waiting): they
            # come back now and then and try to resume (refused while e.g. the disk is
            # still full).
            now = time.monotonic()
            if self.hands.resume is not None and now - self._last_resume >= RESUME_EVERY:
                self._last_resume = now
                self.hands.resume()
            return True
        if v.phase == "result":
            if self._should("extra-card", v.shoe):
                self._deal(v, extra=True)
            elif self.rules.confirm == "button":
                self.hands.press("confirm")
            return True
        if v.phase == "between" and self._hold(self.holds.bets):
            return False  # stopped while bets were open
        if v.phase == "between" and self.rules.rounds == "button":
            self.hands.press("new_round")
            return True
        if v.phase == "between" and self.on_broker_outage is not None and \
                self._should("broker-outage", v.shoe):
            self.on_broker_outage()
        self._deal(v)
        return True

    def _held_back(self) -> bool:
        """The shoe's draw lock is engaged: a real dealer cannot draw, and waits. True if
        it still holds when the dealer is stopped."""
        locked = self.hands.locked
        if locked is None or not locked():
            return False
        self.lock_waits += 1
        while locked() and not self._stop.is_set():
            self._stop.wait(0.02)
        return locked()

    def _deal(self, v: DealerView, extra: bool = False) -> None:
        deck = self._deck_for(v.shoe)
        if self.pace:
            time.sleep(self.pace)
        if self._held_back():
            return
        with self._cond:
            if self.view.situation() != v.situation():
                return  # the table changed while the lock held the cards: look again
        if not v.cut_seen and v.consumed >= self._cut_at and v.phase != "burning":
            self.hands.cut()
            return
        if v.consumed >= len(deck):
            raise RuntimeError(f"shoe {v.shoe} ran out of cards (no cut card came?)")
        card = deck[v.consumed]
        if not extra and v.phase in ("initial", "draw"):
            if self._should("foreign", v.shoe):
                self.hands.foreign("ZZ-X1")
                return
            if self._should("unreadable", v.shoe):
                self.hands.unreadable(card)
                return
        self.hands.card(card)

    def _supervise(self, v: DealerView) -> None:
        """The supervisor comes to the table: turns the key, fixes, turns it back, and
        waits until the table shows the alarm is over."""
        assert v.alarm is not None
        what, kind = v.alarm
        log.info("supervisor called: %s %s (shoe %d round %d)", what, kind, v.shoe, v.round)
        if kind in ("resume_refused", "input_refused"):
            # The table said no to the supervisor's own action ("try again in a
            # moment"): they wait a moment and try again, without turning the key
            # (which would pause and resume again, and again).
            if kind == "resume_refused":
                self._stop.wait(RESUME_EVERY / 4)
                if self.hands.resume is not None:
                    self.hands.resume()
            with self._cond:
                if self.view.alarm == v.alarm:
                    self.view = replace(self.view, alarm=None)
            return
        if self._hold(self.holds.supervisor):
            return  # stopped while the table waited for the supervisor
        if kind == "resume_refused":
            # The table said why (the shoe link is down, or its draw lock not confirmed
            # yet): a real supervisor waits a moment before trying again.
            self._stop.wait(0.25)
        self.hands.key(True)
        if kind.startswith("unreadable"):
            # Checked by eye: the card that could not be read is the next of the shoe.
            self.hands.manual(self._deck_for(v.shoe)[v.consumed])
        self.hands.key(False)
        deadline = time.monotonic() + min(self.timeout, 2.0)
        with self._cond:
            while self.view.alarm == v.alarm and self.view.events >= v.events:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    # Nothing in the journal answers the key (e.g. a fault between
                    # rounds): the supervisor has seen it, that is all it needed.
                    self.view = replace(self.view, alarm=None)
                    break
                self._cond.wait(left)

    def run(self) -> None:
        """Deal until ``shoes`` shoes ended (counting shoes already in the journal)."""
        try:
            while not self._stop.is_set():
                with self._cond:
                    v = self.view
                if v.alarm is not None:
                    self._supervise(v)
                    continue
                if not self._act(v):
                    break
                if v.paused and v.alarm is None:
                    self._wait_change(v, RESUME_EVERY)  # then the supervisor looks again
                elif not self._wait_change(v):
                    with self._cond:
                        now = self.view
                    log.warning("virtual dealer: no event %.0f s after acting in %s "
                                "(shoe %d round %d); looking again", self.timeout, now.phase,
                                now.shoe, now.round)
        except BaseException as exc:  # reported by the caller
            self.error = exc
            log.exception("virtual dealer failed")
        finally:
            self.done.set()


def payload_for(card: Card, deck: int = 1) -> str:
    """The shoe scanner's payload for a card, in the default barcode mapping ``D<n>-QH``.

    >>> payload_for(parse_card("QH"), 3)
    'D3-QH'
    """
    return f"D{deck}-{card.code}"


_PAYLOAD = re.compile(r"^(?:D\d+-)?([A2-9TJQK][SHDC])$")


def card_of_payload(payload: str) -> Card | None:
    """The card a default-mapping payload names, None for anything else.

    >>> card_of_payload("D3-QH"), card_of_payload("ZZ-FOREIGN-1")
    (Card('QH'), None)
    """
    m = _PAYLOAD.match(payload.strip().upper())
    return parse_card(m.group(1)) if m else None


def wait_until(cond: Callable[[], bool], timeout: float, step: float = 0.05) -> bool:
    """Poll ``cond`` until true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()
