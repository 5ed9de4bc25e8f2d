"""The publisher the daemon calls: journaled events in, MQTT messages out, nothing lost.

Flow, for each journaled event, in journal order::

    release fold (release.py)  ->  released events
        -> casino envelope, signed (payloads.py)            -> outbox row
        -> display projection (game/display_state.py)       -> one coalesced outbox row
    outbox (same SQLite file)  ->  Sender (sender.py)  ->  MqttLink (mqtt.py, paho)
    PUBACK without failure     ->  row deleted

The core loop only touches SQLite (staging is one short transaction, or part of the
journal's own transaction with :meth:`Publisher.append`) and, when the outbox has no
backlog, hands the fresh rows to paho, which writes them to the socket without waiting
(:mod:`shoe_controller.publish.mqtt`); everything that waits on the network runs on the
sender thread and the MQTT link's network thread, so a slow or absent broker never
blocks the game. Delivery is at least once; every re-send of a message is
byte-identical, and consumers de-duplicate by ``seq``.

Typical use in the daemon::

    journal = Journal.open(path, table_id=table)
    publisher = Publisher(journal, config.mqtt, table)
    publisher.start()                     # catches up from the journal, connects
    entries = publisher.append(events)    # journal + outbox in one transaction
    # (or: entries = journal.append(events); publisher.submit(entries))
    publisher.flush(timeout=10)           # wait for the broker to acknowledge all
    publisher.stop()

>>> import tempfile, os
>>> from shoe_controller.journal import Journal
>>> from shoe_controller.publish.config import MqttConfig
>>> j = Journal.open(os.path.join(tempfile.mkdtemp(), "j.sqlite3"), table_id="T1")
>>> from shoe_controller.keys import SigningKey
>>> p = Publisher(j, MqttConfig(release="on_result"), "T1", key=SigningKey.generate())
>>> _ = p.append([{"type": "shoe_started", "shoe": 1, "decks": 8},
...               {"type": "round_started", "shoe": 1, "round": 1},
...               {"type": "card_dealt", "shoe": 1, "round": 1, "hand": "player",
...                "position": 1, "card": "QH", "orientation": None}])
>>> p.pending(), p.held()        # shoe + round start (+ display state) wait; the card is held
(3, 1)
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shoe_controller.journal import (
    GENESIS,
    Journal,
    JournalEntry,
    JournalError,
    _rollback,
    canonical_json,
    connect,
    utc_timestamp,
)
from shoe_controller.publish import outbox
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.head import HEAD_EVERY, HeadFile, head_file_path, head_payload
from shoe_controller.publish.payloads import (
    SIG_PLACEHOLDER,
    casino_payload,
    display_payload,
    sign_text,
)
from shoe_controller.publish.release import ReleaseState, step
from shoe_controller.publish.sender import Sender
from shoe_controller.publish.topics import Topics
from shoe_controller.storage import is_storage_full

__all__ = ["Publisher"]

log = logging.getLogger("shoe_controller.publish")

@dataclass(frozen=True, slots=True)
class _Item:
    """A journal entry with its body parsed once (what the release fold looks at)."""

    entry: JournalEntry
    type: str
    data: Mapping[str, Any]


def _item(entry: JournalEntry) -> _Item:
    return _Item(entry, entry.type, json.loads(entry.body))


class Publisher:
    """Durable, thread-safe MQTT publisher of one table's journal.

    ``key``: the device's :class:`shoe_controller.keys.SigningKey` (or a
    :class:`~shoe_controller.keys.Keyring` after rotations), which signs every
    casino envelope, head and display state; None sends them unsigned (``--unsigned``:
    the caller has said so loudly; every message is marked). ``submit``, ``append``,
    ``pending``, ``held``, ``flush`` may be called from any thread.
    """

    def __init__(self, journal: Journal, config: MqttConfig, table_id: str, *,
                 key: Any | None = None) -> None:
        self.journal = journal
        self.config = config
        self.table_id = table_id
        self.topics = Topics(config.topic_prefix, table_id)
        from shoe_controller.keys import Keyring

        keyring = key if isinstance(key, Keyring) else (
            None if key is None else Keyring([(1, key)]))
        key = None if keyring is None else keyring.current
        self._keyring = keyring
        if key is None and config.enabled:
            log.warning("UNSIGNED: no signing key: every casino envelope, head and display "
                        "state goes out with \"sig\": null and \"unsigned\": true; never run "
                        "a casino table like this")
        self._key = key
        if journal.epoch is None:
            raise JournalError(f"journal {journal.path} has no epoch (opened read-only?)")
        self.epoch: str = journal.epoch
        #: (seq, hash) of the last released event: what the head announces
        self._head: tuple[int, str] = (0, GENESIS)
        self._head_file = HeadFile(head_file_path(journal.path))
        self._head_cond = threading.Condition()
        self._head_due = False
        self._head_write_lock = threading.Lock()
        self._head_thread: threading.Thread | None = None
        #: the last head payload published (tests, status)
        self.head_sent: bytes | None = None
        from shoe_controller.publish.replay import ReplayServer

        self._replay = ReplayServer(journal, self.topics, self.epoch, keyring,
                                    head=lambda: self._head[0])
        self._display_on = config.display_feed
        # Staging connection (callers' threads, under _stage_lock). NORMAL sync is enough:
        # the journal (FULL) is the truth, and lost outbox rows are re-derived from it.
        # Its commits leave WAL checkpoints to the journal (or its Checkpointer): run
        # here, one would stall the core loop staging a display state.
        self._conn = connect(journal.path, synchronous="NORMAL", autocheckpoint=False)
        outbox.ensure_schema(self._conn)
        self._read_conn: Any = connect(journal.path, readonly=True)
        self._read_lock = threading.Lock()
        self._stage_lock = threading.RLock()
        self._release = ReleaseState(config.release)
        self._display: Any = None
        self._display_bytes: bytes | None = None
        self._roads: tuple[Any, str] | None = None  # (results, their roads' JSON)
        self._staged_through = 0
        self._caught_up = False
        self._last_staged_id = 0  # highest outbox row id staged (under _stage_lock)
        self._sender = Sender(journal.path, config.max_inflight, self._restage_display)
        self._link: Any = None
        self._stopped = False
        #: Leave the display state's encoding and staging to :meth:`stage_display` (the
        #: daemon's loop calls it once idle): see :meth:`_stage_display`. Off by default:
        #: every append/submit stages the display state itself.
        self.defer_display = False
        #: monotonic time since when a deferred display state waits (None: none waits)
        self.display_pending_since: float | None = None

    # -- life cycle ------------------------------------------------------------------

    def start(self) -> None:
        """Catch up with the journal (re-derive anything not staged), start sending.

        Returns at once: the broker may be unreachable; messages wait in the outbox.
        """
        if self._sender.started or self._stopped:
            return  # already started (a stopped publisher is not restarted)
        with self._stage_lock:
            try:
                self._ensure_caught_up()
            except (sqlite3.OperationalError, JournalError) as exc:
                if not (is_storage_full(exc) or self._caught_up):
                    raise
                # A full disk: the events are journaled; their messages are staged with
                # the next append (which reads the gap back from the journal).
                log.warning("outbox: cannot stage the journal's unstaged events now (%s); "
                            "they are staged once there is space", exc)
        if not self.config.enabled:
            log.info("mqtt disabled: events are journaled, nothing is published")
            return
        from shoe_controller.publish.mqtt import MqttLink  # paho only when publishing

        self._link = MqttLink(self.config, self.topics, on_ack=self._sender.on_ack,
                              on_connection=self._sender.on_connection,
                              on_message=self._replay.on_message,
                              subscriptions=(self.topics.casino_replay,))
        self._sender.start(self._link)
        self._replay.start(self._link)
        self._head_thread = threading.Thread(target=self._head_loop, name="mqtt-head",
                                             daemon=True)
        self._head_thread.start()
        self._link.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop sending (unacknowledged messages stay in the outbox for the next start),
        publish ``offline``, disconnect. A stopped Publisher is not started again: make
        a new one (it catches up from the journal)."""
        self.stage_display()
        self._stopped = True
        with self._head_cond:
            self._head_cond.notify_all()
        if self._head_thread is not None:
            self._head_thread.join(timeout)
            self._head_thread = None
        self._replay.stop(timeout)
        self._sender.stop(timeout)
        if self._link is not None:
            self._link.stop(timeout)
            self._link = None
        with self._stage_lock:
            self._conn.close()
        with self._read_lock:
            if self._read_conn is not None:
                self._read_conn.close()
            self._read_conn = None

    def __enter__(self) -> Publisher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- feeding ---------------------------------------------------------------------

    def append(self, events: Sequence[Any] | Journal, *more: Any,
               time: str | None = None) -> list[JournalEntry]:
        """Journal ``events`` and stage their messages in ONE transaction; return entries.

        The same as ``journal.append`` followed by :meth:`submit`, minus the window in
        which a crash would leave journaled events not yet in the outbox. Also accepts
        ``append(journal, events)`` (the journal must be this publisher's).
        """
        if isinstance(events, Journal):
            if events is not self.journal and events.path != self.journal.path:
                raise ValueError(f"publisher writes journal {self.journal.path}, "
                                 f"not {events.path}")
            events, more = more[0], more[1:]
        if more:
            time = more[0]
        if not self.config.enabled:
            return self.journal.append(events, time)
        with self._stage_lock:
            self._ensure_caught_up()
            done: list[tuple[ReleaseState, list[_Item], int, list[outbox.Row]]] = []

            def hook(conn: Any, entries: list[JournalEntry]) -> None:
                new = self._gap(conn, entries[0].seq) + entries
                messages, release, released = self._messages_for(new)
                rows = outbox.stage(conn, messages, new[-1].seq)
                done.append((release, released, new[-1].seq, rows))

            entries = self.journal.append(events, time, hook=hook)
            if done:
                release, released, through, rows = done[0]
                self._release, self._staged_through = release, through
                self._staged(rows)  # the casino messages are with paho now
                self._advance_head(released)
                self._stage_display(released)
        return entries

    def submit(self, entries: Sequence[JournalEntry]) -> None:
        """Stage the messages of journaled ``entries`` (already-staged ones are skipped, a
        gap before them is read back from the journal). Never waits on the broker."""
        if not self.config.enabled:
            return
        with self._stage_lock:
            self._ensure_caught_up()
            new = [e for e in entries if e.seq > self._staged_through]
            if not new:
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                new = self._gap(self._conn, new[0].seq) + new
                messages, release, released = self._messages_for(new)
                rows = outbox.stage(self._conn, messages, new[-1].seq)
                self._conn.execute("COMMIT")
            except BaseException:
                _rollback(self._conn)
                raise
            self._release = release
            self._staged_through = new[-1].seq
            self._staged(rows)
            self._advance_head(released)
            self._stage_display(released)

    # -- state -----------------------------------------------------------------------

    def pending(self, with_head: bool = False) -> int:
        """Messages in the outbox, not yet acknowledged by the broker (the heartbeat
        head only ``with_head``: see :func:`outbox.pending_count`)."""
        with self._read_lock:
            if self._read_conn is None:  # stopped: still answer (for a final report)
                conn = connect(self.journal.path, readonly=True)
                try:
                    return outbox.pending_count(conn, with_head=with_head)
                finally:
                    conn.close()
            return outbox.pending_count(self._read_conn, with_head=with_head)

    def held(self) -> int:
        """Journaled events held back by the release policy (an unconfirmed round)."""
        return len(self._release.held)

    @property
    def connected(self) -> bool:
        return self._link is not None and self._link.connected

    @property
    def last_error(self) -> str | None:
        """Why the broker is not reachable, if it is not (for logs and STATUS=)."""
        return None if self._link is None else self._link.last_error

    def flush(self, timeout: float) -> bool:
        """Wait until the outbox is empty (every message acknowledged); False on timeout.

        Held events are not waited for: they leave when their round is confirmed.
        """
        self.stage_display()
        deadline = time.monotonic() + timeout
        while True:
            if self.pending(with_head=True) == 0:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._sender.wait_change(min(left, 0.05))

    # -- staging (under _stage_lock) -------------------------------------------------

    def _ensure_caught_up(self) -> None:
        """On first use: rebuild release/display state from the journal up to what the
        outbox already holds, then stage whatever the journal has beyond it."""
        if self._caught_up:
            return
        from shoe_controller.game.display_state import DisplayState, project

        through = outbox.staged_through(self._conn)
        last = self.journal.last_seq
        if through > last:
            raise JournalError(
                f"journal {self.journal.path}: the outbox says events up to seq {through} "
                f"were published but the journal ends at seq {last}: the journal was "
                "replaced or cut; restore it (see docs/journal.md, recovery)")
        release = ReleaseState(self.config.release)
        display = DisplayState(table=self.table_id)
        # A shoe_started event releases everything held before it and resets the display
        # state, so folding from the last one gives the same states as folding from seq 1
        # (and keeps the start fast on a journal of months).
        start = self._conn.execute(
            "SELECT COALESCE(MAX(seq), 1) FROM events WHERE type = 'shoe_started' AND seq <= ?",
            (through,)).fetchone()[0]
        head = (0, GENESIS)
        if start > 1:  # everything before a shoe_started was released
            before = self.journal.entry(start - 1)
            if before is not None:
                head = (before.seq, before.hash)
        for entry in self.journal.replay(start, through):
            release, out = step(release, _item(entry))
            if out:
                head = (out[-1].entry.seq, out[-1].entry.hash)
            if self._display_on:
                for item in out:
                    display = project(display, item.data)
        self._head = head
        self._release, self._display, self._staged_through = release, display, through
        self._display_bytes = (self._encode_display(display)
                               if self._display_on and through else None)
        # Rows left from an earlier run are sent first, by the sender thread: the fast
        # path waits until the cursor has passed them.
        self._last_staged_id = int(self._conn.execute(
            "SELECT COALESCE(MAX(id), 0) FROM outbox").fetchone()[0])
        self._caught_up = True
        rest = list(self.journal.replay(through + 1))
        if rest and self.config.enabled:
            log.info("outbox: staging %d journaled event(s) not yet staged (seq %d-%d)",
                     len(rest), rest[0].seq, rest[-1].seq)
            self.submit(rest)

    def _gap(self, conn: Any, first_seq: int) -> list[JournalEntry]:
        """Journal entries between what is staged and ``first_seq`` (normally none)."""
        if first_seq == self._staged_through + 1:
            return []
        if first_seq <= self._staged_through:
            raise JournalError(f"publisher: seq {first_seq} was already staged")
        rows = conn.execute(
            "SELECT seq, time, type, body, prev_hash, hash FROM events "
            "WHERE seq > ? AND seq < ? ORDER BY seq", (self._staged_through, first_seq),
        ).fetchall()
        return [JournalEntry(*r) for r in rows]

    def _messages_for(self, entries: Sequence[JournalEntry]
                      ) -> tuple[list[outbox.Message], ReleaseState, list[_Item]]:
        """Pure with respect to self: the casino messages for ``entries``, the new release
        state and the released items (for the display state, staged after)."""
        release = self._release
        messages: list[outbox.Message] = []
        released: list[_Item] = []
        topic = self.topics.casino_events
        for entry in entries:
            release, out = step(release, _item(entry))
            for item in out:
                e = item.entry
                messages.append(outbox.Message(
                    topic, casino_payload(e, self.table_id, self.epoch, self._key_for(e.seq)),
                    retain=False, seq=e.seq))
            released += out
        return messages, release, released

    def _stage_display(self, released: Sequence[_Item]) -> None:
        """(under _stage_lock, after the casino rows are committed and handed to paho)
        Fold ``released`` into the display state and stage its payload if it changed.

        Why after, in a transaction of its own: rebuilding and serialising the whole
        display state is the largest CPU cost of a card; done first, the card's casino
        message waited for it, and done right after it still holds up the next card and
        the threads that read the acknowledgements. So with
        :attr:`defer_display` only the fold (microseconds) happens here, and the daemon
        stages the state once its loop is idle (:meth:`stage_display`): cards dealt faster
        than that coalesce into one display message. The retained display state needs no
        place in the journal's transaction: it is a projection of the journal, rebuilt on
        start and re-sent on every (re)connect (:meth:`_restage_display`), so a crash
        before it is staged loses nothing.
        """
        if not self._display_on or (not released and self._display_bytes is not None):
            return
        from shoe_controller.game.display_state import project

        display = self._display
        for item in released:
            display = project(display, item.data)
        self._display = display
        if self.display_pending_since is None:
            self.display_pending_since = time.monotonic()
        if not self.defer_display:
            self._stage_display_now()

    def stage_display(self) -> None:
        """Stage the display state folded since the last one, if any (any thread)."""
        if self.display_pending_since is None:
            return
        with self._stage_lock:
            if self.display_pending_since is not None and not self._stopped:
                self._stage_display_now()

    def _stage_display_now(self) -> None:
        """(under _stage_lock) Encode the display state; stage it if it changed. A failure
        is logged, not raised: the events are journaled and the casino messages staged;
        the next change or reconnect sends the state."""
        self.display_pending_since = None
        new_bytes = self._encode_display(self._display)
        if new_bytes == self._display_bytes:
            return
        try:
            rows = self._stage_display_row(new_bytes)
        except Exception as exc:
            if is_storage_full(exc):  # the daemon reports the full disk itself
                log.debug("outbox: cannot stage the display state: %s", exc)
            else:
                log.exception("outbox: cannot stage the display state (re-sent with the "
                              "next change or reconnect)")
            return
        self._display_bytes = new_bytes
        self._staged(rows)

    def _encode_display(self, display: Any) -> bytes:
        """``display_payload(to_payload(display))``, byte for byte, at a fraction of the
        cost: the roads are ~95% of the JSON (0.65 ms of 0.7 on a 2-core VM, 60 rounds
        in) and change once per round, so their canonical JSON is kept per ``results``
        and spliced in where the whole-payload encoding puts them (keys are sorted, and
        ``canonical_json`` of a dict is its items' JSON in key order)."""
        payload = _display_dict(display)
        key = self._key
        if key is None:
            return display_payload(payload, None)
        payload["key_id"], payload["sig"] = key.key_id, SIG_PLACEHOLDER
        results = display.results
        cached = self._roads
        if cached is None or (cached[0] is not results and cached[0] != results):
            cached = self._roads = (results, canonical_json(payload["roads"]))
        payload["roads"] = _ROADS_MARK
        text = canonical_json(payload)
        if text.count(_ROADS_SLOT) != 1:  # the mark in a value: never in practice
            return display_payload(_display_dict(display), key)
        return sign_text(text.replace(_ROADS_SLOT, cached[1]), key, _display_dict(display))

    def _key_for(self, seq: int) -> Any | None:
        """The key that signs ``seq`` (after a rotation, older seqs keep the old key, so a
        re-send or replay stays byte-identical)."""
        return None if self._keyring is None else self._keyring.for_seq(seq)

    # -- the head ----------------------------------------------------------------------

    def _advance_head(self, released: Sequence[_Item]) -> None:
        """(under _stage_lock, after the casino rows are staged) The head moves to the
        last released event; the head thread signs, records and sends it."""
        if released:
            e = released[-1].entry
            self._head = (e.seq, e.hash)
            self._head_now()

    def _head_now(self) -> None:
        with self._head_cond:
            self._head_due = True
            self._head_cond.notify_all()

    @property
    def head(self) -> tuple[int, str]:
        """(seq, hash) of the last released event (0 and 64 zeros before any)."""
        return self._head

    def _head_loop(self) -> None:
        """Sign the head, write it to the head file (fsynced: the daemon's record of what
        it announced), then stage it (retained, coalesced) behind the events it covers.
        After every released batch (coalescing bursts) and every HEAD_EVERY seconds."""
        self._head_due = True
        while not self._stopped:
            with self._head_cond:
                if not self._head_due:
                    self._head_cond.wait(HEAD_EVERY)
                self._head_due = False
            if self._stopped:
                return
            try:
                self.publish_head()
            except (OSError, sqlite3.Error) as exc:  # a full disk: said, tried again
                log.warning("cannot publish the head (%s); tried again in %.0f s", exc,
                            HEAD_EVERY)
            except Exception:
                log.exception("cannot publish the head (tried again in %.0f s)", HEAD_EVERY)

    def publish_head(self) -> bytes:
        """Sign, record and stage the current head now (any thread); returns it."""
        seq, hash_ = self._head  # (one tuple: read whole)
        payload = head_payload(self.table_id, self.epoch, seq, hash_, utc_timestamp(),
                               self._key)
        # fsynced before it may leave, and outside the staging lock: the core loop's
        # appends do not wait for this fsync
        with self._head_write_lock:
            self._head_file.write(payload)
        with self._stage_lock:
            if self._stopped:
                return payload
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                rows = outbox.stage(self._conn, [outbox.Message(
                    self.topics.casino_head, payload, retain=True, coalesce_key="head")],
                    self._staged_through)
                self._conn.execute("COMMIT")
            except BaseException:
                _rollback(self._conn)  # (SQLite may have rolled back itself: disk full)
                raise
            self.head_sent = payload
            self._staged(rows)
        return payload

    def _restage_display(self) -> None:
        """After a (re)connect, send the current display state again: a broker that lost
        its retained messages (restarted without persistence) gets it back at once."""
        self._head_now()  # and the head
        with self._stage_lock:
            if not self._display_on or self._display_bytes is None or self._stopped:
                return
            try:
                rows = self._stage_display_row(self._display_bytes)
            except sqlite3.OperationalError as exc:  # a full disk: the next change sends it
                log.warning("outbox: cannot stage the display state again (%s)", exc)
                return
            self._staged(rows, fast=False)

    def _stage_display_row(self, payload: bytes) -> list[outbox.Row]:
        """(under _stage_lock) Commit ``payload`` as the retained display state's outbox
        row, replacing any unsent one; return the rows for :meth:`_staged`."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            rows = outbox.stage(self._conn, [outbox.Message(
                self.topics.display_state, payload, retain=True,
                coalesce_key="display")], self._staged_through)
            self._conn.execute("COMMIT")
        except BaseException:
            # SQLite rolls a transaction back itself when the disk is full: a ROLLBACK
            # then fails with "no transaction is active" and hides the real error.
            _rollback(self._conn)
            raise
        return rows

    # -- sender thread ---------------------------------------------------------------

    def _staged(self, rows: list[outbox.Row], fast: bool = True) -> None:
        """Rows were committed to the outbox (under _stage_lock): send them."""
        if rows:
            before, self._last_staged_id = self._last_staged_id, rows[-1].id
            self._sender.staged(rows, before, fast)


#: Stands for the roads in the display payload until their cached JSON is spliced in.
_ROADS_MARK = "\x00roads\x00"
_ROADS_SLOT = canonical_json(_ROADS_MARK)


def _display_dict(display: Any) -> dict[str, Any]:
    from shoe_controller.game.display_state import to_payload

    return to_payload(display)
