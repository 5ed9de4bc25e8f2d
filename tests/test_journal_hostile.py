"""Hostile journal files (issue 14, finding 6): a journal whose ``events`` is a recursive
VIEW made `journal verify` hang; a journal path that is not SQLite left a stray .lock
file behind."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from shoe_controller.journal import Journal, JournalCorrupt

ROOT = Path(__file__).resolve().parents[1]

RECURSIVE_VIEW = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('format_version', '1');
CREATE VIEW events(seq, time, type, body, prev_hash, hash) AS
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
  SELECT i, 't', 'x', '{}', '', '' FROM n;
"""


def make(path: Path, script: str) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.close()
    return path


HOSTILE = {
    "recursive_view": RECURSIVE_VIEW,
    "trigger": """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE events (seq INTEGER PRIMARY KEY, time TEXT NOT NULL,
            type TEXT NOT NULL, body TEXT NOT NULL, prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL);
        CREATE TRIGGER sneak AFTER INSERT ON events BEGIN
            DELETE FROM events WHERE seq = NEW.seq - 1; END;
        """,
    "wrong_columns": """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE events (seq INTEGER PRIMARY KEY, body TEXT);
        """,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_journal_verify_refuses_a_file_that_is_not_the_real_schema(tmp_path, name):
    path = make(tmp_path / "journal.sqlite3", HOSTILE[name])
    proc = subprocess.run([sys.executable, "-m", "shoe_controller.cli", "journal", "verify",
                           str(path)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode != 0
    assert "not a shoe-controller journal" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    for kw in ({"readonly": True}, {}, {"existing": True}):
        with pytest.raises(JournalCorrupt, match="not a shoe-controller journal"):
            Journal.open(path, table_id="T1", **kw)
    assert not (tmp_path / "journal.sqlite3.lock").exists()


@pytest.mark.parametrize("content", [b"this is not a database at all\n" * 100, b"\x00" * 4096])
def test_a_path_that_is_not_sqlite_leaves_no_lock_file(tmp_path, content):
    path = tmp_path / "journal.sqlite3"
    path.write_bytes(content)
    with pytest.raises(JournalCorrupt):
        Journal.open(path, table_id="T1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal.sqlite3"]


def test_an_existing_lock_file_is_left_alone(tmp_path):
    """The lock file of a real journal is not removed by a failed open of another."""
    good = Journal.open(tmp_path / "journal.sqlite3", table_id="T1")
    good.close()
    lock = tmp_path / "journal.sqlite3.lock"
    assert lock.exists()
    bad = tmp_path / "journal.sqlite3"
    bad.write_bytes(b"garbage" * 100)
    with pytest.raises(JournalCorrupt):
        Journal.open(bad, table_id="T1")
    assert lock.exists()
