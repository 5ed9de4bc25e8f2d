"""The daemon's memory of earlier shoes: the fingerprint store, across journals.

The shuffle-repeat test (``game.protection``) compares the 8-card windows of the shoe
being dealt with those of earlier shoes. :class:`~shoe_controller.fingerprints.
FingerprintStore` keeps them in SQLite by shoe number; this adapter puts that store in
its own file in the state directory (``fingerprints.sqlite3``), so the history outlives
a journal that is archived or replaced (a recovered or new SD card, a fresh journal
after an audit), and keys each shoe by *(journal, shoe number)*.

Why the key: shoe numbers restart at 1 in every journal, and the projection ignores
matches against the shoe it is dealing (``exclude_shoe``: a journal folded again never
alarms on itself). Stored as plain numbers, shoe 1 of a new journal would be blind to
shoe 1 of the old one, and both would be merged into one "shoe 1". So each journal gets
an *epoch* (its first event's hash -> a number, in a small table of this file) and a
shoe is stored as ``epoch * SHOES_PER_EPOCH + shoe``. Loading gives the projection this
journal's shoes under their own numbers, and every other journal's shoes under numbers
0, -1, -2... (most recent first): never equal to a shoe of this journal, and ordered
oldest-lowest, as the projection's history bound (``keep_shoes``) expects.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> old = FingerprintHistory.open(os.path.join(d, "fp.sqlite3"), keep=10)
>>> old.add_shoe("journal-A", 1, [11, 12])
2
>>> new = FingerprintHistory.open(os.path.join(d, "fp.sqlite3"), keep=10)
>>> new.known("journal-B").shoes_of(11), new.known("journal-A").shoes_of(11)
((0,), (1,))
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from shoe_controller.fingerprints import FingerprintStore

__all__ = ["FINGERPRINTS_FILE", "SHOES_PER_EPOCH", "FingerprintHistory"]

#: The store's file name in the daemon's state directory.
FINGERPRINTS_FILE = "fingerprints.sqlite3"
#: Shoe numbers of one journal fit below this (a table deals ~30 shoes a day).
SHOES_PER_EPOCH = 1 << 24

_SCHEMA = """
CREATE TABLE IF NOT EXISTS fingerprint_journals (
    epoch   INTEGER PRIMARY KEY AUTOINCREMENT,
    journal TEXT NOT NULL UNIQUE      -- the journal's first event hash
);
"""


class FingerprintHistory:
    """Earlier shoes' fingerprints for the daemon (one table's store).

    ``keep``: shoes kept (``[analytics] fingerprint_history_shoes``); older ones are
    forgotten after each finished shoe.
    """

    def __init__(self, store: FingerprintStore, conn: sqlite3.Connection, keep: int,
                 path: str) -> None:
        self.store = store
        self._conn = conn
        self.keep = keep
        self.path = path

    @classmethod
    def open(cls, path: str, keep: int, salt: bytes | None = None) -> FingerprintHistory:
        """Open (creating) the store at ``path``; ``salt`` as in ``FingerprintStore``."""
        store = FingerprintStore.open(path, salt)
        try:
            conn = sqlite3.connect(path, timeout=10, isolation_level=None)
            conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            store.close()
            raise OSError(f"fingerprint store {path}: {exc}") from exc
        return cls(store, conn, keep, path)

    @property
    def salt(self) -> bytes:
        return self.store.salt

    def _epoch(self, journal: str | None, create: bool) -> int | None:
        if journal is None:
            return None
        row = self._conn.execute(
            "SELECT epoch FROM fingerprint_journals WHERE journal = ?", (journal,)).fetchone()
        if row is None and create:
            cur = self._conn.execute(
                "INSERT INTO fingerprint_journals (journal) VALUES (?)", (journal,))
            return int(cur.lastrowid or 0)
        return None if row is None else int(row[0])

    def known(self, journal: str | None) -> Any:
        """The last ``keep`` shoes' fingerprints as the projection wants them, seen from
        ``journal`` (its first event hash; None for a journal still empty): a
        ``shuffle_integrity.FingerprintSet``."""
        import numpy as np

        from shoe_controller.game.shuffle_integrity import FingerprintSet

        loaded = self.store.load(self.keep)
        if not len(loaded):
            return loaded
        epoch = self._epoch(journal, create=False)
        keys = loaded.shoes
        mine = (keys // SHOES_PER_EPOCH) == (epoch if epoch is not None else -1)
        others = np.unique(keys[~mine])[::-1]  # most recent first
        rank = np.searchsorted(-others, -keys)  # position in ``others`` (descending)
        shoes = np.where(mine, keys % SHOES_PER_EPOCH, -rank).astype(np.int64)
        # fps stay sorted (the arrays are only relabelled; the mapping is one to one)
        return FingerprintSet(loaded.fps, shoes)

    def add_shoe(self, journal: str, shoe: int, fingerprints: Iterable[int]) -> int:
        """Store a finished shoe of ``journal`` (idempotent) and forget beyond ``keep``;
        returns how many fingerprints were new."""
        if not 0 < shoe < SHOES_PER_EPOCH:
            raise ValueError(f"shoe number {shoe} out of range")
        epoch = self._epoch(journal, create=True)
        assert epoch is not None
        added = self.store.add_shoe(epoch * SHOES_PER_EPOCH + shoe, fingerprints)
        self.store.forget(keep=self.keep)
        return added

    def close(self) -> None:
        self._conn.close()
        self.store.close()
