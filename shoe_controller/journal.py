"""The event journal: every domain event, in order, hash-chained, in one SQLite file.

The journal is the source of truth. The daemon appends the events the game core decided
*before* anything acts on them (LEDs, MQTT), and rebuilds the shoe after a restart by
folding the game core's ``evolve`` over :meth:`Journal.replay`. Outputs are projections
of journaled events, so they can always be rebuilt and re-sent.

Storage: SQLite in WAL mode with ``synchronous=FULL`` (a committed append survives a
power cut). One row per event in table ``events``:

``seq``        1, 2, 3, ... contiguous, per table (one journal per table)
``time``       wall clock UTC when it was journaled, ``2026-11-30T04:28:12.123456Z``
``type``       the event's ``type`` tag (also inside ``body``)
``body``       the event as canonical JSON (:func:`canonical_json`)
``prev_hash``  ``hash`` of the previous row; 64 zeros for seq 1 (:data:`GENESIS`)
``hash``       lowercase hex SHA-256 of the UTF-8 bytes of
               ``prev_hash + "\\n" + str(seq) + "\\n" + time + "\\n" + type + "\\n" + body``

Editing, inserting or deleting a row inside the chain breaks it at that row, and
:meth:`Journal.verify` names the first bad seq. (Rewriting every later row too, or cutting
the tail, needs an outside witness: the casino feed carries each hash, signed.)

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "j.sqlite3")
>>> with Journal.open(path, table_id="T1") as j:
...     entries = j.append([{"type": "shoe_started", "shoe": 1, "decks": 8}],
...                        time="2026-11-30T04:00:00.000000Z")
...     [(e.seq, e.type, e.body) for e in entries]
[(1, 'shoe_started', '{"decks":8,"shoe":1,"type":"shoe_started"}')]
>>> with Journal.open(path) as j:
...     j.verify(), j.last_seq
(1, 1)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import secrets
import sqlite3
import threading
import time as _time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

__all__ = [
    "FORMAT_VERSION",
    "GENESIS",
    "JOURNAL_EVENT_TYPES",
    "WAL_LIMIT",
    "Checkpointer",
    "Journal",
    "JournalCorrupt",
    "JournalEntry",
    "JournalError",
    "JournalMismatch",
    "canonical_json",
    "chain_hash",
    "checked_entries",
    "new_epoch",
    "utc_timestamp",
    "verify_entries",
]

#: Events of the journal itself (not of the game core): the daemon skips them when it
#: folds the journal into the shoe. ``journal_started`` is seq 1 of every journal the
#: daemon creates (docs/journal.md, "Epoch").
JOURNAL_EVENT_TYPES = frozenset({"journal_started", "key_rotated"})
#: Bytes a reset WAL file is cut back to (SQLite's ``journal_size_limit``), and the size
#: past which the Checkpointer forces a TRUNCATE checkpoint.
WAL_LIMIT = 4 * 1024 * 1024
#: ``prev_hash`` of the first event.
GENESIS = "0" * 64
#: Bumped when the table layout or the hash definition changes.
FORMAT_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq       INTEGER PRIMARY KEY,
    time      TEXT NOT NULL,
    type      TEXT NOT NULL,
    body      TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);
"""


class JournalError(Exception):
    """The journal cannot be used; the message says what, where and what to do."""


class JournalCorrupt(JournalError):
    """The file is damaged or the chain is broken: refuse to start on it."""

    def __init__(self, message: str, seq: int | None = None) -> None:
        super().__init__(message)
        #: The first bad sequence number, when the damage is in a row.
        self.seq = seq


class JournalMismatch(JournalError):
    """The journal belongs to another table (or is of an unknown format)."""


def canonical_json(value: Any) -> str:
    """The one JSON form that is hashed and signed: sorted keys, no whitespace, UTF-8.

    It is exactly Python's ``json.dumps(value, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)``, so any consumer can reproduce it from a parsed message.

    >>> canonical_json({"b": [1, 0.95, None], "a": "QH"})
    '{"a":"QH","b":[1,0.95,null]}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def new_epoch() -> str:
    """A fresh journal epoch: 128 random bits as 32 lowercase hex digits.

    >>> len(new_epoch()), new_epoch() != new_epoch()
    (32, True)
    """
    return secrets.token_hex(16)


def chain_hash(prev_hash: str, seq: int, time: str, type_: str, body: str) -> str:
    """The SHA-256 of one journal row, chained to the previous row's hash.

    >>> chain_hash(GENESIS, 1, "2026-11-30T04:00:00.000000Z", "shoe_started",
    ...            '{"decks":8,"shoe":1,"type":"shoe_started"}')
    '02a3dfbd305e9b1a369fc17f6bd3f767da837c09f7a6dcdc170ca8ba94fe2ac6'
    """
    data = f"{prev_hash}\n{seq}\n{time}\n{type_}\n{body}".encode()
    return hashlib.sha256(data).hexdigest()


def utc_timestamp(when: datetime | None = None) -> str:
    """RFC 3339 UTC with microseconds, the journal's ``time`` (the shell reads the clock).

    >>> utc_timestamp(datetime(2026, 11, 30, 4, 28, 12, 123456, tzinfo=UTC))
    '2026-11-30T04:28:12.123456Z'
    """
    when = datetime.now(UTC) if when is None else when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One journaled event, as stored."""

    seq: int
    time: str
    type: str
    body: str
    prev_hash: str
    hash: str

    @property
    def data(self) -> dict[str, Any]:
        """The event as a plain dict (parsed from ``body``)."""
        return json.loads(self.body)  # type: ignore[no-any-return]

    def event(self) -> Any:
        """The event as the game core's Struct (``game.events.decode_event``)."""
        from shoe_controller.game.events import decode_event

        return decode_event(self.body.encode())

    def to_export(self) -> dict[str, Any]:
        """The auditor's export record: seq, time, type, hash, prev_hash, event."""
        return {"seq": self.seq, "time": self.time, "type": self.type, "hash": self.hash,
                "prev_hash": self.prev_hash, "event": self.data}


def encode_body(event: Any) -> tuple[str, str]:
    """``(type, canonical JSON)`` of a game event Struct or a plain dict with a ``type``.

    Structs go through the game core's ``encode_event`` and are then re-canonicalised,
    so the stored text is exactly :func:`canonical_json` whatever the encoder's habits.
    """
    if isinstance(event, dict):
        data = event
    else:
        from shoe_controller.game.events import encode_event

        data = json.loads(encode_event(event))
    type_ = data.get("type") if isinstance(data, dict) else None
    if not isinstance(type_, str) or not type_:
        raise ValueError(f"cannot journal {event!r}: an event needs a string 'type'")
    return type_, canonical_json(data)


#: Called inside the append transaction with the new rows, e.g. to write outbox rows
#: atomically with them (:meth:`shoe_controller.publish.publisher.Publisher.append`).
AppendHook = Callable[[sqlite3.Connection, list[JournalEntry]], None]


class Journal:
    """An open journal file. Thread-safe; one writer process per file.

    Use :meth:`open`, which checks the file and (by default) the whole chain, so a damaged
    journal refuses to start with :class:`JournalCorrupt`.
    """

    def __init__(self, path: str, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._lock = threading.Lock()
        self._lock_fd: int | None = None
        self.table_id: str | None = None
        #: The journal's epoch: 32 lowercase hex digits (128 random bits) made when the
        #: journal was created, in every envelope of the casino feed (None only for a
        #: read-only look at a journal older than epochs).
        self.epoch: str | None = None
        #: ``time.monotonic()`` of the last append (0.0: none yet): the checkpointer's cue.
        self.appended_at = 0.0
        self._ckpt_lock = threading.Lock()
        self._ckpt_conn: sqlite3.Connection | None = None
        row = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        self._last_seq, self._last_hash = (row[0], row[1]) if row else (0, GENESIS)

    # -- opening ---------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, table_id: str | None = None,
             verify: bool = True, readonly: bool = False,
             existing: bool = False) -> Journal:
        """Open (creating if needed) the journal at ``path``.

        ``table_id`` is recorded on creation and must match afterwards: a journal is one
        table's sequence. ``verify`` checks every row's hash chain before returning.
        ``readonly`` (auditors) never creates or writes. ``existing`` (the daemon, which
        makes new journals with :meth:`create`): the file must already hold a journal;
        a missing, empty or table-less file is refused, never turned into a new journal.
        """
        path = os.fspath(path)
        if readonly and not os.path.exists(path):
            raise JournalError(f"journal {path}: no such file")
        if existing:
            _check_holds_a_journal(path)
        lock_fd = None
        made_lock = False
        if not readonly:
            parent = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(parent):
                raise JournalError(f"journal {path}: directory {parent} does not exist")
            made_lock = not os.path.lexists(path + ".lock")
            lock_fd = _lock_writer(path)
        try:
            conn = _open_checked(path, readonly)
        except BaseException:
            if lock_fd is not None:
                if made_lock:  # a file that is no journal leaves no stray .lock behind
                    with contextlib.suppress(OSError):
                        os.unlink(path + ".lock")
                os.close(lock_fd)
            raise
        journal = cls(path, conn)
        journal._lock_fd = lock_fd
        try:
            journal._check_meta(table_id, readonly)
            if verify:
                journal.verify()
        except BaseException:
            journal.close()
            raise
        return journal

    @classmethod
    def create(cls, path: str | os.PathLike[str], *, table_id: str,
               first: Callable[[str], Sequence[dict[str, Any]]] | None = None,
               time: str | None = None) -> Journal:
        """Make a new journal at ``path``, which must not exist, and open it.

        Atomic: the file is built beside it (``<path>.new``) with its tables, its
        ``table_id``, a fresh :attr:`epoch` and ``first(epoch)``'s events (the daemon's
        ``journal_started``), checkpointed into one file, fsynced, then linked into place
        only if nothing appeared there meanwhile. So a journal file that exists always
        holds a journal, and :meth:`open` with ``existing=True`` can refuse one that
        does not.

        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "j.sqlite3")
        >>> j = Journal.create(p, table_id="T1", first=lambda e: [
        ...     {"type": "journal_started", "epoch": e, "table": "T1", "previous": None}])
        >>> j.last_seq, next(j.replay()).data["epoch"] == j.epoch, os.path.exists(p + ".new")
        (1, True, False)
        >>> j.close(); Journal.create(p, table_id="T1")
        Traceback (most recent call last):
        ...
        shoe_controller.journal.JournalError: journal ...: already exists; refusing to create ...
        """
        path = os.fspath(path)
        if os.path.lexists(path):
            raise JournalError(f"journal {path}: already exists; refusing to create a new "
                               "journal over it")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise JournalError(f"journal {path}: directory {parent} does not exist")
        tmp = path + ".new"
        for stale in (tmp, tmp + "-wal", tmp + "-shm", tmp + ".lock"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(stale)
        epoch = new_epoch()
        j = cls.open(tmp, table_id=table_id, verify=False)
        try:
            with j._conn:
                j._conn.execute("UPDATE meta SET value = ? WHERE key = 'epoch'", (epoch,))
            j.epoch = epoch
            if first is not None:
                events = list(first(epoch))
                if events:
                    j.append(events, time)
        finally:
            j.close()  # the last connection: SQLite checkpoints and removes the WAL
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # fails if a journal appeared meanwhile
        except FileExistsError:
            raise JournalError(f"journal {path}: appeared while a new one was being made; "
                               "refusing to replace it") from None
        finally:
            for stale in (tmp, tmp + "-wal", tmp + "-shm", tmp + ".lock"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(stale)
        dfd = os.open(parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        return cls.open(path, table_id=table_id, existing=True)

    def first_entry(self) -> JournalEntry | None:
        """Seq 1 (``journal_started`` for journals the daemon made), or None."""
        return next(iter(self.replay(1, 1)), None)

    def entry(self, seq: int) -> JournalEntry | None:
        """The entry ``seq``, or None when the journal does not hold it."""
        return next(iter(self.replay(seq, seq)), None) if seq >= 1 else None

    def of_type(self, type_: str) -> list[JournalEntry]:
        """Every entry of one type, in order (e.g. the ``key_rotated`` events)."""
        conn = connect(self.path, readonly=True)
        try:
            rows = conn.execute("SELECT seq, time, type, body, prev_hash, hash FROM events "
                                "WHERE type = ? ORDER BY seq", (type_,)).fetchall()
        finally:
            conn.close()
        return [JournalEntry(*r) for r in rows]

    def _check_meta(self, table_id: str | None, readonly: bool) -> None:
        meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        version = meta.get("format_version")
        if version is None and not readonly:
            with self._conn:
                self._conn.execute("INSERT INTO meta VALUES ('format_version', ?)",
                                   (str(FORMAT_VERSION),))
                if table_id is not None:
                    self._conn.execute("INSERT INTO meta VALUES ('table_id', ?)", (table_id,))
            meta["table_id"] = table_id or ""
        elif version is not None and version != str(FORMAT_VERSION):
            raise JournalMismatch(f"journal {self.path}: format version {version}, this "
                                  f"program reads version {FORMAT_VERSION}")
        epoch = meta.get("epoch")
        if epoch is None and not readonly:
            # A journal made before epochs existed gets its epoch the first time a
            # writer opens it (new journals get theirs at creation, just above).
            epoch = new_epoch()
            with self._conn:
                self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('epoch', ?)",
                                   (epoch,))
            epoch = self._conn.execute(
                "SELECT value FROM meta WHERE key = 'epoch'").fetchone()[0]
        self.epoch = epoch
        stored = meta.get("table_id") or None
        if table_id is not None and stored is not None and stored != table_id:
            raise JournalMismatch(
                f"journal {self.path} belongs to table {stored!r}, the config says table "
                f"{table_id!r}: point [journal] path at that table's own journal"
            )
        if table_id is not None and stored is None and not readonly:
            with self._conn:
                self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('table_id', ?)",
                                   (table_id,))
            stored = table_id
        self.table_id = stored

    # -- writing ---------------------------------------------------------------------

    def append(self, events: Sequence[Any], time: str | datetime | None = None, *,
               hook: AppendHook | None = None) -> list[JournalEntry]:
        """Append ``events`` in one transaction (all or none), fsynced before returning.

        ``time`` is stamped on every event of the call (default: now, UTC). ``hook`` runs
        inside the transaction with the new entries (to write outbox rows atomically).
        """
        stamp = time if isinstance(time, str) else utc_timestamp(time)
        encoded = [encode_body(ev) for ev in events]
        if not encoded:
            return []
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Re-read the tail inside the write lock: correct even if another
                # connection appended (it should not; this keeps the chain right anyway).
                row = conn.execute(
                    "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
                seq, prev = (row[0], row[1]) if row else (0, GENESIS)
                entries = []
                for type_, body in encoded:
                    seq += 1
                    digest = chain_hash(prev, seq, stamp, type_, body)
                    entries.append(JournalEntry(seq, stamp, type_, body, prev, digest))
                    prev = digest
                conn.executemany(
                    "INSERT INTO events (seq, time, type, body, prev_hash, hash) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(e.seq, e.time, e.type, e.body, e.prev_hash, e.hash) for e in entries],
                )
                if hook is not None:
                    hook(conn, entries)
                conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                _rollback(conn)
                # e.g. "database or disk is full": say where, and that nothing was written
                raise JournalError(f"journal {self.path}: cannot append {len(encoded)} "
                                   f"event(s): {exc}; nothing of them was journaled") from exc
            except BaseException:
                _rollback(conn)
                raise
            self._last_seq, self._last_hash = seq, prev
            self.appended_at = _time.monotonic()
            return entries

    # -- checkpoints -----------------------------------------------------------------

    def defer_checkpoints(self) -> None:
        """Stop SQLite from running WAL checkpoints inside :meth:`append`: from now on
        someone calls :meth:`checkpoint` (a :class:`Checkpointer` does). By default SQLite
        runs one in the commit that takes the WAL past 1000 pages, i.e. on a card's path:
        ~4 MB written and two more fsyncs, far beyond a card's budget on an SD card."""
        with self._lock:
            self._conn.execute("PRAGMA wal_autocheckpoint = 0")

    def wal_bytes(self) -> int:
        """Size of the ``-wal`` file now (0 when there is none)."""
        try:
            return os.path.getsize(self.path + "-wal")
        except OSError:
            return 0

    def checkpoint(self, mode: str = "PASSIVE", busy_ms: int = 100) -> tuple[int, int]:
        """Copy the WAL's committed pages into the database file: SQLite's PASSIVE
        checkpoint, which waits for no reader or writer, so appends go on meanwhile.
        Returns ``(frames in the WAL, frames checkpointed)``; they are equal when the WAL
        was copied whole (the next append then starts it afresh).

        >>> import tempfile, os
        >>> with Journal.open(os.path.join(tempfile.mkdtemp(), "j.sqlite3")) as j:
        ...     _ = j.append([{"type": "shoe_started", "shoe": 1, "decks": 8}])
        ...     frames, copied = j.checkpoint()
        ...     frames > 0 and frames == copied
        True
        """
        if mode not in ("PASSIVE", "TRUNCATE"):
            raise ValueError(f"checkpoint mode {mode!r}: PASSIVE or TRUNCATE")
        with self._ckpt_lock:
            if self._ckpt_conn is None:
                self._ckpt_conn = connect(self.path, autocheckpoint=False)
            conn = self._ckpt_conn
            if mode == "TRUNCATE":
                # waits for readers and writers, but only this long: never a card's stall
                conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
            try:
                _busy, frames, copied = conn.execute(
                    f"PRAGMA wal_checkpoint({mode})").fetchone()
            finally:
                if mode == "TRUNCATE":
                    conn.execute("PRAGMA busy_timeout = 10000")
        return int(frames), int(copied)

    # -- reading ---------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """Sequence number of the last appended event (0 when empty)."""
        return self._last_seq

    @property
    def last_hash(self) -> str:
        return self._last_hash

    def replay(self, from_seq: int = 1, to_seq: int | None = None,
               batch: int = 2000) -> Iterator[JournalEntry]:
        """Entries from ``from_seq`` to ``to_seq`` (inclusive), in order.

        Reads on a private connection in batches, so appends may go on meanwhile.
        """
        conn = connect(self.path, readonly=True)
        try:
            seq = from_seq - 1
            while True:
                rows = conn.execute(
                    "SELECT seq, time, type, body, prev_hash, hash FROM events "
                    "WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
                    (seq, to_seq if to_seq is not None else (1 << 62), batch),
                ).fetchall()
                if not rows:
                    return
                for row in rows:
                    yield JournalEntry(*row)
                seq = rows[-1][0]
        finally:
            conn.close()

    def events(self, from_seq: int = 1) -> Iterator[Any]:
        """The game core's event Structs, in order: fold ``evolve`` over these to resume."""
        for entry in self.replay(from_seq):
            yield entry.event()

    def verify(self) -> int:
        """Check every row; return the number of events. Raise :class:`JournalCorrupt`
        naming the first bad seq and what is wrong with it."""
        try:
            return verify_entries(self.replay(), where=f"journal {self.path}")
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"journal {self.path}: cannot read the events ({exc}); "
                                 "the file is damaged (see docs/journal.md, recovery)") from None

    def close(self) -> None:
        with self._ckpt_lock:
            if self._ckpt_conn is not None:
                self._ckpt_conn.close()
                self._ckpt_conn = None
        self._conn.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Checkpointer:
    """Runs the journal file's WAL checkpoints on a thread of its own, once the journal
    has been idle for ``idle`` seconds (between a dealer's cards), at most every
    ``every`` seconds, and at most ``max_wait`` seconds late while appends keep coming.

    A checkpoint never blocks an append (PASSIVE), and ``append`` no longer runs one
    (:meth:`Journal.defer_checkpoints`). The WAL then holds about a second of appends
    instead of growing to SQLite's 1000-page threshold between checkpoints. It cannot be
    starved: a checkpoint that could not copy the whole WAL is tried again at the next
    round (not only after new appends), one is forced ``max_wait`` seconds into a burst,
    and a WAL past ``wal_limit`` bytes gets a TRUNCATE at the next quiet moment (it waits
    for readers at most 100 ms). The file is emptied (TRUNCATE) after ``truncate_idle``
    quiet seconds and at the end of a shoe (:meth:`truncate_soon`); in between, every
    connection's ``journal_size_limit`` (:data:`WAL_LIMIT`) cuts a reset WAL back. A checkpoint
    that fails (a full disk) is logged and tried again: the WAL keeps every commit until
    then, so nothing is lost. ``runs`` counts the checkpoints done and ``last`` holds the
    last one's ``(frames, copied)``.

    >>> import tempfile, os
    >>> j = Journal.open(os.path.join(tempfile.mkdtemp(), "j.sqlite3"))
    >>> with Checkpointer(j, idle=0.01, every=0.01) as c:
    ...     _ = j.append([{"type": "shoe_started", "shoe": 1, "decks": 8}])
    ...     c.wait_runs(1, timeout=10)
    True
    >>> j.close()
    """

    def __init__(self, journal: Journal, *, idle: float = 0.05, every: float = 1.0,
                 max_wait: float = 10.0, truncate_idle: float = 5.0,
                 wal_limit: int = WAL_LIMIT) -> None:
        self.journal = journal
        self.idle, self.every, self.max_wait = idle, every, max_wait
        self.truncate_idle, self.wal_limit = truncate_idle, wal_limit
        self.truncates = 0
        self._truncate = threading.Event()
        self.runs = 0
        self.last: tuple[int, int] | None = None
        #: the last checkpoint failed (reported once until one works again)
        self.failing = False
        self._done_through = 0.0  # appended_at covered by the last checkpoint
        self._halt = threading.Event()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def start(self) -> Checkpointer:
        self.journal.defer_checkpoints()
        self._thread = threading.Thread(target=self._run, name="journal-checkpoint",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread (closing the journal's last connection checkpoints anyway)."""
        self._halt.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> Checkpointer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_runs(self, n: int, timeout: float) -> bool:
        """Wait until ``n`` checkpoints have run; False on timeout (tests)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.runs >= n, timeout)

    def truncate_soon(self) -> None:
        """Ask for a TRUNCATE checkpoint at the next quiet moment (the daemon: a shoe
        ended), which leaves the ``-wal`` file empty."""
        self._truncate.set()

    def _run(self) -> None:
        journal = self.journal
        last = 0.0  # monotonic time of the last checkpoint
        pending_since: float | None = None  # first append not yet checkpointed
        while not self._halt.wait(min(self.every, self.idle, 0.05)):
            now = _time.monotonic()
            quiet = now - journal.appended_at
            if journal.appended_at > self._done_through:
                if pending_since is None:
                    pending_since = now
                wal = journal.wal_bytes()
                if ((quiet >= self.idle and now - last >= self.every)
                        or now - pending_since >= self.max_wait
                        # at full speed the journal is never quiet: the WAL's size decides
                        or wal > self.wal_limit // 2):
                    self._checkpoint("PASSIVE")
                    last, pending_since = now, None
                    # Still past the limit (readers kept it from being reset): empty it,
                    # waiting for readers and writers at most 100 ms (only a WAL this
                    # big, which dealing at a human pace never makes, costs that).
                    if journal.wal_bytes() > self.wal_limit:
                        self._checkpoint("TRUNCATE")
                continue
            if journal.wal_bytes() and (
                    (self._truncate.is_set() and quiet >= self.idle)
                    or quiet >= self.truncate_idle):
                self._truncate.clear()
                self._checkpoint("TRUNCATE")

    def _checkpoint(self, mode: str = "PASSIVE") -> None:
        mark = self.journal.appended_at
        try:
            result = self.journal.checkpoint(mode)
        except sqlite3.Error as exc:
            # once per spell of failures (a full disk fails every retry until it is freed)
            level = logging.DEBUG if self.failing else logging.WARNING
            self.failing = True
            _log.log(level, "journal %s: WAL checkpoint failed (%s); the WAL keeps every "
                     "commit, retrying every %.0f s", self.journal.path, exc, self.every)
            return
        if self.failing:
            _log.info("journal %s: WAL checkpoints work again", self.journal.path)
            self.failing = False
        with self._cond:
            if result[0] == result[1] or mode == "TRUNCATE":
                self._done_through = mark  # else: look again next time (not starved)
            if mode == "TRUNCATE":
                self.truncates += 1
            else:
                self.last = result
                self.runs += 1
            self._cond.notify_all()


_log = logging.getLogger("shoe_controller.journal")


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open (SQLite may already have rolled it back,
    e.g. after a full disk)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


#: The columns of the journal's tables, in order (what ``_SCHEMA`` creates).
_COLUMNS: Final = {
    "meta": ("key", "value"),
    "events": ("seq", "time", "type", "body", "prev_hash", "hash"),
}


def _schema_problem(conn: sqlite3.Connection) -> str | None:
    """What makes the file not a journal's schema, or None; reads ``sqlite_master`` and
    the tables' column lists only, never a row: ``meta`` and ``events`` (where present)
    must be real tables with the journal's columns, and there must be no view and no
    trigger at all (a view named ``events``, recursive, made ``journal verify`` hang; a
    trigger would run code on every append).

    >>> conn = sqlite3.connect(":memory:")
    >>> _ = conn.executescript(_SCHEMA); _schema_problem(conn) is None
    True
    >>> _ = conn.executescript("DROP TABLE events; CREATE VIEW events AS SELECT 1")
    >>> _schema_problem(conn)
    "'events' is a view, not a table"
    """
    rows = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
    for kind, name in rows:
        if kind in ("view", "trigger"):
            return f"{name!r} is a {kind}, not a table" if name in _COLUMNS else (
                f"it has a {kind} ({name!r}): a journal has none")
    kinds = {name: kind for kind, name in rows}
    for name, columns in _COLUMNS.items():
        if name not in kinds:
            continue
        if kinds[name] != "table":
            return f"{name!r} is a {kinds[name]}, not a table"
        got = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({name})"))
        if got != columns:
            return f"table {name!r} has columns {list(got)}, not {list(columns)}"
    return None


def _check_holds_a_journal(path: str) -> None:
    """Refuse (JournalCorrupt) a journal file that is missing or holds no journal, before
    SQLite would quietly make an empty database of it: what is missing, what to do."""
    wal = path + "-wal"
    restore = ("Put back the journal's latest copy together with its -wal file (or a copy "
               "made with `sqlite3 FILE .backup`); to start a new journal deliberately, "
               "move this file aside first (docs/journal.md, \"Never started over\")")
    try:
        size = os.path.getsize(path)
    except OSError:
        raise JournalCorrupt(f"journal {path}: no such file") from None
    if size == 0:
        what = ("and there is no -wal file beside it" if not os.path.exists(wal)
                else "its events can only be in the -wal file beside it")
        raise JournalCorrupt(f"journal {path} exists but is empty: it holds no journal "
                             f"({what}). {restore}")
    try:
        conn = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
        try:
            problem = _schema_problem(conn)
            if problem is not None:
                raise JournalCorrupt(f"journal {path}: not a shoe-controller journal "
                                     f"({problem}); refusing to read it. {restore}")
            tables = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall()) \
                if "meta" in tables else {}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise JournalCorrupt(f"journal {path}: not a readable SQLite database ({exc}). "
                             f"{restore}") from None
    if not {"meta", "events"} <= tables or "format_version" not in meta:
        wal_note = ("its -wal file is missing: a journal copied without it loses every "
                    "event not yet checkpointed" if not os.path.exists(wal)
                    else "not even with its -wal file")
        raise JournalCorrupt(f"journal {path} exists but holds no journal (tables "
                             f"{sorted(tables)}; {wal_note}). {restore}")


def _open_checked(path: str, readonly: bool) -> sqlite3.Connection:
    """A connection to a sound SQLite file holding a journal's tables, or JournalCorrupt."""
    conn = None
    try:
        conn = connect(path, readonly=readonly)
        problem = _schema_problem(conn)  # before any query of a row (or of a view)
        if problem is not None:
            raise JournalCorrupt(f"journal {path}: not a shoe-controller journal "
                                 f"({problem}); refusing to read it")
        if not readonly:
            with conn:
                conn.executescript(_SCHEMA)
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise JournalCorrupt(
                f"journal {path}: the SQLite file is damaged ({check}); refusing to "
                "start on it. Move it aside and restore the last good copy "
                "(see docs/journal.md, recovery)."
            )
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if not {"meta", "events"} <= tables:
            raise JournalCorrupt(f"journal {path}: not a shoe-controller journal "
                                 f"(tables {sorted(tables)})")
        return conn
    except sqlite3.OperationalError as exc:
        # Not damage: the file cannot be opened or locked (permissions, a directory, a
        # full or read-only disk). Say so rather than calling the journal corrupt.
        if conn is not None:
            conn.close()
        hint = (" (a read-only audit also needs write access to the journal's folder for "
                "SQLite's -shm file: or audit a copy made with sqlite3 .backup)"
                if readonly else "")
        raise JournalError(f"journal {path}: cannot open it: {exc}{hint}") from None
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise JournalCorrupt(
            f"journal {path}: not a readable SQLite database ({exc}); refusing to "
            "start on it. Move it aside and restore the last good copy "
            "(see docs/journal.md, recovery)."
        ) from None
    except BaseException:
        if conn is not None:
            conn.close()
        raise


def _lock_writer(path: str) -> int:
    """Take the writer's lock (``<journal>.lock``, a POSIX record lock): one process
    appends to a journal. Another daemon on the same file would fold its own view of the
    shoe; refuse it with a clear message instead. The kernel drops the lock when the
    process dies, so a crash never leaves it stale; readers (audits) need no lock."""
    lock_path = path + ".lock"
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o640)
    except OSError as exc:
        raise JournalError(f"journal {path}: cannot create {lock_path} ({exc.strerror})"
                           ) from None
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise JournalError(
            f"journal {path} is in use by another process (pid {holder}): stop it first "
            "(e.g. systemctl stop shoe-controller); one daemon per journal") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def verify_entries(entries: Iterable[JournalEntry], where: str = "journal") -> int:
    """Check sequence, chain and hashes of ``entries`` (from seq 1); return the count.

    >>> a = JournalEntry(1, "t", "x", '{"type":"x"}', GENESIS,
    ...                  chain_hash(GENESIS, 1, "t", "x", '{"type":"x"}'))
    >>> verify_entries([a])
    1
    >>> verify_entries([a, a])
    Traceback (most recent call last):
    ...
    shoe_controller.journal.JournalCorrupt: journal: seq 1 follows seq 1, expected seq 2 ...
    """
    return sum(1 for _ in checked_entries(entries, where))


def checked_entries(entries: Iterable[JournalEntry],
                    where: str = "journal") -> Iterator[JournalEntry]:
    """Yield each of ``entries`` (from seq 1) only once it has been checked.

    Raises :class:`JournalCorrupt` at the first bad row, before yielding it.
    """
    expected_seq, prev = 1, GENESIS
    for e in entries:
        if e.seq != expected_seq:
            raise JournalCorrupt(
                f"{where}: seq {e.seq} follows seq {expected_seq - 1}, expected seq "
                f"{expected_seq} (a row was deleted or inserted)", seq=expected_seq)
        if e.prev_hash != prev:
            raise JournalCorrupt(
                f"{where}: seq {e.seq}: prev_hash does not match the hash of seq "
                f"{e.seq - 1} (the chain is broken here)", seq=e.seq)
        if chain_hash(e.prev_hash, e.seq, e.time, e.type, e.body) != e.hash:
            raise JournalCorrupt(
                f"{where}: seq {e.seq}: stored hash does not match its content "
                "(the row was edited or damaged)", seq=e.seq)
        try:
            body = json.loads(e.body)
        except ValueError:
            raise JournalCorrupt(f"{where}: seq {e.seq}: body is not JSON",
                                 seq=e.seq) from None
        if not isinstance(body, dict) or body.get("type") != e.type:
            raise JournalCorrupt(f"{where}: seq {e.seq}: type column {e.type!r} does not "
                                 "match the body's type", seq=e.seq)
        prev = e.hash
        expected_seq += 1
        yield e


def connect(path: str, *, readonly: bool = False, synchronous: str = "FULL",
            autocheckpoint: bool = True) -> sqlite3.Connection:
    """A connection to a journal file with the journal's pragmas.

    Autocommit mode (transactions are explicit), usable from any thread (callers
    serialise their own use), WAL, a busy timeout so the outbox writer and the journal
    writer wait for each other instead of failing. ``autocheckpoint=False``: this
    connection's commits never run a WAL checkpoint (the journal's own connection, or a
    :class:`Checkpointer`, does).
    """
    if readonly:
        uri = f"file:{os.path.abspath(path)}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 10000")
    if not readonly:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"journal {path}: cannot switch to WAL mode (got {mode})")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT}")
        if not autocheckpoint:
            conn.execute("PRAGMA wal_autocheckpoint = 0")
    return conn
