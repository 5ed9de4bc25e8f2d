"""From the outbox to the broker: hand rows to the MQTT link, forget them when acknowledged.

The :class:`Sender` owns what has been handed to paho: ``mid -> outbox row id`` for
messages in flight, and a cursor (the highest row id handed over; row ids only grow).
Two ways out:

- the *fast path*, on the caller's thread right after staging: fresh rows go straight to
  paho, which writes them to the socket on that thread, when nothing older is waiting
  and the window has room (no thread hop, no database read: this is what keeps
  card-to-subscriber latency low). It never blocks: if the sender thread or the MQTT
  client is busy, the rows are left to the sender thread;
- the *sender thread*: deletes acknowledged rows (PUBACK without a failure reason),
  re-sends refused ones after :data:`RETRY_AFTER_REFUSAL`, and sends the backlog (rows
  left from an earlier run, or queued during an outage) in row order.

The in-flight window is ``[mqtt] max_inflight`` and always below the broker's Receive
Maximum (one slot kept for the status message). paho keeps every message it was handed
and re-sends it after a reconnect, so nothing in flight is lost with the connection; what
dies with the process is still in the outbox and is sent by the next one.

Lock order: the sender never calls into paho while holding ``_cond``, and paho's
callbacks (:meth:`on_ack`, :meth:`on_connection`) take only ``_cond``, because paho
calls them holding its own locks.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from shoe_controller.journal import _rollback, connect
from shoe_controller.publish import outbox

__all__ = ["RETRY_AFTER_REFUSAL", "Sender"]

log = logging.getLogger("shoe_controller.publish")

#: Seconds before a message the broker refused (PUBACK with a failure reason) is retried.
RETRY_AFTER_REFUSAL = 2.0
#: How often the sender looks around when nothing wakes it.
_IDLE_WAIT = 0.25
#: The longest the caller's thread (the daemon's core loop) waits for the MQTT client
#: on the fast path: it is busy for longer only while reconnecting.
_FAST_WAIT = 0.002


class Sender:
    """Moves outbox rows of the journal file ``db_path`` to ``link`` (an MqttLink)."""

    def __init__(self, db_path: str, max_inflight: int,
                 on_reconnect: Callable[[], None]) -> None:
        self._db_path = db_path
        self._max_inflight = max_inflight
        self._on_reconnect = on_reconnect
        self.link: Any = None
        self._cond = threading.Condition()
        self._acks: deque[tuple[int, bool, str]] = deque()
        self._work = False
        self._reconnected = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        # What has been handed to paho (guarded by _send_lock).
        self._send_lock = threading.Lock()
        self._inflight: dict[int, int] = {}   # paho mid -> outbox row id
        self._cursor = 0                      # highest row id handed to paho

    # -- life cycle ------------------------------------------------------------------

    def start(self, link: Any) -> None:
        self.link = link
        self._thread = threading.Thread(target=self._run, name="mqtt-outbox", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def in_flight(self) -> int:
        """Messages handed to paho and not yet acknowledged."""
        return len(self._inflight)

    def wait_change(self, timeout: float) -> None:
        """Sleep until something was acknowledged (or ``timeout``): for flush()."""
        with self._cond:
            self._cond.wait(timeout)

    # -- feeding ---------------------------------------------------------------------

    def staged(self, rows: list[outbox.Row], staged_before: int, fast: bool = True) -> None:
        """``rows`` were committed to the outbox; ``staged_before`` is the highest row id
        staged before them. Send them now if possible, else wake the sender thread."""
        if rows and not (fast and self._send_now(rows, staged_before)):
            self.wake()

    def _send_now(self, rows: list[outbox.Row], staged_before: int) -> bool:
        link = self.link
        if link is None or not link.connected:
            return False
        if not self._send_lock.acquire(blocking=False):
            return False
        try:
            if (self._cursor != staged_before
                    or len(self._inflight) + len(rows) > self._window(link)):
                return False
            for row in rows:
                mid = link.publish(row.topic, row.payload, row.retain, wait=_FAST_WAIT)
                self._inflight[mid] = row.id
                self._cursor = row.id
            return True
        except Exception:  # busy or refused: the sender thread sends it from the cursor
            return False
        finally:
            self._send_lock.release()

    def _window(self, link: Any) -> int:
        """Outbox messages allowed in flight: ``max_inflight``, and below the broker's
        Receive Maximum (one slot is kept for the status message)."""
        return max(1, min(self._max_inflight, link.receive_maximum - 1))

    def wake(self) -> None:
        with self._cond:
            self._work = True
            self._cond.notify_all()

    # -- paho callbacks (the link's network thread, holding paho's locks: be quick) -

    def on_ack(self, mid: int, ok: bool, why: str) -> None:
        with self._cond:
            self._acks.append((mid, ok, why))
            self._cond.notify_all()

    def on_connection(self, up: bool, why: str) -> None:
        with self._cond:
            if up:
                self._reconnected = True
            self._work = True
            self._cond.notify_all()

    # -- the thread ------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._loop()
        except Exception:  # never die silently: the outbox keeps everything for a restart
            log.exception("mqtt outbox sender stopped by an error; pending messages stay "
                          "in the outbox and are sent on the next start")

    def _loop(self) -> None:
        conn = connect(self._db_path, synchronous="NORMAL", autocheckpoint=False)
        retry: dict[int, float] = {}     # refused row id -> when to try again
        undeleted: list[int] = []         # acknowledged, not yet deleted (disk full)
        warned = False
        try:
            while True:
                with self._cond:
                    if not (self._stopping or self._acks or self._work or self._reconnected):
                        self._cond.wait(_IDLE_WAIT)
                    if self._stopping:
                        return
                    acks = list(self._acks)
                    self._acks.clear()
                    self._work = False
                    reconnected, self._reconnected = self._reconnected, False
                done = undeleted + self._settle(acks, retry)
                undeleted = []
                if done:
                    try:
                        conn.execute("BEGIN IMMEDIATE")
                        outbox.delete(conn, done)
                        conn.execute("COMMIT")
                    except sqlite3.OperationalError as exc:
                        # A full disk: the rows stay (sent again after a restart at
                        # worst: consumers de-duplicate by seq); delete them later.
                        _rollback(conn)
                        undeleted = done
                        if not warned:
                            log.warning("outbox: cannot delete %d acknowledged message(s) "
                                        "(%s); retrying", len(done), exc)
                        warned = True
                        with self._cond:
                            self._cond.wait(_IDLE_WAIT * 4)
                    else:
                        warned = False
                        with self._cond:
                            self._cond.notify_all()  # flush() waiters
                if reconnected:
                    self._on_reconnect()
                link = self.link
                if link is None or not link.connected:
                    continue
                with self._send_lock:
                    sent = self._send_backlog(conn, link, retry)
                if sent:
                    with self._cond:
                        self._work = True  # there may be more: look again at once
        finally:
            conn.close()

    def _settle(self, acks: list[tuple[int, bool, str]], retry: dict[int, float]) -> list[int]:
        """Acknowledged row ids to delete; refused ones go to ``retry``."""
        done: list[int] = []
        with self._send_lock:
            for mid, ok, why in acks:
                row_id = self._inflight.pop(mid, None)
                if row_id is None:
                    continue  # the status message
                if ok:
                    done.append(row_id)
                else:
                    log.warning("broker refused outbox message %d (%s); retrying in %.0f s",
                                row_id, why, RETRY_AFTER_REFUSAL)
                    retry[row_id] = time.monotonic() + RETRY_AFTER_REFUSAL
        return done

    def _send_backlog(self, conn: Any, link: Any, retry: dict[int, float]) -> int:
        """(under _send_lock) Send due retries, then rows beyond the cursor."""
        room = self._window(link) - len(self._inflight)
        if room <= 0:
            return 0
        now = time.monotonic()
        due = sorted(r for r, t in retry.items() if t <= now)[:room]
        rows = outbox.fetch_ids(conn, due)
        for r in due:
            retry.pop(r, None)  # sent again below, or gone (coalesced away)
        if room - len(rows) > 0:
            rows += outbox.fetch(conn, self._cursor, room - len(rows))
        for row in rows:
            try:
                mid = link.publish(row.topic, row.payload, row.retain)
            except Exception as exc:  # paho refused to queue it: try again later
                log.warning("cannot hand outbox message %d to MQTT: %s", row.id, exc)
                retry[row.id] = time.monotonic() + RETRY_AFTER_REFUSAL
            else:
                self._inflight[mid] = row.id
            self._cursor = max(self._cursor, row.id)
        return len(rows)
