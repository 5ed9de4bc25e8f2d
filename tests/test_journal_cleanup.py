"""What a failed open leaves behind (issue 15, journal's clean-up paths): the SQLite
connection closed and the lock file gone, whatever went wrong. The expectations are the
docstrings of ``Journal.open`` and ``_open_checked`` (a file that is no journal leaves no
stray ``.lock``; the error is JournalCorrupt), not the code's own branches."""

from __future__ import annotations

import os
import sqlite3

import pytest

from shoe_controller import journal as journal_mod
from shoe_controller.journal import Journal, JournalCorrupt


def _recording_connect(monkeypatch) -> list[sqlite3.Connection]:
    """Every connection the journal opens, so a test can ask whether it was closed."""
    opened: list[sqlite3.Connection] = []
    real = journal_mod.connect

    def connect(*args, **kwargs):
        conn = real(*args, **kwargs)
        opened.append(conn)
        return conn

    monkeypatch.setattr(journal_mod, "connect", connect)
    return opened


def _closed(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:  # "Cannot operate on a closed database."
        return True
    return False


def test_a_sqlite_file_that_is_no_journal_has_its_connection_closed(tmp_path, monkeypatch):
    # a sound SQLite file with other tables, opened read-only (an audit: it never adds the
    # journal's tables): refused as JournalCorrupt, not an SQLite error, and the
    # connection opened to look at it must not be left open
    path = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE unrelated (x INTEGER)")
    conn.commit()
    conn.close()
    opened = _recording_connect(monkeypatch)
    with pytest.raises(JournalCorrupt):
        Journal.open(path, table_id="T1", readonly=True)
    assert opened, "the journal opened no connection: the test checks nothing"
    assert all(_closed(c) for c in opened)


def test_a_damaged_schema_has_its_connection_closed(tmp_path, monkeypatch):
    # _schema_problem's refusal (an events VIEW) is raised inside _open_checked
    path = tmp_path / "view.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE VIEW events(seq, time, type, body, prev_hash, hash) AS
          SELECT 1, 't', 'x', '{}', '', '';
        """)
    conn.close()
    opened = _recording_connect(monkeypatch)
    with pytest.raises(JournalCorrupt, match="not a shoe-controller journal"):
        Journal.open(path, table_id="T1")
    assert opened and all(_closed(c) for c in opened)
    assert not os.path.lexists(str(path) + ".lock")


def test_a_lock_file_removed_meanwhile_still_gives_the_journals_error(tmp_path,
                                                                       monkeypatch):
    # The open made the .lock, then found no journal; if the lock file is already gone
    # when it cleans up (removed by hand, or by an operator's tidy-up), the caller must
    # still get JournalCorrupt, not an error of the clean-up.
    path = tmp_path / "journal.sqlite3"
    path.write_bytes(b"this is not a database at all\n" * 100)
    real = journal_mod._open_checked

    def open_checked(p, readonly):
        os.unlink(p + ".lock")
        return real(p, readonly)

    monkeypatch.setattr(journal_mod, "_open_checked", open_checked)
    with pytest.raises(JournalCorrupt, match="not a readable SQLite database"):
        Journal.open(path, table_id="T1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal.sqlite3"]
