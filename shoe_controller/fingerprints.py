"""SQLite storage of shoe fingerprints (salted hashes of 8-card windows), never cards.

The shuffle-integrity projection (``game.protection``) compares every 8-card window of
the shoe being dealt with the windows of earlier shoes; this adapter keeps those
fingerprints between runs, in the daemon's database (any SQLite file: the journal's is
fine, the table is separate). The salt (key) is generated once per database unless the
caller provides one: give the daemon a salt from a secret file if the database may
leave the machine, since whoever holds both salt and fingerprints can test guesses.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "fp.sqlite3")
>>> with FingerprintStore.open(path) as store:
...     store.add_shoe(1, [3, 2**64 - 1])
...     store.add_shoe(1, [3])              # idempotent: a replay adds nothing
...     known = store.load()
2
0
>>> known.matches([2**64 - 1, 5]), known.shoes_of(3)
(1, (1,))
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterable
from types import TracebackType

from shoe_controller.game.shuffle_integrity import FingerprintSet

__all__ = ["FingerprintStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS fingerprint_meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS shoe_fingerprints (
    shoe INTEGER NOT NULL,
    fp INTEGER NOT NULL,          -- the unsigned 64-bit fingerprint, stored signed
    PRIMARY KEY (shoe, fp)
) WITHOUT ROWID;
"""


def _signed(fp: int) -> int:
    return fp - 2**64 if fp >= 2**63 else fp


def _unsigned(fp: int) -> int:
    return fp + 2**64 if fp < 0 else fp


class FingerprintStore:
    """Fingerprints of earlier shoes, by shoe number (the journal's)."""

    def __init__(self, conn: sqlite3.Connection, salt: bytes) -> None:
        self._conn = conn
        self.salt = salt

    @classmethod
    def open(cls, path: str, salt: bytes | None = None) -> FingerprintStore:
        """Open (creating if needed) the store in the SQLite file ``path``."""
        try:
            conn = sqlite3.connect(path, timeout=10)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise OSError(f"fingerprint store {path}: {exc}") from exc
        if salt is None:
            row = conn.execute("SELECT value FROM fingerprint_meta WHERE key='salt'").fetchone()
            if row is None:
                salt = secrets.token_bytes(32)
                with conn:
                    conn.execute(
                        "INSERT INTO fingerprint_meta(key, value) VALUES ('salt', ?)", (salt,)
                    )
            else:
                salt = bytes(row[0])
        return cls(conn, salt)

    def add_shoe(self, shoe: int, fingerprints: Iterable[int]) -> int:
        """Store a shoe's fingerprints (idempotent); returns how many were new."""
        rows = [(shoe, _signed(fp)) for fp in fingerprints]
        with self._conn:
            before = self._conn.total_changes
            self._conn.executemany(
                "INSERT OR IGNORE INTO shoe_fingerprints(shoe, fp) VALUES (?, ?)", rows
            )
            return self._conn.total_changes - before

    def load(self, history: int | None = None) -> FingerprintSet:
        """Fingerprints of the last ``history`` shoes stored (all when None)."""
        if history is None:
            rows = self._conn.execute("SELECT fp, shoe FROM shoe_fingerprints")
        else:
            rows = self._conn.execute(
                "SELECT fp, shoe FROM shoe_fingerprints WHERE shoe IN "
                "(SELECT DISTINCT shoe FROM shoe_fingerprints ORDER BY shoe DESC LIMIT ?)",
                (history,),
            )
        return FingerprintSet.of((_unsigned(fp), shoe) for fp, shoe in rows)

    def forget(self, keep: int) -> int:
        """Delete all but the last ``keep`` shoes' fingerprints; returns rows deleted."""
        with self._conn:
            cur = self._conn.execute(
                "DELETE FROM shoe_fingerprints WHERE shoe NOT IN "
                "(SELECT DISTINCT shoe FROM shoe_fingerprints ORDER BY shoe DESC LIMIT ?)",
                (keep,),
            )
            return cur.rowcount

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> FingerprintStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
