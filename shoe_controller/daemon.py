"""The daemon: one core loop from inputs to journaled events to outputs.

Everything that happens at the table arrives as a game input on one queue: card reads
from the camera's pass tracker, the shoe's serial link (card exits, scanner reads,
buttons, lid, faults), the dealer station's buttons and key switch. The core loop takes
one input at a time and, in this order:

1. asks the pure game core what it means (``decide``);
2. appends those events to the journal (one SQLite transaction, fsynced, hash-chained;
   the outbox rows go in the same transaction) — nothing acts on an event before this;
3. folds them into the shoe state (``evolve``) and the dealer panel (``lights.project``);
4. hands them to the outputs: LEDs and buzzer (the publisher already staged the casino
   messages with the release policy and wrote them to the broker's socket; the public
   display state is staged once the loop is idle, :data:`DISPLAY_IDLE`), observers (the
   virtual dealer), the shoe's draw lock (engaged while play is paused);
5. runs the game-protection projection over those events (exact odds of what is left,
   integrity tests) and journals and outputs what it raises the same way — once the
   loop is idle (:data:`PROJECTION_IDLE`), so its computation delays neither the card's
   message on its way out nor the next card; finished shoes' fingerprints go to the
   fingerprint store (``fingerprint_history.py``) for the shuffle-repeat test.

On start it verifies the journal's chain, folds ``evolve`` over every journaled event
and rebuilds the projection's state with ``protection.fold``, so after a crash or a
power cut the shoe resumes where it stopped, mid-round included. It tells systemd
READY=1 when the inputs are open and pings WATCHDOG=1 from the core loop itself (a
wedged loop gets the service restarted, not just a dead process). A camera or serial
failure becomes a ``Fault`` input and the adapter retries; nothing an adapter does can
stop the loop. SIGTERM stops it cleanly.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from shoe_controller.dealer.lights import (
    Lights,
    event_type,
    project,
    supervisor_key,
    with_notice,
)
from shoe_controller.game.inputs import Fault, Input, Pause, Resume
from shoe_controller.game.shoe_link import ShoeLink, resume_refusal
from shoe_controller.journal import Checkpointer, Journal, JournalError
from shoe_controller.sdnotify import Notifier
from shoe_controller.storage import BALLAST_BYTES, DiskGuard, mb

__all__ = [
    "ConfigRefused",
    "Daemon",
    "DaemonError",
    "GameCore",
    "InputSource",
    "Item",
    "StartRefused",
    "Submit",
    "build_daemon",
    "device_keyring",
    "journal_path",
    "load_device_key",
    "load_table_config",
    "open_daemon_journal",
    "open_fingerprints",
]

log = logging.getLogger("shoe_controller.daemon")

#: ``submit(input, origin)``: put one input on the daemon's queue (thread-safe).
Submit = Callable[[Input, str], None]
#: Called by the core loop with every batch of journaled entries, after the outputs.
Observer = Callable[[Sequence[Any]], None]


class DaemonError(RuntimeError):
    """The daemon cannot start (bad journal, unusable configuration...); says why."""


class InputSource(Protocol):
    """An adapter feeding the queue: camera, serial link... ``start`` must not block."""

    name: str

    def start(self, submit: Submit) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Item:
    """One queued input, where it came from, and when the edge read it (monotonic).
    ``done(events, state_before)``: called once the core decided (and the events are
    journaled), e.g. the control socket's reply."""

    input: Input | None
    origin: str
    t_read: float = field(default_factory=time.monotonic)
    done: Callable[[Sequence[Any], Any], None] | None = None


_STOP = Item(None, "stop")

#: Seconds without input after which the core loop runs the deferred game-protection
#: projection (a dealer's next card is hundreds of ms away; by then the last card's
#: messages are long out).
PROJECTION_IDLE = 0.02
#: ... and the longest it is deferred while inputs keep coming.
PROJECTION_MAX_WAIT = 1.0
#: Seconds without input after which the core loop stages the public display state
#: folded since the last one (its JSON is ~18 kB: encoding and staging it right after a
#: card held up that card's message by ~1 ms); by then the card's message is out.
DISPLAY_IDLE = 0.002
#: ... and the longest it waits while inputs keep coming.
DISPLAY_MAX_WAIT = 0.25
#: Events after which the projection analyses a round (what must not pile up).
_ROUND_ENDS = frozenset({"result_confirmed", "round_voided", "shoe_ended"})
#: The interpreter's thread switch interval while a daemon runs (Python's default: 5 ms).
#: An input thread with a card (the serial link, the camera) waits for the interpreter
#: behind whatever thread computes (the core loop's round analysis or display state) up to
#: the whole interval before it can even queue the card. 0.5 ms bounds that wait; the
#: cost is a few more switches, only when threads contend.
SWITCH_INTERVAL = 0.0005


def tune_interpreter() -> None:
    """Runtime settings for a card's latency, once the daemon's long-lived objects exist:
    the switch interval (:data:`SWITCH_INTERVAL`), and ``gc.freeze()`` so the periodic
    full garbage collection no longer walks every module, class and resumed state built
    at start (it took 16-18 ms, once per ~400 cards, on the card's path). Idempotent.

    >>> tune_interpreter(); import sys; sys.getswitchinterval() <= SWITCH_INTERVAL
    True
    """
    import sys

    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
    gc.collect()
    gc.freeze()


class GameCore:
    """The pure core behind one mutable reference: shoe state + protection state.

    ``decide`` returns the core's events for an input and ``protect`` what the
    game-protection projection raises on them, each with the states they lead to,
    without committing: the daemon adopts a state only once its events are journaled.
    ``known`` / ``salt``: earlier shoes' fingerprints and their salt (the fingerprint
    store), for the shuffle-repeat test.
    """

    def __init__(self, rules: Any, analytics: Any | None = None, *,
                 known: Any = None, salt: bytes = b"") -> None:
        from shoe_controller.game import shoe as shoe_mod

        self._decide = shoe_mod.decide
        self._evolve = shoe_mod.evolve
        self.state: Any = shoe_mod.initial_state(rules)
        self._protect: Callable[[Any, Any], tuple[Any, Sequence[Any]]] | None = None
        self._fold: Callable[[Any, Any], Any] | None = None
        self._shoe_fit: Callable[[Any], tuple[Any, Sequence[Any]]] | None = None
        self.pstate: Any = None
        #: (shoe, fingerprints) of the shoes the last :meth:`protect` saw end
        self.finished: list[tuple[int, tuple[int, ...]]] = []
        try:
            from shoe_controller.game import protection
        except ImportError:  # pragma: no cover - the projection ships with the core
            return
        self._protect = protection.protect
        self._fold = protection.fold
        self._shoe_fit = protection.shoe_fit
        self.pstate = protection.initial_state(rules, analytics, known=known, salt=salt)

    def decide(self, inp: Input) -> tuple[list[Any], Any]:
        """The core's events for ``inp`` and the shoe state after them (not committed)."""
        state = self.state
        events = list(self._decide(state, inp))
        for ev in events:
            state = self._evolve(state, ev)
        return events, state

    def protect(self, events: Sequence[Any]) -> tuple[list[Any], Any, Any]:
        """What the game-protection projection raises on ``events`` (already committed),
        with the protection state and the shoe state after them (not committed).
        Shoes that ended among ``events`` are left in :attr:`finished` with their
        fingerprints (for the store)."""
        self.finished = []
        if self._protect is None:
            return [], self.pstate, self.state
        pstate, state, raised = self.pstate, self.state, []
        for ev in events:
            pstate, out = self._protect(pstate, ev)
            if event_type(ev) == "shoe_ended" and self._shoe_fit is not None:
                pstate, fitted = self._shoe_fit(pstate)  # seconds, once a shoe: not in fold
                out = (*out, *fitted)
            for extra in out:
                raised.append(extra)
                state = self._evolve(state, extra)
            if event_type(ev) == "shoe_ended":
                self.finished.append((pstate.shoe, tuple(pstate.fingerprints)))
        return raised, pstate, state

    def fold(self, event: Any) -> None:
        """Replay one journaled event (resume): evolve, and feed the projection the core's
        events (what it raised itself is in the journal already)."""
        self.state = self._evolve(self.state, event)
        self.fold_protection(event)

    def fold_protection(self, event: Any) -> None:
        """Feed the projection one journaled event (not what it raised itself)."""
        if self._protect is not None and event_type(event) != "shoe_analysis":
            self.pstate, _ = self._protect(self.pstate, event)

    def replay(self, event: Any) -> None:
        """Resume, first half: evolve the shoe state by one journaled event."""
        self.state = self._evolve(self.state, event)

    def rebuild_protection(self, events: Sequence[Any]) -> None:
        """Resume, second half: rebuild the projection's state from the journaled
        ``events`` with ``protection.fold`` in one call. Same state as :meth:`fold` event
        by event, but the per-round analyses and tests of finished shoes are skipped (a
        long journal resumes in a moment instead of re-running every shoe's odds)."""
        if self._fold is not None:
            self.pstate = self._fold(
                self.pstate, [ev for ev in events if event_type(ev) != "shoe_analysis"])


class Daemon:
    """The table's core loop and its wiring. See the module docstring for the order.

    ``journal`` is an open :class:`shoe_controller.journal.Journal`; ``publisher`` is a
    :class:`shoe_controller.publish.publisher.Publisher` on that journal (its ``append``
    writes journal and outbox rows in one transaction) or None (journal only);
    ``station`` is a :class:`~shoe_controller.dealer.station.Station` or None;
    ``sources`` are the input adapters.
    """

    def __init__(
        self,
        *,
        rules: Any,
        journal: Any,
        analytics: Any | None = None,
        publisher: Any | None = None,
        station: Any | None = None,
        sources: Sequence[InputSource] = (),
        notifier: Notifier | None = None,
        clock: Callable[[], float] = time.monotonic,
        fingerprints: Any | None = None,
        disk: DiskGuard | None = None,
        metrics: Any | None = None,
    ) -> None:
        self.journal = journal
        #: a shoe_controller.metrics.Metrics (None: no metrics)
        self.metrics = metrics
        if metrics is not None:
            metrics.daemon = self
        #: free space against the reserve (None: only write failures are caught)
        self.disk = disk
        self.fingerprints = fingerprints
        self.publisher = publisher
        self.station = station
        self.sources = list(sources)
        self.notifier = notifier or Notifier()
        self.clock = clock
        self.queue: queue.Queue[Item] = queue.Queue()
        self._journal_id: str | None = None
        known, salt = None, b""
        if fingerprints is not None:
            known, salt = fingerprints.known(self.journal_id()), fingerprints.salt
        self.core = GameCore(rules, analytics, known=known, salt=salt)
        self.lights = Lights()
        self.observers: list[Observer] = []
        self.stopping = threading.Event()
        self.ready = threading.Event()
        self.started_at = clock()
        self.ready_after: float | None = None
        self.resumed_events = 0
        self.inputs_handled = 0
        self.errors = 0
        #: WAL checkpoints off the card's path (started with the daemon)
        self.checkpointer: Checkpointer | None = None
        self._last_watchdog = 0.0
        self._last_status = 0.0
        #: the status line's seq and outbox backlog, frozen while a round is open
        self._status_seq: int | None = None
        self._status_outbox: int | None = None
        self._locked: bool | None = None
        #: core events journaled that the projection has not seen yet (deferred)
        self._unprotected: list[Any] = []
        #: set while the projection runs (the whole-shoe fit takes seconds at a shoe's
        #: end): ``projection_idle`` waits for it, so nothing it raises is cut off
        self._projecting = threading.Event()
        self._unprotected_since = 0.0
        self._unprotected_ends = 0
        #: shoe_analysis events lost in a crash, rebuilt by resume(), journaled by start()
        self._missing_analyses: list[Any] = []
        #: why play is stopped for storage ("disk full..."), None when it is not
        self.disk_full: str | None = None
        #: event batches decided but not yet journaled (a write failed): kept in memory,
        #: in order, and written when space returns; ("core"|"projection", events)
        self._held: list[tuple[str, list[Any]]] = []
        self._last_disk_try = 0.0
        #: (UTC time, kind, detail) of the last fault an input or the daemon reported
        self.last_fault: tuple[str, str, str] | None = None

    # -- inputs ------------------------------------------------------------------------

    def submit(self, inp: Input, origin: str = "internal", t_read: float | None = None,
               done: Callable[[Sequence[Any], Any], None] | None = None) -> None:
        """Queue one input (thread-safe; called from adapters' threads). ``done``: see
        :class:`Item`."""
        self.queue.put(Item(inp, origin, self.clock() if t_read is None else t_read, done))

    # -- start -------------------------------------------------------------------------

    def resume(self) -> int:
        """Fold every journaled event into the core and the panel; returns their count.

        The journal was verified when it was opened; an event the core cannot fold is a
        journal this program cannot continue: refuse, naming the seq.
        """
        events: list[Any] = []
        seqs: list[int] = []
        from shoe_controller.journal import JOURNAL_EVENT_TYPES

        for entry in self.journal.replay():
            if entry.type in JOURNAL_EVENT_TYPES:
                continue  # the journal's own (journal_started): not the game's
            try:
                event = entry.event()
                self.core.replay(event)
            except Exception as exc:
                raise DaemonError(
                    f"journal {self.journal.path}: event seq {entry.seq} ({entry.type}) "
                    f"cannot be replayed into the game core: {exc}"
                ) from exc
            self.lights = project(self.lights, event)
            events.append(event)
            seqs.append(entry.seq)
            if entry.type == "round_started":
                self._status_seq = entry.seq - 1  # the status line's seq (describe)
            elif not getattr(self.core.state, "round_open", False):
                self._status_seq = entry.seq
        if events:
            before = self.core.pstate
            try:
                self.core.rebuild_protection(events)
            except Exception:
                # Find the event to name, the slow way (this is the unusual path).
                self.core.pstate = before
                for seq, event in zip(seqs, events, strict=True):
                    try:
                        self.core.fold_protection(event)
                    except Exception as exc:
                        raise DaemonError(
                            f"journal {self.journal.path}: event seq {seq} "
                            f"({event_type(event)}) cannot be replayed into the "
                            f"game-protection projection: {exc}") from exc
                raise
        self.resumed_events = len(events)
        self._store_finished_shoe()
        if events:
            self._missing_analyses = self._lost_analyses(before, events)
            self._missing_analyses += self._lost_fit(events)
        return len(events)

    def _lost_fit(self, events: Sequence[Any]) -> list[Any]:
        """The whole-shoe fit of the last shoe when its end is the last thing in the
        journal and no fit alert of it is (the process stopped during the fit, which
        runs after ``shoe_ended`` is journaled): run once more (it is deterministic, so
        exactly what the lost run would have raised, if anything)."""
        if self.core._shoe_fit is None or self.core.pstate is None:
            return []
        tags = [event_type(ev) for ev in events]
        ends = [i for i, t in enumerate(tags) if t == "shoe_ended"]
        starts = [i for i, t in enumerate(tags) if t == "shoe_started"]
        if not ends or (starts and starts[-1] > ends[-1]):
            return []
        if any(t == "integrity_alert" and getattr(ev, "evidence", {}).get("test")
               == "shuffle_fit_previous_shoe" for ev, t in
               zip(events[ends[-1]:], tags[ends[-1]:], strict=True)):
            return []
        pstate, fitted = self.core._shoe_fit(self.core.pstate)
        self.core.pstate = pstate
        return list(fitted)

    def _lost_analyses(self, initial: Any, events: Sequence[Any]) -> list[Any]:
        """The ``shoe_analysis`` events of the current shoe's finished rounds that are not
        in the journal (the process stopped between a round's end and its deferred
        analysis): computed again exactly as then, by folding the projection over the
        shoe's events in order. Earlier shoes are history and left as they are."""
        if self.core._protect is None or self.core._fold is None:
            return []
        tags = [event_type(ev) for ev in events]
        starts = [i for i, t in enumerate(tags) if t == "shoe_started"]
        if not starts:
            return []
        current = starts[-1]
        have = {int(getattr(ev, "round", 0)) for ev, t in
                zip(events[current:], tags[current:], strict=True) if t == "shoe_analysis"}
        ends = {int(getattr(ev, "round", 0)) for ev, t in
                zip(events[current:], tags[current:], strict=True)
                if t in ("result_confirmed", "round_voided")}
        if not ends - have:
            return []  # the usual case: nothing lost, nothing recomputed
        core_events = [ev for ev, t in zip(events, tags, strict=True) if t != "shoe_analysis"]
        cut = sum(1 for t in tags[:current] if t != "shoe_analysis")
        pstate = self.core._fold(initial, core_events[:cut])
        lost = []
        for ev in core_events[cut:]:
            pstate, out = self.core._protect(pstate, ev)
            lost += [x for x in out if event_type(x) == "shoe_analysis"
                     and int(getattr(x, "round", 0)) not in have]
        return lost

    def journal_id(self) -> str | None:
        """The journal's identity for the fingerprint store: its first event's hash
        (None while it is empty)."""
        if self._journal_id is None:
            first = next(iter(self.journal.replay(1, 1)), None)
            self._journal_id = None if first is None else first.hash
        return self._journal_id

    def _store_finished_shoe(self) -> None:
        """After a resume: the last shoe of the journal ended, but the process may have
        stopped before its fingerprints reached the store (idempotent)."""
        pstate = self.core.pstate
        if getattr(pstate, "ended", False) and pstate.shoe:
            self._store_fingerprints([(pstate.shoe, tuple(pstate.fingerprints))])

    def _store_fingerprints(self, finished: Sequence[tuple[int, tuple[int, ...]]]) -> None:
        """Keep finished shoes' fingerprints for the shuffle-repeat test of later shoes
        (and later runs). A store that fails is logged: the table goes on (the shoes
        are still in the journal; the projection still knows them in this process)."""
        if self.fingerprints is None or not finished:
            return
        try:
            journal = self.journal_id()
            if journal is None:
                return
            for shoe, fps in finished:
                self.fingerprints.add_shoe(journal, shoe, fps)
        except Exception:
            self.errors += 1
            log.exception("cannot store the fingerprints of shoe(s) %s in %s",
                          [shoe for shoe, _ in finished],
                          getattr(self.fingerprints, "path", "the fingerprint store"))

    def start(self) -> None:
        """Resume from the journal, open outputs and inputs, then say READY."""
        n = self.resume()
        if n:
            log.info("resumed from the journal: %d events, last seq %d (%s)",
                     n, self.journal.last_seq, self.describe())
        lost, self._missing_analyses = self._missing_analyses, []
        if lost:
            committed = self._commit("projection", lost)
            if committed is not None:
                self._outputs(lost, committed)
            log.warning("rebuilt %s of shoe %s, lost when the process stopped before it was "
                        "journaled",
                        ", ".join(f"the {event_type(x)} of round {getattr(x, 'round', '?')}"
                                  if event_type(x) == "shoe_analysis" else
                                  "the whole-shoe fit's alert" for x in lost),
                        getattr(lost[0], "shoe", "?"))
        if self.station is not None:
            if getattr(self.station, "key_on", False):  # the key was left on: no alarm sound
                self.lights = supervisor_key(self.lights, on=True)
            self.station.show(self.lights)
        self.checkpointer = Checkpointer(self.journal).start()
        bind_to = getattr(self.metrics, "bind_to", None)
        if self.metrics is not None and bind_to is not None:
            try:
                port = self.metrics.serve(*bind_to)
                log.info("metrics on http://%s:%d/metrics", bind_to[1], port)
            except OSError as exc:  # the table plays on without its metrics
                log.error("metrics: cannot serve on %s:%d: %s", bind_to[1], bind_to[0], exc)
        if self.publisher is not None:
            self.publisher.start()
        for source in self.sources:
            try:
                source.start(self.submit)
            except Exception as exc:  # an input that cannot open is a fault, not a crash
                log.error("input %s failed to start: %s", source.name, exc)
                self.submit(Fault(f"{source.name}_lost", str(exc)), source.name)
        if self.disk is not None and self.disk.low():
            # started on a full disk: the ballast (if the journal's opening did not need
            # it already) makes room for the disk_full fault to be journaled now; play
            # stays stopped until space is freed
            self.disk.release_ballast()
            self._stop_for_disk(f"disk full at start: {self.disk.describe()} on "
                                f"{self.disk.dir}")
        elif self.disk is not None:
            self.disk.keep_ballast()
        self._update_lock()  # resumed into a paused round: the shoe stays locked
        tune_interpreter()
        self.ready_after = self.clock() - self.started_at
        self.notifier.ready(self.describe())
        self._last_watchdog = self.clock()
        self.ready.set()

    def status(self) -> dict[str, Any]:
        """What `shoe-controller status` shows (plain JSON data; any thread, read without
        locks: figures are a moment's, not a transaction's)."""
        import platform

        import shoe_controller
        from firmware_bridge.protocol import PROTOCOL_VERSION

        st = self.core.state
        phase = str(getattr(st, "phase", "?"))
        paused = getattr(st, "paused", None)
        link = self.shoe_link()
        pub = self.publisher
        broker: dict[str, Any] = {"enabled": pub is not None}
        outbox: int | None = None
        if pub is not None:
            link_obj = getattr(pub, "_link", None)
            broker.update(connected=bool(pub.connected), last_error=pub.last_error,
                          disconnects=int(getattr(link_obj, "disconnects", 0) or 0))
            with contextlib.suppress(Exception):
                outbox = int(pub.pending())
        in_play = bool(getattr(st, "round_open", False))
        if in_play:
            outbox = self._status_outbox
        disk: dict[str, Any] = {"full": self.disk_full, "held_batches": len(self._held)}
        if self.disk is not None:
            disk.update(free_bytes=self.disk.free(), reserve_bytes=self.disk.reserve)
        fault = None
        if self.last_fault is not None:
            fault = dict(zip(("time", "kind", "detail"), self.last_fault, strict=True))
        return {
            "phase": "disk_full" if self.disk_full else ("paused" if paused else phase),
            "paused": paused,
            "shoe": getattr(st, "shoe", None) or None,
            "round": getattr(st, "round", None) or None,
            "round_open": bool(getattr(st, "round_open", False)),
            # while a round is open, the seq and backlog it opened with (as the status
            # line): how far they moved would tell how many cards it has had
            "journal": {"path": self.journal.path,
                        "last_seq": self._status_seq if in_play and self._status_seq
                        is not None else self.journal.last_seq},
            "link": None if link is None else {"up": link.up, "lock": link.lock},
            "broker": broker,
            "outbox": outbox,
            "disk": disk,
            "last_fault": fault,
            "uptime_s": round(self.clock() - self.started_at, 1),
            "versions": {"shoe_controller": shoe_controller.__version__,
                         "protocol": ".".join(map(str, PROTOCOL_VERSION)),
                         "python": platform.python_version()},
        }

    def status_reply(self, args: Sequence[str], operator: Any = None) -> str:
        """The control socket's ``status`` verb: ``ok`` and the status as one JSON line."""
        import json

        return "ok\n" + json.dumps(self.status(), sort_keys=True, default=str)

    def describe(self) -> str:
        """One status line (sd_notify STATUS=, logs): shoe, round, journal seq, outbox
        backlog. While a round is open the seq and the backlog are those of when it
        opened: they grow with every card, so they would tell anybody who can read the
        status how many cards the unconfirmed round has had (issue 14).

        >>> from shoe_controller.game.rules import Rules
        >>> from shoe_controller.journal import Journal
        >>> import tempfile, os
        >>> j = Journal.open(os.path.join(tempfile.mkdtemp(), "j.sqlite3"), table_id="T")
        >>> d = Daemon(rules=Rules(burn="none"), journal=j)
        >>> from shoe_controller.game.inputs import CardSeen, NewShoe
        >>> from shoe_controller.game.cards import parse_card
        >>> _ = d.handle(Item(NewShoe(), "test")); d.describe()
        'shoe 1, seq 2'
        >>> _ = d.handle(Item(CardSeen(parse_card("9S")), "test")); d.describe()
        'shoe 1, round 1 in play, seq 2'
        >>> j.close()
        """
        st = self.core.state
        shoe = getattr(st, "shoe", None) or getattr(st, "shoe_number", None)
        rnd = getattr(st, "round", None) or getattr(st, "round_number", None)
        if rnd is not None and not isinstance(rnd, int):
            rnd = getattr(rnd, "number", None)
        parts = [f"shoe {shoe}" if shoe else "no shoe yet"]
        in_play = bool(getattr(st, "round_open", False))
        if isinstance(rnd, int) and rnd:
            parts.append(f"round {rnd} in play" if in_play else f"round {rnd}")
        if not in_play:
            self._status_seq = self.journal.last_seq
            self._status_outbox = None
            if self.publisher is not None:
                with contextlib.suppress(Exception):
                    self._status_outbox = self.publisher.pending()
        parts.append(f"seq {self._status_seq or 0}")
        if self._status_outbox is not None:
            parts.append(f"outbox {self._status_outbox}")
        if self.disk_full is not None:
            parts.append("DISK FULL" + (f" ({len(self._held)} batch(es) held in memory)"
                                        if self._held else ""))
        return ", ".join(parts)

    # -- the core loop -------------------------------------------------------------------

    def handle(self, item: Item, defer_projection: bool = False) -> list[Any]:
        """Process one input: decide, journal, evolve, outputs; then the same for what the
        game-protection projection raises on those events. Returns all the entries.

        The projection (exact odds of the remaining shoe, integrity tests) runs after the
        core's events are journaled and handed to the outputs. Its events follow in a
        second journal transaction (a crash between the two loses only that analysis;
        resuming rebuilds the projection's state from the core's events).
        ``defer_projection`` (the core loop): leave it for :meth:`run_projection`, which
        the loop calls once no input has come for :data:`PROJECTION_IDLE` — its few
        milliseconds of CPU at the end of a round then delay neither a card read right
        after nor the threads reading its acknowledgements and the next card from the
        shoe. The entries returned are then the core's only.
        """
        if item.origin in ("key_on", "key_off"):
            self.lights = supervisor_key(self.lights, on=item.origin == "key_on")
            if self.disk_full is not None:
                self.lights = with_notice(self.lights, "disk full")
        inp = item.input
        if isinstance(inp, Fault):
            # Each adapter reports a problem once (until it is over): so is the log line,
            # whether or not the game core makes an event of it (between shoes it may not).
            log.warning("fault from %s: %s: %s", item.origin, inp.kind, inp.detail)
            self._note_fault(inp.kind, inp.detail)
        before = self.core.state
        decided: list[Any] = []
        try:
            return self._decide(item, defer_projection, decided)
        finally:
            if not getattr(self.core.state, "round_open", False):
                self._status_seq = self.journal.last_seq  # (the status line's, above)
            if item.done is not None:
                try:
                    item.done(decided, before)
                except Exception:
                    log.exception("the reply to %s failed", item.origin)

    def _decide(self, item: Item, defer_projection: bool, decided: list[Any]) -> list[Any]:
        """:meth:`handle`'s work; the core's events (once journaled) go into ``decided``."""
        inp = item.input
        if isinstance(inp, Resume) and getattr(self.core.state, "paused", None) is not None:
            refusal = resume_refusal(self.shoe_link())
            if refusal is not None:  # journaled: the supervisor and the casino see it
                inp = Fault("resume_refused", refusal)
        entries: list[Any] = []
        if inp is not None and self.disk_full is not None and isinstance(inp, Resume):
            log.warning("resume refused: %s", self.disk_full)
            self.inputs_handled += 1
            self._show()
            return entries
        if inp is not None and self.disk_full is None and self.disk is not None \
                and not self._in_round() and self.disk.low():
            # before a round opens: no new round below the reserve
            self._stop_for_disk(f"disk full: {self.disk.describe()} on {self.disk.dir}")
        if inp is not None:
            try:
                events, state = self.core.decide(inp)
            except Exception as exc:
                # A bug in the core for one input must not stop the table: log it with
                # the input (it is reproducible by replay), and stop the round for the
                # supervisor with a fault the casino sees too.
                self.errors += 1
                what = _loggable(inp)
                log.exception("the game core failed on %s from %s", what, item.origin)
                try:
                    events, state = self.core.decide(
                        Fault("internal_error", f"{type(exc).__name__} on {what}"))
                except Exception:
                    log.exception("the game core cannot even record the fault")
                    events, state = [], self.core.state
            metrics = self.metrics
            hold = bool(getattr(state, "round_open", False))
            if metrics is not None:
                metrics.on_input(inp, hold)
            if events:
                committed = self._commit("core", events)
                if committed is not None:
                    decided.extend(events)
                    if metrics is not None:  # the card's message is with paho now
                        metrics.on_events(events, self.clock() - item.t_read
                                          if type(inp).__name__ == "CardSeen" else None,
                                          hold)
                self.core.state = state
                if committed is not None:
                    entries = self._after_core(events, committed, defer_projection)
        self.inputs_handled += 1
        if not entries:
            self._show()
        if entries or self._held:
            self._update_lock()
        return entries

    def _after_core(self, events: list[Any], entries: list[Any],
                    defer_projection: bool) -> list[Any]:
        """The core's ``events`` are journaled as ``entries``: outputs, then the
        projection (deferred or not). Returns the entries with the projection's."""
        self._outputs(events, entries)
        due = self._unprotected_ends > 0  # a round's analysis waits already
        if not self._unprotected:
            self._unprotected_since = self.clock()
        self._unprotected += events
        self._unprotected_ends += sum(1 for ev in events if event_type(ev) in _ROUND_ENDS)
        # Deferred, but never past the next input after a round end, nor
        # PROJECTION_MAX_WAIT (a flood of inputs): analyses must not pile up.
        if (not defer_projection or due
                or self.clock() - self._unprotected_since >= PROJECTION_MAX_WAIT):
            entries = entries + self.run_projection()
        return entries

    # -- storage -------------------------------------------------------------------------

    def _in_round(self) -> bool:
        return getattr(self.core.state, "open_round", None) is not None

    def _commit(self, kind: str, events: list[Any]) -> list[Any] | None:
        """Journal ``events``; None when they are held in memory instead (a write failed,
        or earlier events are held: nothing may overtake them). The caller adopts the
        state they lead to either way; their outputs wait until they are written."""
        if self._held:
            self._held.append((kind, events))
            return None
        try:
            return self._journal(events)
        except JournalError as exc:
            self._held.append((kind, events))
            self.errors += 1
            why = f"cannot write the journal: {exc}"
            if self.disk is not None:
                why += f" ({self.disk.describe()})"
            self._stop_for_disk(why)
            return None

    def _stop_for_disk(self, why: str) -> None:
        """Stop play for storage, once per episode: the shoe's draw lock, the panel's
        alarm with ``disk full``, and a ``disk_full`` fault (and a pause between rounds)
        for the casino — journaled at once when space allows (below the reserve there is
        still room), else held with the round in memory until space returns."""
        if self.disk_full is not None:
            return
        self.disk_full = why
        log.error("%s: play stops (no new round, draw lock engaged) until space is freed; "
                  "nothing journaled is lost", why)
        self._note_fault("disk_full", why)
        self.lights = with_notice(self.lights, "disk full")
        self._update_lock()
        self._show()
        state = self.core.state
        events = list(self.core._decide(state, Fault("disk_full", why)))
        for ev in events:
            state = self.core._evolve(state, ev)
        if getattr(state, "paused", None) is None and getattr(state, "shoe", 0) \
                and getattr(state, "phase", "") not in ("no_shoe", "ended"):
            more = list(self.core._decide(state, Pause("disk full")))
            for ev in more:
                state = self.core._evolve(state, ev)
            events += more
        if not events:
            return
        committed = self._commit("core", events)
        self.core.state = state
        if committed is not None:
            self._after_core(events, committed, defer_projection=True)
        self._update_lock()

    def storage_tick(self, force: bool = False) -> bool:
        """While stopped for storage, at most once a second (``force``: now): when free
        space is back above the reserve, write what is held, in order, and give play
        back to the supervisor (the round stays paused until they resume). True when
        play is no longer stopped for storage."""
        if self.disk_full is None:
            return True
        now = self.clock()
        if not force and now - self._last_disk_try < 1.0:
            return False
        self._last_disk_try = now
        if self.disk is not None and self.disk.low():
            log.debug("still below the reserve: %s", self.disk.describe())
            return False
        written = 0
        while self._held:
            kind, events = self._held[0]
            try:
                entries = self._journal(events)
            except JournalError as exc:
                log.debug("still cannot write the journal: %s", exc)
                return False
            self._held.pop(0)
            written += len(events)
            if self.metrics is not None:
                self.metrics.on_events(events, hold=self._in_round())
            if kind == "core":
                self._after_core(events, entries, defer_projection=True)
            else:
                self._outputs(events, entries)
        if self.disk is not None:
            self.disk.keep_ballast()
        log.warning("disk space is back (%s): %d held event(s) journaled; the round "
                    "stays paused until the supervisor resumes it",
                    self.disk.describe() if self.disk is not None else "writes succeed",
                    written)
        self.disk_full = None
        self.lights = with_notice(self.lights, None)
        self._update_lock()
        self._show()
        return True

    def _note_fault(self, kind: str, detail: str) -> None:
        from shoe_controller.journal import utc_timestamp

        self.last_fault = (utc_timestamp(), kind, detail)

    def _show(self) -> None:
        if self.station is not None:
            self.station.show(self.lights)

    def projection_idle(self, timeout: float) -> bool:
        """Wait until the projection has seen every event and is not running (at most
        ``timeout`` seconds); whether it is idle. How ``simulate`` knows that the last
        alerts of a shoe (the whole-shoe fit runs seconds after its end) are in the
        outbox before it waits for the outbox to empty."""
        deadline = time.monotonic() + timeout
        while self._unprotected or self._projecting.is_set():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def run_projection(self) -> list[Any]:
        """Run the game-protection projection over the core's events it has not seen
        yet (in journal order); journal and output what it raises. Returns its entries."""
        if not self._unprotected:
            return []
        self._projecting.set()
        try:
            return self._run_projection()
        finally:
            self._projecting.clear()

    def _run_projection(self) -> list[Any]:
        events, self._unprotected, self._unprotected_ends = self._unprotected, [], 0
        try:
            raised, pstate, state = self.core.protect(events)
        except Exception:
            self.errors += 1
            log.exception("the protection projection failed on %d event(s) ending with %r",
                          len(events), events[-1])
            self.core.finished = []
            return []
        more: list[Any] = []
        if raised:
            committed = self._commit("projection", raised)
            self.core.state, self.core.pstate = state, pstate
            if committed is not None:
                more = committed
                if self.metrics is not None:
                    self.metrics.on_events(raised, hold=self._in_round())
                self._outputs(raised, more)
            self._update_lock()
        else:
            self.core.pstate = pstate
        # after shoe_ended is journaled and its alerts are out
        self._store_fingerprints(self.core.finished)
        return more

    def shoe_link(self) -> ShoeLink | None:
        """The shoe link's state for the resume guard (None: no shoe link here)."""
        for source in self.sources:
            state = getattr(source, "shoe_link", None)
            if state is not None:
                return state()
        return None

    def _update_lock(self) -> None:
        """Keep the shoe's draw lock engaged exactly while play is paused."""
        paused = getattr(self.core.state, "paused", None) is not None \
            or self.disk_full is not None
        if paused != self._locked:
            self._locked = paused
            for source in self.sources:
                set_lock = getattr(source, "set_lock", None)
                if set_lock is not None:
                    set_lock(paused)

    def _outputs(self, events: Sequence[Any], entries: Sequence[Any]) -> None:
        for ev in events:
            self.lights = project(self.lights, ev)
            if self.checkpointer is not None and event_type(ev) == "shoe_ended":
                self.checkpointer.truncate_soon()  # the WAL file emptied between shoes
        if self.disk_full is not None:
            self.lights = with_notice(self.lights, "disk full")
        if self.station is not None:
            self.station.show(self.lights)
        for observer in list(self.observers):
            try:
                observer(entries)
            except Exception:
                log.exception("observer %r failed", observer)

    def _journal(self, events: list[Any]) -> list[Any]:
        if self.publisher is not None:
            return list(self.publisher.append(events))  # journal + outbox, one transaction
        return list(self.journal.append(events))

    def run(self) -> None:
        """The core loop, until :meth:`stop` (or SIGTERM via :meth:`install_signals`)."""
        interval = self.notifier.watchdog_interval() or 5.0
        tick = min(interval, 1.0)
        publisher = self.publisher
        if publisher is not None:
            publisher.defer_display = True  # staged below, once idle
        try:
            self._loop(interval, tick)
            self.run_projection()  # a clean stop loses no analysis
        finally:
            if publisher is not None:
                publisher.defer_display = False
                with contextlib.suppress(Exception):
                    publisher.stage_display()

    def _display_waits(self) -> float | None:
        """Since when the publisher's display state waits to be staged, if it does."""
        return None if self.publisher is None else getattr(
            self.publisher, "display_pending_since", None)

    def _loop(self, interval: float, tick: float) -> None:
        while not self.stopping.is_set():
            timeout = PROJECTION_IDLE if self._unprotected else tick
            if self.disk_full is not None:
                timeout = min(timeout, 0.25)
            if self._display_waits() is not None:
                timeout = DISPLAY_IDLE
            try:
                item = self.queue.get(timeout=timeout)
            except queue.Empty:
                item = None
            if item is _STOP:
                break
            if item is not None:
                self.handle(item, defer_projection=True)
                since = self._display_waits()
                if since is not None and time.monotonic() - since >= DISPLAY_MAX_WAIT:
                    self.publisher.stage_display()
            elif self._display_waits() is not None:  # idle: the card's message is out
                self.publisher.stage_display()
            elif self._unprotected:  # idle: now the analysis
                self.run_projection()
            if self.disk_full is not None:
                self.storage_tick()
            now = self.clock()
            if now - self._last_watchdog >= interval:
                self.notifier.watchdog()
                self._last_watchdog = now
            if now - self._last_status >= 5.0:
                self.notifier.status(self.describe())
                self._last_status = now

    def drain(self) -> None:
        """Handle whatever is already queued (tests, and a clean stop)."""
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                self.handle(item)

    def stop(self) -> None:
        """Ask the loop to stop (thread- and signal-safe)."""
        self.stopping.set()
        self.queue.put(_STOP)

    def close(self, flush_timeout: float = 2.0) -> None:
        """Stop inputs, give the publisher a moment, close the station and the journal."""
        self.notifier.stopping()
        if self._held and not self.storage_tick(force=True):
            lost = [event_type(ev) for _, batch in self._held for ev in batch]
            log.error("stopping while the disk is full: %d event(s) decided since the disk "
                      "filled could not be journaled (%s); the shoe resumes from the last "
                      "journaled event: check the cards out of the shoe since then",
                      len(lost), ", ".join(lost))
        for source in self.sources:
            with contextlib.suppress(Exception):
                source.stop()
        if self.publisher is not None:
            with contextlib.suppress(Exception):
                self.publisher.flush(flush_timeout)
            with contextlib.suppress(Exception):
                self.publisher.stop()
        if self.station is not None:
            self.station.close()
        if self.fingerprints is not None:
            with contextlib.suppress(Exception):
                self.fingerprints.close()
        if self.checkpointer is not None:
            self.checkpointer.stop()
        if self.metrics is not None:
            with contextlib.suppress(Exception):
                self.metrics.stop()
        self.journal.close()
        self.notifier.close()

    def install_signals(self) -> None:
        """SIGTERM and SIGINT stop the loop cleanly (main thread only)."""
        def on_signal(signum: int, _frame: Any) -> None:
            log.info("signal %d: stopping", signum)
            self.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)


def _loggable(inp: Any) -> str:
    """An input as the log may show it: a card's code never (a card of an open round
    must not reach the log or anything staged before the result is confirmed).

    >>> from shoe_controller.game.inputs import CardSeen, NewShoe
    >>> from shoe_controller.game.cards import parse_card
    >>> _loggable(NewShoe()), _loggable(CardSeen(parse_card("QH")))
    ('NewShoe()', 'CardSeen(card withheld)')
    """
    if hasattr(inp, "card"):
        return f"{type(inp).__name__}(card withheld)"
    return repr(inp)


def journal_path(state_dir: str | os.PathLike[str], configured: str | None = None) -> Path:
    """Where the journal lives: ``configured`` if absolute, else under ``state_dir``.

    >>> str(journal_path("/var/lib/shoe-controller"))
    '/var/lib/shoe-controller/journal.sqlite3'
    """
    if configured and os.path.isabs(configured):
        return Path(configured)
    return Path(state_dir) / (configured or "journal.sqlite3")


class ConfigRefused(DaemonError):
    """The configuration file is malformed; the message names the file and the key."""


def load_table_config(path: str) -> Any:
    """The table's configuration via ``shoe_controller.config.load_config``.

    Any problem is a :class:`ConfigRefused` naming the file and (from the loader) the key.
    """
    try:
        from shoe_controller.config import load_config
    except ImportError as exc:  # pragma: no cover - the loader is part of the product
        raise ConfigRefused(f"{path}: the configuration loader is missing ({exc})") from None
    try:
        return load_config(path)
    except FileNotFoundError:
        raise ConfigRefused(f"{path}: no such file") from None
    except Exception as exc:
        msg = str(exc)
        raise ConfigRefused(msg if path in msg else f"{path}: {msg}") from None


def open_fingerprints(state_dir: str, analytics: Any | None = None) -> Any:
    """The fingerprint store of earlier shoes, ``<state_dir>/fingerprints.sqlite3``
    (its own file: the history outlives a replaced journal), keeping
    ``[analytics] fingerprint_history_shoes`` shoes. OSError if it cannot be opened."""
    import sqlite3

    from shoe_controller.fingerprint_history import FINGERPRINTS_FILE, FingerprintHistory
    from shoe_controller.game.protection import AnalyticsConfig
    from shoe_controller.storage import is_storage_full

    keep = (analytics or AnalyticsConfig()).fingerprint_history_shoes
    path = os.path.join(state_dir, FINGERPRINTS_FILE)
    try:
        return FingerprintHistory.open(path, keep=keep)
    except (OSError, sqlite3.Error) as exc:
        # A full disk (SQLite says "disk I/O error" creating the WAL): play must not wait
        # for the history; the shuffle-repeat test then knows only this run's shoes.
        if is_storage_full(exc) or DiskGuard(state_dir, 1 << 20).low():
            log.warning("fingerprint store %s cannot be opened on a full disk (%s): the "
                        "shuffle-repeat test compares with this run's shoes only", path, exc)
            return None
        if isinstance(exc, OSError):
            raise
        raise OSError(f"fingerprint store {path}: {exc}") from exc


def _section(config: Any, name: str, default: Callable[[], Any]) -> Any:
    value = getattr(config, name, None)
    return default() if value is None else value


class StartRefused(DaemonError):
    """The daemon must not start on this journal (behind or forked from what it
    announced, or holding no journal); the message says what and what to do (exit 2)."""


def open_daemon_journal(path: str, table_id: str, mqtt: Any, key: Any | None,
                        disk: DiskGuard | None = None) -> Journal:
    """The journal the daemon may run on (:func:`shoe_controller.publish.head.
    open_table_journal`): checked against the head file beside it and against the head
    retained on the broker (read first, over a short connection of its own; a broker
    that cannot be reached is logged and the start goes on: the table runs without it).
    :class:`StartRefused` when it must not start.

    A full disk is not a damaged journal: when the journal cannot be opened and ``disk``
    says the filesystem is full, its ballast is given back and the journal opened again
    (the daemon then starts with play stopped for the disk); with no ballast to give,
    the refusal says the disk is full and that the journal must stay where it is."""
    if disk is None:
        return _open_daemon_journal(path, table_id, mqtt, key)
    try:
        return _open_daemon_journal(path, table_id, mqtt, key)
    except StartRefused as exc:
        if not disk.free() < max(disk.reserve, 1 << 20) + disk.ballast:
            raise
        if not disk.release_ballast():
            raise StartRefused(
                f"journal {path}: cannot be opened: the state filesystem {disk.dir} is full "
                f"({disk.describe()}). The journal is not damaged: leave it where it is, "
                "free space on that filesystem, then start again") from None
        log.error("the state filesystem %s is full (%s): gave back the ballast (%s) so the "
                  "journal can open; play stays stopped until space is freed (first "
                  "refusal: %s)", disk.dir, disk.describe(), mb(disk.ballast), exc)
    return _open_daemon_journal(path, table_id, mqtt, key)


def _open_daemon_journal(path: str, table_id: str, mqtt: Any, key: Any | None) -> Journal:
    from shoe_controller.journal import JournalError
    from shoe_controller.keys import trusted_public_keys
    from shoe_controller.publish.head import fetch_retained_head, open_table_journal
    from shoe_controller.publish.topics import Topics

    keys = trusted_public_keys(key) if key is not None else []
    broker_head = None
    if getattr(mqtt, "enabled", False):
        broker_head, what = fetch_retained_head(mqtt, Topics(mqtt.topic_prefix, table_id),
                                                keys, unsigned=key is None)
        if broker_head is None:
            log.warning("journal not checked against the broker's retained head: %s", what)
    try:
        return open_table_journal(path, table_id, key=key, broker_head=broker_head,
                                  keys=keys)
    except JournalError as exc:
        raise StartRefused(str(exc)) from None


def device_keyring(journal: Journal, key: Any | None, key_path: str) -> Any | None:
    """The keys that sign this journal's seqs: the current ``key``, and, before each
    ``key_rotated`` event (``shoe-controller keys rotate``), the retired key kept beside
    it (``signing.key.<key_id>.old``), so every seq is re-sent and replayed with the key
    that first signed it. :class:`StartRefused` when ``key`` is not the key the journal's
    last rotation introduced."""
    from shoe_controller.keys import KeyFileError, Keyring, load_signing_key, retired_name

    if key is None:
        return None
    rotations = journal.of_type("key_rotated")
    if not rotations:
        return Keyring([(1, key)])
    last = rotations[-1].data
    if last.get("new_key_id") != key.key_id:
        raise StartRefused(
            f"signing key {key_path} is {key.key_id}, but the journal's last key_rotated "
            f"(seq {rotations[-1].seq}) moved to key {last.get('new_key_id')}: put that key "
            "back as signing.key (see docs/mqtt.md, Key ceremony)")
    folder = os.path.dirname(key_path)
    entries: list[tuple[int, Any]] = []
    first = 1
    for r in rotations:
        old_id = str(r.data.get("old_key_id"))
        try:
            old = load_signing_key(os.path.join(folder, retired_name(old_id)))
        except KeyFileError as exc:
            log.warning("retired key %s: %s; seqs %d-%d are re-signed with the current key "
                        "(replays of them are no longer byte-identical)", old_id, exc,
                        first, r.seq)
            old = key
        entries.append((first, old))
        first = r.seq + 1
    entries.append((first, key))
    return Keyring(entries)


def load_device_key(mqtt: Any, state_dir: str, unsigned: bool) -> Any | None:
    """The device's signing key per ``[mqtt] signing_key_file`` (default
    ``<state_dir>/signing.key``), or None with ``unsigned`` (said loudly on stderr).
    A missing or unsafe key is a :class:`ConfigRefused` (one line, exit 2)."""
    import sys

    from shoe_controller.keys import KeyFileError, load_signing_key

    if unsigned:
        print("shoe-controller: *** UNSIGNED: --unsigned given: the casino feed, its head "
              "and the display state go out WITHOUT signatures (\"unsigned\": true in "
              "every message); consumers cannot tell them from forgeries. Never on a "
              "casino table. ***", file=sys.stderr)
        return None
    try:
        return load_signing_key(mqtt.signing_key_path(state_dir))
    except KeyFileError as exc:
        raise ConfigRefused(f"signing key: {exc}") from None


def build_daemon(config: Any, state_dir: str, *, cards: str = "camera",
                 display_port: int | None = None,
                 unsigned: bool = False) -> tuple[Daemon, list[Any]]:
    """Put the daemon together for real hardware, per ``config`` (`shoe-controller run`).

    ``cards``: "camera" (the camera reads the cards; the shoe's exit sensor bounds each
    pass) or "scanner" (the shoe's own scanner reads them over the serial link). The
    supervisor's control socket is ``<state_dir>/control``.
    Returns the daemon and the extra things to stop at the end (the display server).
    Raises :class:`DaemonError` with a clear message when something cannot open.
    """
    from firmware_bridge.config import SerialConfig
    from shoe_controller.daemon_inputs import ControlSocketInput, SerialInput
    from shoe_controller.dealer.config import GpioConfig
    from shoe_controller.dealer.station import Station, StationError
    from shoe_controller.publish.config import JournalConfig, MqttConfig
    from shoe_controller.publish.publisher import Publisher
    from shoe_controller.vision.barcode import BarcodeMapping
    from shoe_controller.vision.config import BarcodeConfig

    table = getattr(config, "table", None)
    table_id = getattr(table, "id", None) or "table-1"
    jcfg = _section(config, "journal", JournalConfig)
    path = jcfg.resolve(state_dir) if hasattr(jcfg, "resolve") else str(journal_path(state_dir))
    mqtt_config = _section(config, "mqtt", MqttConfig)
    key = load_device_key(mqtt_config, state_dir, unsigned)
    disk = DiskGuard(path, getattr(jcfg, "reserve_bytes", 0), BALLAST_BYTES)
    journal = open_daemon_journal(path, table_id, mqtt_config, key, disk)
    try:
        keyring = device_keyring(journal, key, mqtt_config.signing_key_path(state_dir))
    except StartRefused:
        journal.close()
        raise
    publisher = Publisher(journal, mqtt_config, table_id, key=keyring)
    analytics = getattr(config, "analytics", None)
    try:
        fingerprints = open_fingerprints(state_dir, analytics)
    except OSError as exc:
        journal.close()
        raise DaemonError(str(exc)) from None
    daemon = Daemon(rules=config.rules, journal=journal, analytics=analytics,
                    publisher=publisher, fingerprints=fingerprints,
                    disk=disk, metrics=_metrics(config))
    try:
        daemon.station = Station(_section(config, "gpio", GpioConfig), daemon.submit)
    except StationError as exc:
        journal.close()
        raise DaemonError(str(exc)) from None
    camera = _camera_input(config) if cards == "camera" else None
    serial = SerialInput(
        _section(config, "serial", SerialConfig),
        mapping=BarcodeMapping(_section(config, "barcode", BarcodeConfig)),
        scanner=camera is None,
        on_card_exit=camera.card_exit if camera is not None else None,
    )
    station = daemon.station
    control = ControlSocketInput(os.path.join(state_dir, "control"),
                                 key_on=lambda: bool(getattr(station, "key_on", False)),
                                 handlers={**serial.handlers(), "status": daemon.status_reply})
    daemon.sources = [serial, control] + ([camera] if camera is not None else [])
    extras: list[Any] = []
    display = getattr(config, "display", None)
    port = display_port if display_port is not None else getattr(display, "port", 0)
    if port:
        from shoe_controller.display.server import serve_config

        mqtt = _section(config, "mqtt", MqttConfig)
        try:
            extras.append(serve_config(display, table_id, topic_prefix=mqtt.topic_prefix,
                                       rules=config.rules, port=port, device_key=key))
        except ValueError as exc:  # a [display] public key that cannot be read
            journal.close()
            raise DaemonError(str(exc)) from None
    return daemon, extras


def _metrics(config: Any) -> Any:
    """A Metrics for ``[metrics]`` when its port is set (served once the daemon starts)."""
    mcfg = getattr(config, "metrics", None)
    if mcfg is None or not getattr(mcfg, "port", 0):
        return None
    from shoe_controller.metrics import Metrics

    metrics = Metrics()
    metrics.bind_to = (mcfg.port, mcfg.bind)
    return metrics


def _camera_input(config: Any) -> Any:
    """The camera adapter from ``[camera]``/``[vision]``/``[barcode]`` (VISION's sources,
    reader and pass tracker; the shoe's exit sensor bounds the passes)."""
    from shoe_controller.daemon_inputs import CameraInput
    from shoe_controller.vision import passes, sources
    from shoe_controller.vision.config import BarcodeConfig, CameraConfig, VisionConfig
    from shoe_controller.vision.reader import build_reader

    vision = _section(config, "vision", VisionConfig)
    camera_cfg = _section(config, "camera", CameraConfig)
    try:
        reader = build_reader(vision, _section(config, "barcode", BarcodeConfig))
    except Exception as exc:  # ProfileError and friends: say what to do
        raise DaemonError(f"the camera reader cannot start: {exc} (calibrate with "
                          "`shoe-calibrate learn`, or run with --cards scanner)") from None
    tracker = passes.PassTracker.from_config(vision, sensor=True, source=vision.reader)

    def frames() -> Iterator[tuple[float, Any]]:
        source = sources.open_source(camera_cfg)
        source.open()  # CameraError (device missing...) -> Fault("camera_lost") + retry
        try:
            yield from source.frames()
        finally:
            source.close()

    return CameraInput(frames, reader, tracker)
