"""The durable outbox: messages waiting for the broker's acknowledgement, in the journal's
own SQLite file.

A message is written here (in the same transaction as its journal rows when the daemon
uses :meth:`Publisher.append`, else right after) and deleted only when the broker's
PUBACK arrives without a failure reason code. Whatever is here when the process starts is
sent again. ``outbox_through_seq`` in ``meta`` records the last journal seq whose messages
were staged, in the same transaction as the messages: after a crash between the journal
commit and the outbox commit, the publisher re-derives the missing messages from the
journal. The retained display state is *coalesced*: a new one replaces any older one not
yet acknowledged (only the latest matters).

These functions take a connection and leave transactions to the caller.

>>> import sqlite3
>>> conn = sqlite3.connect(":memory:", isolation_level=None)
>>> ensure_schema(conn)
>>> [r.id for r in stage(conn, [Message("t/casino", b"1", retain=False, seq=1),
...     Message("t/display", b"a", retain=True, coalesce_key="display")], 1)]
[1, 2]
>>> [r.id for r in stage(conn, [Message("t/display", b"b", retain=True,
...                                     coalesce_key="display")], 1)]
[3]
>>> [(r.topic, r.payload) for r in fetch(conn, after_id=0, limit=10)]
[('t/casino', b'1'), ('t/display', b'b')]
>>> staged_through(conn), pending_count(conn)
(1, 2)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Message",
    "Row",
    "delete",
    "ensure_schema",
    "fetch",
    "fetch_ids",
    "pending_count",
    "stage",
    "staged_through",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    topic        TEXT NOT NULL,
    payload      BLOB NOT NULL,
    retain       INTEGER NOT NULL,
    seq          INTEGER,
    coalesce_key TEXT UNIQUE
);
"""


@dataclass(frozen=True, slots=True)
class Message:
    """A message to publish (QoS 1). ``seq``: the journal seq it carries, if any."""

    topic: str
    payload: bytes
    retain: bool = False
    seq: int | None = None
    coalesce_key: str | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """A stored message, with its outbox id (monotonic: AUTOINCREMENT never reuses)."""

    id: int
    topic: str
    payload: bytes
    retain: bool
    seq: int | None


def ensure_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)


def stage(conn: sqlite3.Connection, messages: Iterable[Message],
          through_seq: int) -> list[Row]:
    """Store ``messages`` and record that journal events up to ``through_seq`` are staged.

    Returns the stored rows (with their ids), in order.
    """
    rows = []
    for m in messages:
        if m.coalesce_key is not None:
            conn.execute("DELETE FROM outbox WHERE coalesce_key = ?", (m.coalesce_key,))
        cur = conn.execute(
            "INSERT INTO outbox (topic, payload, retain, seq, coalesce_key) "
            "VALUES (?, ?, ?, ?, ?)",
            (m.topic, m.payload, int(m.retain), m.seq, m.coalesce_key),
        )
        rows.append(Row(int(cur.lastrowid or 0), m.topic, m.payload, m.retain, m.seq))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('outbox_through_seq', ?)",
                 (str(through_seq),))
    return rows


def staged_through(conn: sqlite3.Connection) -> int:
    """The last journal seq whose messages are in (or have left) the outbox; 0 if none."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'outbox_through_seq'").fetchone()
    return int(row[0]) if row else 0


def fetch(conn: sqlite3.Connection, after_id: int, limit: int) -> list[Row]:
    """Up to ``limit`` messages with id greater than ``after_id``, oldest first."""
    rows = conn.execute(
        "SELECT id, topic, payload, retain, seq FROM outbox WHERE id > ? ORDER BY id LIMIT ?",
        (after_id, limit),
    ).fetchall()
    return [Row(r[0], r[1], bytes(r[2]), bool(r[3]), r[4]) for r in rows]


def fetch_ids(conn: sqlite3.Connection, ids: Sequence[int]) -> list[Row]:
    """The messages among ``ids`` still in the outbox (a coalesced one may be gone)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT id, topic, payload, retain, seq FROM outbox WHERE id IN ({marks}) ORDER BY id",
        tuple(ids),
    ).fetchall()
    return [Row(r[0], r[1], bytes(r[2]), bool(r[3]), r[4]) for r in rows]


def delete(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    """Forget acknowledged messages."""
    conn.executemany("DELETE FROM outbox WHERE id = ?", [(i,) for i in ids])


def pending_count(conn: sqlite3.Connection, *, with_head: bool = False) -> int:
    """Messages not yet acknowledged by the broker. The retained head (re-signed every
    few seconds, coalesced, re-derived from the journal at any time) is left out unless
    ``with_head``: a fresh heartbeat head is not a message "left in the outbox"."""
    if with_head:
        return int(conn.execute("SELECT COUNT(*) FROM outbox").fetchone()[0])
    return int(conn.execute("SELECT COUNT(*) FROM outbox WHERE coalesce_key IS NULL "
                            "OR coalesce_key != 'head'").fetchone()[0])
