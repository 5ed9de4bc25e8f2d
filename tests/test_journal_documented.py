"""Every refusal of the journal, word for word, and its documented defaults (issue 15's
campaign: the tests matched a phrase of each message, so a message that lost what to do,
or gained junk, still passed).

A journal refusal is what an operator reads at 3 a.m.: it must say what is wrong, which
file, and what to do (docs/journal.md, "Recovery" and "Never started over"). The texts
below are written out here, not read from the module; the defaults are read from
docs/journal.md."""

from __future__ import annotations

import os
import re
import sqlite3
import time
from pathlib import Path

import pytest

from shoe_controller.journal import (
    GENESIS,
    Journal,
    JournalCorrupt,
    JournalEntry,
    JournalError,
    JournalMismatch,
    chain_hash,
    checked_entries,
    encode_body,
    verify_entries,
)

T = "2026-12-01T10:00:00.000000Z"
RESTORE = ("Put back the journal's latest copy together with its -wal file (or a copy made "
           "with `sqlite3 FILE .backup`); to start a new journal deliberately, move this "
           "file aside first (docs/journal.md, \"Never started over\")")
DAMAGED = ("refusing to start on it. Move it aside and restore the last good copy "
           "(see docs/journal.md, recovery).")


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "j.sqlite3")


def message(exc_type, fn, *args, **kwargs):
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    return str(info.value)


def make_journal(path: str, n: int = 2) -> None:
    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note", "i": i} for i in range(n)], time=T)


def test_opening_and_creating_where_there_is_nothing(path, tmp_path):
    assert message(JournalError, Journal.open, path, readonly=True) == (
        f"journal {path}: no such file")
    assert message(JournalCorrupt, Journal.open, path, existing=True) == (
        f"journal {path}: no such file")
    nowhere = str(tmp_path / "nope" / "j.sqlite3")
    assert message(JournalError, Journal.open, nowhere) == (
        f"journal {nowhere}: directory {tmp_path / 'nope'} does not exist")
    assert message(JournalError, Journal.create, nowhere, table_id="T1") == (
        f"journal {nowhere}: directory {tmp_path / 'nope'} does not exist")


def test_create_refuses_an_existing_file(path):
    make_journal(path)
    assert message(JournalError, Journal.create, path, table_id="T1") == (
        f"journal {path}: already exists; refusing to create a new journal over it")


def test_an_empty_file_holds_no_journal(path):
    open(path, "wb").close()
    assert message(JournalCorrupt, Journal.open, path, existing=True) == (
        f"journal {path} exists but is empty: it holds no journal (and there is no -wal "
        f"file beside it). {RESTORE}")
    open(path + "-wal", "wb").close()
    assert message(JournalCorrupt, Journal.open, path, existing=True) == (
        f"journal {path} exists but is empty: it holds no journal (its events can only be "
        f"in the -wal file beside it). {RESTORE}")


def test_a_database_without_the_journal_tables_holds_no_journal(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE other (x)")
    conn.commit()
    conn.close()
    assert message(JournalCorrupt, Journal.open, path, existing=True) == (
        f"journal {path} exists but holds no journal (tables ['other']; its -wal file is "
        "missing: a journal copied without it loses every event not yet checkpointed). "
        f"{RESTORE}")
    open(path + "-wal", "wb").close()
    assert message(JournalCorrupt, Journal.open, path, existing=True) == (
        f"journal {path} exists but holds no journal (tables ['other']; not even with its "
        f"-wal file). {RESTORE}")
    assert message(JournalCorrupt, Journal.open, path, readonly=True) == (
        f"journal {path}: not a shoe-controller journal (tables ['other'])")


def test_meta_without_a_format_version_holds_no_journal(path):
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                       "CREATE TABLE events (seq INTEGER PRIMARY KEY, time TEXT NOT NULL,"
                       " type TEXT NOT NULL, body TEXT NOT NULL, prev_hash TEXT NOT NULL,"
                       " hash TEXT NOT NULL);")
    conn.close()
    assert message(JournalCorrupt, Journal.open, path, existing=True) == (
        f"journal {path} exists but holds no journal (tables ['events', 'meta']; its -wal "
        "file is missing: a journal copied without it loses every event not yet "
        f"checkpointed). {RESTORE}")


def test_the_wrong_schema_is_named(path):
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                       "CREATE TABLE events (seq INTEGER PRIMARY KEY, body TEXT);")
    conn.close()
    what = "table 'events' has columns ['seq', 'body'], not ['seq', 'time', 'type', " \
           "'body', 'prev_hash', 'hash']"
    assert message(JournalCorrupt, Journal.open, path, existing=True) == (
        f"journal {path}: not a shoe-controller journal ({what}); refusing to read it. "
        f"{RESTORE}")
    assert message(JournalCorrupt, Journal.open, path, readonly=True) == (
        f"journal {path}: not a shoe-controller journal ({what}); refusing to read it")


def test_a_view_or_a_trigger_is_named(tmp_path):
    cases = {
        "CREATE VIEW events AS SELECT 1 AS seq": "'events' is a view, not a table",
        "CREATE TABLE events (seq INTEGER); CREATE VIEW v AS SELECT 1":
            "it has a view ('v'): a journal has none",
        "CREATE TABLE events (seq INTEGER); CREATE TRIGGER t AFTER INSERT ON events "
        "BEGIN SELECT 1; END": "it has a trigger ('t'): a journal has none",
        "CREATE TABLE m (x); CREATE INDEX meta ON m (x)": "'meta' is a index, not a table",
    }
    for i, (script, what) in enumerate(cases.items()):
        path = str(tmp_path / f"j{i}.sqlite3")
        conn = sqlite3.connect(path)
        conn.executescript(script)
        conn.close()
        assert message(JournalCorrupt, Journal.open, path, readonly=True) == (
            f"journal {path}: not a shoe-controller journal ({what}); refusing to read it")


def test_a_file_that_is_not_sqlite(path):
    with open(path, "wb") as f:
        f.write(b"this is not a database at all" * 100)
    got = message(JournalCorrupt, Journal.open, path)
    assert got == (f"journal {path}: not a readable SQLite database (file is not a "
                   f"database); {DAMAGED}")
    got = message(JournalCorrupt, Journal.open, path, existing=True)
    assert got == (f"journal {path}: not a readable SQLite database (file is not a "
                   f"database). {RESTORE}")


def test_a_journal_of_another_format_or_table(path):
    make_journal(path)
    assert message(JournalMismatch, Journal.open, path, table_id="T2") == (
        f"journal {path} belongs to table 'T1', the config says table 'T2': point "
        "[journal] path at that table's own journal")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '7' WHERE key = 'format_version'")
    conn.commit()
    conn.close()
    assert message(JournalMismatch, Journal.open, path, table_id="T1") == (
        f"journal {path}: format version 7, this program reads version 1")


def test_a_directory_in_the_journal_s_place(tmp_path):
    folder = tmp_path / "journal.sqlite3"
    folder.mkdir()
    # SQLite's own words for the failure vary with the call; the rest is ours
    got = message(JournalError, Journal.open, folder)
    assert re.fullmatch(re.escape(f"journal {folder}: cannot open it: ") + r"[A-Za-z /]+", got)
    got = message(JournalError, Journal.open, folder, readonly=True)
    assert re.fullmatch(re.escape(f"journal {folder}: cannot open it: ") + r"[A-Za-z /]+"
                        + re.escape(" (a read-only audit also needs write access to the "
                                    "journal's folder for SQLite's -shm file: or audit a "
                                    "copy made with sqlite3 .backup)"), got), got


def test_a_journal_in_use_names_the_holder(path):
    """The lock file holds the writer's pid (written by the writer itself)."""
    import subprocess
    import sys
    import textwrap

    make_journal(path)
    code = textwrap.dedent(f"""
        import sys, time
        from shoe_controller.journal import Journal
        j = Journal.open({path!r})
        print("open", flush=True)
        sys.stdin.read()
    """)
    env = dict(os.environ)
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with open(path + ".lock") as f:
            assert f.read() == f"{holder.pid}\n"
        assert message(JournalError, Journal.open, path) == (
            f"journal {path} is in use by another process (pid {holder.pid}): stop it "
            "first (e.g. systemctl stop shoe-controller); one daemon per journal")
    finally:
        holder.communicate("", timeout=30)


def test_the_chain_errors_say_what_happened_to_the_row():
    def entry(seq, prev, body='{"type":"x"}', type_="x"):
        return JournalEntry(seq, T, type_, body, prev, chain_hash(prev, seq, T, type_, body))

    a = entry(1, GENESIS)
    b = entry(2, a.hash)
    cases = [
        ([a, entry(3, a.hash)],
         "J: seq 3 follows seq 1, expected seq 2 (a row was deleted or inserted)"),
        ([a, entry(2, GENESIS)],
         "J: seq 2: prev_hash does not match the hash of seq 1 (the chain is broken here)"),
        ([a, JournalEntry(2, T, "x", '{"type":"y"}', a.hash, b.hash)],
         "J: seq 2: stored hash does not match its content (the row was edited or "
         "damaged)"),
        ([a, entry(2, a.hash, body="{")], "J: seq 2: body is not JSON"),
        ([a, entry(2, a.hash, body='{"type":"y"}')],
         "J: seq 2: type column 'x' does not match the body's type"),
    ]
    for rows, expected in cases:
        assert message(JournalCorrupt, verify_entries, rows, where="J") == expected
        with pytest.raises(JournalCorrupt) as info:
            verify_entries(rows)
        assert info.value.seq == 2  # the first bad seq, for every kind of damage
    # the default place name
    assert message(JournalCorrupt, verify_entries, [entry(2, GENESIS)]) == (
        "journal: seq 2 follows seq 0, expected seq 1 (a row was deleted or inserted)")
    assert message(JournalCorrupt, lambda: list(checked_entries([entry(2, GENESIS)]))) == (
        "journal: seq 2 follows seq 0, expected seq 1 (a row was deleted or inserted)")


def test_an_event_without_a_type_and_a_bad_checkpoint_mode(path):
    assert message(ValueError, encode_body, {"shoe": 1}) == (
        "cannot journal {'shoe': 1}: an event needs a string 'type'")
    assert message(ValueError, encode_body, {"type": ""}) == (
        "cannot journal {'type': ''}: an event needs a string 'type'")
    with Journal.open(path, table_id="T1") as j:
        assert message(ValueError, j.checkpoint, "FULL") == (
            "checkpoint mode 'FULL': PASSIVE or TRUNCATE")


def test_the_checkpointer_s_defaults_are_the_documented_ones():
    """docs/journal.md, "WAL checkpoints": idle 50 ms, at most once a second, at most
    10 s late, a TRUNCATE after 5 s without appends and past 4 MB."""
    from pathlib import Path

    from shoe_controller.journal import WAL_LIMIT, Checkpointer

    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "journal.md")
                   .read_text(encoding="utf-8").split())
    idle = re.search(r"once the journal has been idle for (\d+) ms", doc)
    late = re.search(r"at most once a second and at most (\d+) s late", doc)
    truncate = re.search(r"after (\d+) s without appends", doc)
    limit = re.search(r"a WAL past (\d+) MB gets a TRUNCATE", doc)
    size_limit = re.search(r"`journal_size_limit` to (\d+) MB", doc)
    assert idle and late and truncate and limit and size_limit
    j = Journal.__new__(Journal)  # the defaults only: no file needed
    c = Checkpointer(j)
    assert c.idle == int(idle.group(1)) / 1000
    assert c.every == 1.0
    assert c.max_wait == int(late.group(1))
    assert c.truncate_idle == int(truncate.group(1))
    assert c.wal_limit == WAL_LIMIT == int(limit.group(1)) * 1024 * 1024
    assert int(size_limit.group(1)) * 1024 * 1024 == WAL_LIMIT
    assert (c.runs, c.truncates, c.last, c.failing) == (0, 0, None, False)


def test_a_truncate_checkpoint_waits_for_a_reader_at_most_100_ms_then_empties_the_wal(path):
    """docs/journal.md: a TRUNCATE checkpoint "waits for readers and writers at most
    100 ms", and a quiet journal is "TRUNCATEd to nothing". Every other connection waits
    10 s for a lock, so a TRUNCATE that kept that wait would stall a card for 10 s."""
    from shoe_controller.journal import connect

    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "journal.md")
                   .read_text(encoding="utf-8").split())
    bound = re.search(r"TRUNCATE checkpoint \(it waits for readers and writers at most "
                      r"(\d+) ms", doc)
    assert bound
    bound_s = int(bound.group(1)) / 1000
    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note", "i": i} for i in range(5)], time=T)
        reader = connect(path, readonly=True)
        try:
            reader.execute("BEGIN")  # a snapshot that reads the WAL: it cannot be reset
            assert reader.execute("SELECT count(*) FROM events").fetchone() == (5,)
            j.append([{"type": "note", "i": 5}], time=T)
            for busy_ms, wait in ((None, bound_s), (300, 0.3)):
                began = time.monotonic()
                frames, copied = (j.checkpoint("TRUNCATE") if busy_ms is None
                                  else j.checkpoint("TRUNCATE", busy_ms=busy_ms))
                took = time.monotonic() - began
                # SQLite's busy handler sleeps the whole wait before it gives up
                assert wait * 0.9 <= took < wait + 3.0, (busy_ms, took)
                assert frames > 0 and os.path.getsize(path + "-wal") > 0
            reader.execute("COMMIT")
        finally:
            reader.close()
        j.checkpoint("TRUNCATE")  # nobody reading now: the WAL is reset to nothing
        assert os.path.getsize(path + "-wal") == 0
        j.append([{"type": "note", "i": 6}], time=T)
        assert os.path.getsize(path + "-wal") > 0
        frames, copied = j.checkpoint("TRUNCATE")  # SQLite reports a reset WAL as (0, 0)
        assert frames == copied and os.path.getsize(path + "-wal") == 0
        assert [e.data["i"] for e in j.replay()] == list(range(7))


def test_wal_bytes_is_the_size_of_the_wal_file_or_zero(path):
    j = Journal.open(path, table_id="T1")
    j.append([{"type": "note", "text": "x" * 10_000}], time=T)
    assert j.wal_bytes() == os.path.getsize(path + "-wal") > 10_000
    j.close()  # the last connection removes the WAL
    assert not os.path.exists(path + "-wal")
    assert j.wal_bytes() == 0


def test_a_checkpointer_never_started_can_be_stopped(path):
    with Journal.open(path, table_id="T1") as j:
        from shoe_controller.journal import Checkpointer

        Checkpointer(j).stop()  # the daemon's shutdown path when start-up failed early


def test_the_checkpointer_thread_is_named_and_never_holds_the_process_up(path):
    """Its thread is ``journal-checkpoint`` (what a thread dump shows), and a process
    that ends without stopping it still ends: the thread is a daemon thread."""
    import subprocess
    import sys
    import textwrap
    import threading

    from shoe_controller.journal import Checkpointer

    with Journal.open(path, table_id="T1") as j:
        before = set(threading.enumerate())
        c = Checkpointer(j).start()
        try:
            # this checkpointer's own thread (other tests' may still be winding down)
            new = [t for t in threading.enumerate() if t not in before]
            (mine,) = [t for t in new if t.name == "journal-checkpoint"]
            assert mine.daemon and mine.is_alive()
        finally:
            c.stop()
        assert not mine.is_alive()
    code = textwrap.dedent(f"""
        from shoe_controller.journal import Checkpointer, Journal
        j = Journal.open({path!r}, table_id="T1")
        Checkpointer(j).start()
        print("started", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert (proc.returncode, proc.stdout) == (0, "started\n"), proc.stderr


# -- the epoch and Journal.create (docs/journal.md, "Epoch" and "Never started over") ---

HEX32 = re.compile(r"[0-9a-f]{32}")


def test_create_stores_the_epoch_it_gave_the_first_events(path):
    seen = []

    def first(epoch):
        seen.append(epoch)
        return [{"type": "journal_started", "epoch": epoch, "table": "T1", "previous": None}]

    j = Journal.create(path, table_id="T1", first=first, time=T)
    try:
        assert HEX32.fullmatch(seen[0]) and j.epoch == seen[0] and j.table_id == "T1"
        e = j.first_entry()
        assert e is not None and (e.seq, e.time, e.data["epoch"]) == (1, T, seen[0])
    finally:
        j.close()
    for kw in ({"table_id": "T1"}, {"readonly": True}, {"existing": True}):
        with Journal.open(path, **kw) as again:
            assert (again.epoch, again.table_id, again.last_seq) == (seen[0], "T1", 1)
    assert sorted(os.listdir(os.path.dirname(path))) == ["j.sqlite3", "j.sqlite3.lock"]


def test_create_without_first_events_and_over_stale_leftovers(path):
    for stale in (".new", ".new-wal", ".new-shm", ".new.lock"):
        with open(path + stale, "wb") as f:
            f.write(b"left over by a crash")
    j = Journal.create(path, table_id="T9")
    try:
        assert (j.last_seq, j.table_id) == (0, "T9") and HEX32.fullmatch(j.epoch or "")
    finally:
        j.close()
    assert sorted(os.listdir(os.path.dirname(path))) == ["j.sqlite3", "j.sqlite3.lock"]
    b = Journal.create(path + "2", table_id="T9")
    b.close()
    with Journal.open(path, readonly=True) as a, Journal.open(path + "2", readonly=True) as b:
        assert a.epoch != b.epoch  # 128 fresh random bits each


def test_create_refuses_to_replace_a_journal_that_appeared_meanwhile(path):
    def first(epoch):
        with open(path, "wb") as f:  # another process made one while this one was built
            f.write(b"theirs")
        return []

    assert message(JournalError, Journal.create, path, table_id="T1", first=first) == (
        f"journal {path}: appeared while a new one was being made; refusing to replace it")
    with open(path, "rb") as f:
        assert f.read() == b"theirs"
    assert sorted(os.listdir(os.path.dirname(path))) == ["j.sqlite3"]


def test_a_journal_older_than_epochs_gets_one_from_its_first_writer(path):
    make_journal(path)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM meta WHERE key = 'epoch'")
    conn.commit()
    conn.close()
    with Journal.open(path, readonly=True) as j:
        assert j.epoch is None  # a read-only look never writes one
    with Journal.open(path, table_id="T1") as j:
        epoch = j.epoch
        assert HEX32.fullmatch(epoch or "")
    with Journal.open(path, table_id="T1") as j, Journal.open(path, readonly=True) as r:
        assert j.epoch == r.epoch == epoch  # kept, not made again


def test_a_new_file_records_format_and_table_and_a_later_table_id_is_kept(path):
    with Journal.open(path) as j:  # created without a table id
        assert j.table_id is None
    conn = sqlite3.connect(path)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    conn.close()
    assert meta["format_version"] == "1" and "table_id" not in meta
    with Journal.open(path, table_id="T4") as j:  # the first table to open it owns it
        assert j.table_id == "T4"
    with Journal.open(path, readonly=True) as j:
        assert j.table_id == "T4"
    assert message(JournalMismatch, Journal.open, path, table_id="T5").startswith(
        f"journal {path} belongs to table 'T4'")
    other = path + "-b"
    with Journal.open(other, table_id="T6") as j:
        assert j.table_id == "T6"
    conn = sqlite3.connect(other)
    assert dict(conn.execute("SELECT key, value FROM meta"))["table_id"] == "T6"
    conn.close()


# -- reading in batches, the time stamp, the append transaction, the writer's lock -------

def test_replay_in_small_batches_gives_every_entry_once_in_order(path):
    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note", "i": i} for i in range(1, 8)], time=T)
        for batch in (1, 2, 3, 7, 50):
            assert [e.seq for e in j.replay(batch=batch)] == list(range(1, 8))
            assert [e.seq for e in j.replay(3, 6, batch=batch)] == [3, 4, 5, 6]
            assert [e.seq for e in j.replay(6, batch=batch)] == [6, 7]
        assert list(j.replay(8)) == [] and list(j.replay(5, 4)) == []
        assert [e["i"] for e in (x.data for x in j.replay(2, 3))] == [2, 3]


def test_the_time_stamp_is_rfc3339_utc_with_microseconds():
    from datetime import UTC, datetime, timedelta, timezone

    from shoe_controller.journal import utc_timestamp

    assert utc_timestamp(datetime(2026, 11, 30, 4, 28, 12, 123456, tzinfo=UTC)) == (
        "2026-11-30T04:28:12.123456Z")
    manila = timezone(timedelta(hours=8))
    assert utc_timestamp(datetime(2026, 12, 1, 2, 3, 4, 5, tzinfo=manila)) == (
        "2026-11-30T18:03:04.000005Z")
    before = datetime.now(UTC)
    now = datetime.strptime(utc_timestamp(), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before - timedelta(seconds=1) <= now <= datetime.now(UTC) + timedelta(seconds=1)


def test_the_time_stamp_is_utc_whatever_the_machine_s_time_zone(monkeypatch):
    """A Pi set to the casino's local time still journals UTC (docs/journal.md)."""
    from datetime import UTC, datetime, timedelta

    from shoe_controller.journal import utc_timestamp

    monkeypatch.setenv("TZ", "Asia/Macau")  # UTC+8 all year, no summer time
    time.tzset()
    try:
        assert datetime(2026, 1, 1, 12, 0).astimezone().utcoffset() == timedelta(hours=8)
        assert utc_timestamp(datetime(2026, 11, 30, 4, 28, 12, 123456, tzinfo=UTC)) == (
            "2026-11-30T04:28:12.123456Z")
        before = datetime.now(UTC)
        now = datetime.strptime(utc_timestamp(), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        assert before - timedelta(seconds=5) <= now <= datetime.now(UTC) + timedelta(seconds=5)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_append_stamps_every_event_of_a_call_with_one_time(path):
    from datetime import UTC, datetime

    with Journal.open(path, table_id="T1") as j:
        a = j.append([{"type": "x"}, {"type": "y"}],
                     datetime(2026, 12, 1, 9, 0, 0, 1, tzinfo=UTC))
        assert [e.time for e in a] == ["2026-12-01T09:00:00.000001Z"] * 2
        b = j.append([{"type": "z"}])
        assert b[0].time != a[0].time and b[0].time.endswith("Z")
        assert j.append([]) == [] and j.last_seq == 3


def test_the_hook_writes_in_the_same_transaction_and_sees_the_new_rows(path):
    def outbox(conn, entries):
        conn.execute("CREATE TABLE IF NOT EXISTS box (seq INTEGER, hash TEXT)")
        conn.executemany("INSERT INTO box VALUES (?, ?)", [(e.seq, e.hash) for e in entries])

    with Journal.open(path, table_id="T1") as j:
        entries = j.append([{"type": "a"}, {"type": "b"}], time=T, hook=outbox)
        assert (j.last_seq, j.last_hash) == (2, entries[-1].hash)
    conn = sqlite3.connect(path)
    box = conn.execute("SELECT seq, hash FROM box ORDER BY seq").fetchall()
    conn.close()
    assert box == [(e.seq, e.hash) for e in entries]


def test_a_journal_is_usable_from_another_thread(path):
    """The daemon opens the journal on its main thread and appends from its input loop."""
    import threading

    with Journal.open(path, table_id="T1") as j:
        got: list[object] = []

        def work():
            try:
                got.append(j.append([{"type": "from_thread"}], time=T)[0].seq)
                got.append(j.verify())
            except Exception as exc:  # reported by the assert below
                got.append(exc)

        t = threading.Thread(target=work)
        t.start()
        t.join(30)
        assert got == [1, 1]


def test_the_lock_file_is_0640_and_holds_the_writer_s_pid(tmp_path):
    old = os.umask(0o022)
    try:
        path = str(tmp_path / "j.sqlite3")
        with Journal.open(path, table_id="T1"):
            assert os.stat(path + ".lock").st_mode & 0o777 == 0o640
            with open(path + ".lock") as f:
                assert f.read() == f"{os.getpid()}\n"
    finally:
        os.umask(old)


def test_every_connection_waits_for_a_lock_rather_than_fail(path):
    """docs/journal.md: every connection waits up to 10 s for another's lock; WAL, FULL
    sync and the 4 MB journal_size_limit on every writing connection."""
    from shoe_controller.journal import connect

    make_journal(path)
    for kw in ({}, {"readonly": True}, {"autocheckpoint": False}):
        conn = connect(path, **kw)
        try:
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
            assert conn.isolation_level is None  # transactions are explicit
        finally:
            conn.close()
    conn = connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA journal_size_limit").fetchone()[0] == 4 * 1024 * 1024
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    finally:
        conn.close()
    conn = connect(path, autocheckpoint=False, synchronous="NORMAL")
    try:
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    finally:
        conn.close()


def test_a_failing_checkpoint_is_logged_once_per_spell_and_its_end_too(tmp_path, caplog):
    """docs/journal.md: a checkpoint that fails is logged once per spell of failures and
    retried; every commit stays in the WAL meanwhile. The failure here is SQLite's own:
    the checkpointer's connection cannot open a file in a folder that is gone."""
    import logging

    from shoe_controller.journal import Checkpointer

    path = str(tmp_path / "j.sqlite3")
    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note"}], time=T)
        c = Checkpointer(j, every=2.0)
        j.path = str(tmp_path / "gone" / "j.sqlite3")
        caplog.set_level(logging.DEBUG, logger="shoe_controller.journal")
        for _ in range(3):
            c._checkpoint("PASSIVE")
        assert c.failing is True and c.runs == 0
        got = [(r.levelno, r.getMessage()) for r in caplog.records]
        assert [level for level, _ in got] == [logging.WARNING, logging.DEBUG, logging.DEBUG]
        for _, text in got:
            assert re.fullmatch(
                re.escape(f"journal {j.path}: WAL checkpoint failed (unable to open "
                          "database file); the WAL keeps every commit, retrying every 2 s"),
                text), text  # SQLite's own words for SQLITE_CANTOPEN name the failure
        caplog.clear()
        j.path = path
        c._checkpoint("PASSIVE")
        assert c.failing is False and c.runs == 1 and c.last is not None
        assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
            (logging.INFO, f"journal {path}: WAL checkpoints work again")]
        caplog.clear()
        c._checkpoint("TRUNCATE")
        assert (c.runs, c.truncates) == (1, 1) and caplog.records == []
        c._checkpoint("PASSIVE")
        c._checkpoint("TRUNCATE")
        assert (c.runs, c.truncates) == (2, 2)  # counters: every checkpoint counted


def _wait(cond, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def test_a_checkpoint_a_reader_cut_short_is_tried_again_without_new_appends(path):
    """docs/journal.md: "a checkpoint that could not copy everything (a reader held the
    WAL) is tried again at the next look, not only after the next append"."""
    from shoe_controller.journal import Checkpointer, connect

    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note", "i": 0}], time=T)
        reader = connect(path, readonly=True)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM events").fetchone()
            j.append([{"type": "note", "i": i} for i in range(1, 20)], time=T)  # past it
            c = Checkpointer(j, idle=0.01, every=0.01, truncate_idle=1000).start()
            try:
                assert c.wait_runs(1, timeout=10)
                frames, copied = c.last
                assert copied < frames  # the frames after the reader's snapshot stay
            finally:
                reader.execute("COMMIT")
            # tried again at every look (no new append): the whole WAL once it is free
            assert _wait(lambda: c.last[0] == c.last[1], timeout=5), c.last
            assert c.runs >= 2 and c.truncates == 0
        finally:
            reader.close()
            c.stop()


def test_the_checkpointer_looks_every_50_ms_whatever_its_idle_and_every(path):
    """docs/journal.md: "the Checkpointer looks every 50 ms". With a long idle and every,
    only a burst's max_wait forces a checkpoint: 0.2 s after the append, plus one look,
    never a look of a second or more later."""
    from shoe_controller.journal import Checkpointer

    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note"}], time=T)
        c = Checkpointer(j, idle=30.0, every=30.0, max_wait=0.2, truncate_idle=1000)
        began = time.monotonic()
        with c:
            assert c.wait_runs(1, timeout=1.5), "no look within 1.5 s"
        assert 0.2 <= time.monotonic() - began < 1.5


def test_a_dealer_s_pace_is_checkpointed_at_most_once_every_every(path):
    """docs/journal.md: checkpoints run once the journal is idle, "at most once a
    second" (every): a card every 50 ms, each followed by a quiet moment, is not a
    checkpoint per card."""
    from shoe_controller.journal import Checkpointer

    with Journal.open(path, table_id="T1") as j:
        c = Checkpointer(j, idle=0.01, every=0.6, max_wait=30.0, truncate_idle=1000)
        with c:
            began = time.monotonic()
            for i in range(20):
                j.append([{"type": "note", "i": i}], time=T)
                time.sleep(0.05)
            took = time.monotonic() - began
        assert 1 <= c.runs <= took / 0.6 + 1, (c.runs, took)


def test_a_journal_nobody_appends_to_is_never_checkpointed(path):
    """The Checkpointer copies what appends wrote: a journal opened and only read (a
    daemon idle between shoes after a restart) costs no checkpoint at all."""
    from shoe_controller.journal import Checkpointer

    make_journal(path)
    with (Journal.open(path, table_id="T1") as j,
          Checkpointer(j, idle=0.01, every=0.01, truncate_idle=1000) as c):
        time.sleep(0.4)
        assert (c.runs, c.truncates) == (0, 0)


def test_a_wal_past_half_its_limit_is_checkpointed_at_once_and_below_it_waits(path):
    """docs/journal.md: the Checkpointer "also checkpoints when the -wal file passes
    2 MB" (half the 4 MB limit), quiet or not; below that it waits for a quiet moment."""
    from shoe_controller.journal import Checkpointer

    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note", "text": "x" * 50_000}], time=T)
        w = j.wal_bytes()
        # half the limit is 1.2 w: this WAL is below it (a third, 0.8 w, it is above)
        c = Checkpointer(j, idle=30.0, every=30.0, max_wait=30.0, truncate_idle=1000,
                         wal_limit=int(w * 2.4))
        with c:
            time.sleep(0.5)  # ten looks
            assert c.runs == 0
            j.append([{"type": "note", "text": "y" * 50_000}], time=T)  # now past half
            assert j.wal_bytes() > c.wal_limit // 2
            assert c.wait_runs(1, timeout=5)


def test_a_quiet_journal_is_truncated_once_after_truncate_idle(path):
    """docs/journal.md: "after 5 s without appends ... it is TRUNCATEd to nothing": once,
    after that quiet time (not at every quiet look), and not again while nothing is
    appended."""
    from shoe_controller.journal import Checkpointer

    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note"}], time=T)
        with Checkpointer(j, idle=0.01, every=0.01, truncate_idle=1000) as c:
            assert c.wait_runs(1, timeout=10)
            time.sleep(0.4)
            assert c.truncates == 0  # quiet, but not for truncate_idle
        j.append([{"type": "note"}], time=T)
        with Checkpointer(j, idle=0.01, every=0.01, truncate_idle=0.1) as c:
            assert _wait(lambda: c.truncates >= 1)
            assert j.wal_bytes() == 0
            time.sleep(0.5)  # the WAL is empty: nothing left to truncate
            assert c.truncates == 1


class _StuckJournal(Journal):
    """The real journal whose checkpoints hang for a while (a disk that stopped
    answering): what stop()'s timeout is for."""

    def checkpoint(self, mode: str = "PASSIVE", busy_ms: int = 100) -> tuple[int, int]:
        time.sleep(1.5)
        return super().checkpoint(mode, busy_ms)


def test_stop_gives_up_on_a_stuck_checkpoint_after_its_timeout_and_twice_is_fine(path):
    from shoe_controller.journal import Checkpointer

    with _StuckJournal.open(path, table_id="T1") as j:
        j.append([{"type": "note"}], time=T)
        c = Checkpointer(j, idle=0.01, every=0.01).start()
        time.sleep(0.2)  # the checkpoint has begun and hangs
        began = time.monotonic()
        c.stop(timeout=0.2)
        assert time.monotonic() - began < 1.0  # not the checkpoint's 1.5 s
        c.stop()  # a second stop (the daemon's shutdown after a failed start) is harmless
        time.sleep(1.5)  # let the stuck checkpoint end before the journal closes


def test_an_over_limit_wal_a_reader_holds_costs_one_truncate_wait_per_burst(path):
    """docs/journal.md: a WAL past the limit gets a TRUNCATE that "waits for readers and
    writers at most 100 ms"; while a reader holds the WAL that wait is paid once, not at
    every look of the checkpointer (each one would stall the next card 100 ms)."""
    from shoe_controller.journal import Checkpointer, connect

    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note", "i": 0}], time=T)
        reader = connect(path, readonly=True)
        c = Checkpointer(j, idle=0.01, every=0.01, truncate_idle=1000, wal_limit=2)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM events").fetchone()
            j.append([{"type": "note", "i": 1}], time=T)
            c.start()
            assert _wait(lambda: c.truncates >= 1)
            time.sleep(0.6)  # a dozen looks at least, the reader still there
            assert (c.runs, c.truncates) == (1, 1)
            reader.execute("COMMIT")
            j.append([{"type": "note", "i": 2}], time=T)  # the next burst: once more
            assert _wait(lambda: c.truncates >= 2) and c.runs == 2
        finally:
            reader.close()
            c.stop()


def test_a_value_that_is_no_event_is_refused_in_one_line(path):
    with Journal.open(path, table_id="T1") as j:
        for bad in ("shoe_started", 7, ["type", "x"]):
            assert message(ValueError, j.append, [bad]) == (
                f"cannot journal {bad!r}: an event needs a string 'type'")
        assert j.last_seq == 0


def test_reading_a_journal_moved_away_is_an_error_and_creates_nothing(path):
    """The reads (replay, of_type, verify) open their own read-only connection: a journal
    file moved away while it is open is an error, never a new empty file in its place."""
    make_journal(path, 3)
    j = Journal.open(path, readonly=True)
    try:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.rename(path + suffix, path + ".moved" + suffix)
        with pytest.raises(sqlite3.OperationalError):
            list(j.replay())
        assert not os.path.exists(path)
        with pytest.raises(sqlite3.OperationalError):
            j.of_type("note")
        assert not os.path.exists(path)
        got = message(JournalCorrupt, j.verify)
        assert re.fullmatch(re.escape(f"journal {path}: cannot read the events (") + r".+"
                            + re.escape("); the file is damaged (see docs/journal.md, "
                                        "recovery)"), got), got
        assert not os.path.exists(path)
    finally:
        j.close()


def test_verify_names_the_journal_file_and_the_bad_row(path):
    make_journal(path, 9)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE events SET body = ? WHERE seq = 7", ('{"i":70,"type":"note"}',))
    conn.commit()
    conn.close()
    expected = (f"journal {path}: seq 7: stored hash does not match its content (the row "
                "was edited or damaged)")
    assert message(JournalCorrupt, Journal.open, path, readonly=True) == expected
    with Journal.open(path, readonly=True, verify=False) as j:
        assert message(JournalCorrupt, j.verify) == expected


def test_a_wrong_events_table_is_named_even_without_a_meta_table(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, body TEXT)")
    conn.commit()
    conn.close()
    assert message(JournalCorrupt, Journal.open, path, readonly=True) == (
        f"journal {path}: not a shoe-controller journal (table 'events' has columns "
        "['seq', 'body'], not ['seq', 'time', 'type', 'body', 'prev_hash', 'hash']); "
        "refusing to read it")


def test_create_ignores_a_valid_wal_left_by_a_crashed_create(path, tmp_path):
    """A crash while a new journal was being built can leave ``<path>.new-wal`` holding
    real frames; the next create must not replay them into the new journal."""
    import shutil

    other = str(tmp_path / "other.sqlite3")
    j = Journal.open(other, table_id="OLD")
    j.defer_checkpoints()
    j.append([{"type": "stale", "i": i} for i in range(5)], time=T)
    shutil.copy(other + "-wal", path + ".new-wal")  # a WAL with committed frames
    j.close()
    new = Journal.create(path, table_id="T1")
    try:
        assert (new.table_id, new.last_seq) == ("T1", 0)
    finally:
        new.close()
    assert sorted(os.listdir(os.path.dirname(path))) == [
        "j.sqlite3", "j.sqlite3.lock", "other.sqlite3", "other.sqlite3.lock"]


def test_a_lock_file_that_cannot_be_made_is_named_with_the_reason(path):
    os.mkdir(path + ".lock")  # a directory where the lock file goes
    assert message(JournalError, Journal.open, path, table_id="T1") == (
        f"journal {path}: cannot create {path}.lock (Is a directory)")


def test_closing_twice_after_a_checkpoint_is_harmless(path):
    """The daemon's shutdown may close a journal the start-up path closed already."""
    j = Journal.open(path, table_id="T1")
    j.append([{"type": "note"}], time=T)
    j.checkpoint()
    j.close()
    j.close()


@pytest.mark.parametrize(("content", "shown"), [(b"", "?"), (b"\xff" * 40, "\ufffd" * 32)])
def test_a_lock_holder_that_wrote_no_pid_or_junk_is_shown_as_such(path, content, shown):
    """Another program holding the lock (not a journal writer): its file says nothing or
    junk; the refusal shows "?" or the first 32 bytes, never raises on them."""
    import subprocess
    import sys
    import textwrap

    make_journal(path)
    code = textwrap.dedent(f"""
        import fcntl, os, sys
        fd = os.open({path + '.lock'!r}, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o640)
        os.write(fd, {content!r})
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("locked", flush=True)
        sys.stdin.read()
    """)
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        assert message(JournalError, Journal.open, path) == (
            f"journal {path} is in use by another process (pid {shown}): stop it "
            "first (e.g. systemctl stop shoe-controller); one daemon per journal")
    finally:
        holder.communicate("", timeout=30)


def test_a_read_only_audit_never_switches_a_file_to_wal(path):
    # SQLite's file format: header bytes 18 and 19 are 1 for a rollback journal, 2 for WAL
    make_journal(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    with open(path, "rb") as f:
        assert f.read(20)[18:20] == b"\x01\x01"
    with Journal.open(path, readonly=True) as j:
        assert [e.seq for e in j.replay()] == [1, 2]
    with open(path, "rb") as f:
        assert f.read(20)[18:20] == b"\x01\x01"


def test_a_directory_in_the_journal_s_place_cannot_be_opened(tmp_path):
    where = tmp_path / "adir"
    where.mkdir()
    text = message(JournalError, Journal.open, str(where))
    assert text == f"journal {where}: cannot open it: unable to open database file"


def test_a_meta_table_without_its_primary_key_still_holds_a_journal(path):
    # the journal's tables are meta and events; nothing else need be in the file
    make_journal(path)
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE m2 (key TEXT NOT NULL, value TEXT NOT NULL);"
                       "INSERT INTO m2 SELECT key, value FROM meta; DROP TABLE meta;"
                       "ALTER TABLE m2 RENAME TO meta;")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert names == {"meta", "events"}
    with Journal.open(path, readonly=True) as j:
        assert [e.seq for e in j.replay()] == [1, 2]



def test_a_file_that_fails_sqlite_s_quick_check_is_called_damaged(path):
    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": "note", "i": i, "pad": "x" * 200} for i in range(100)], time=T)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    # SQLite's file format: bytes 1-2 of a b-tree page start its first freeblock; one
    # pointing into the page's own header is free space corruption (quick_check reports
    # it, the file still opens)
    with open(path, "r+b") as f:
        f.seek(2 * page + 1)
        f.write(b"\x00\x05")
    text = message(JournalCorrupt, Journal.open, path)
    assert text.startswith(f"journal {path}: the SQLite file is damaged (*** in database main")
    assert text.endswith("free space corruption); " + DAMAGED)


def test_a_read_only_journal_may_be_closed_from_another_thread(path):
    # connect()'s contract: usable from any thread (callers serialise their own use)
    import threading

    make_journal(path)
    j = Journal.open(path, readonly=True)
    errors: list[BaseException] = []

    def close() -> None:
        try:
            j.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    t = threading.Thread(target=close)
    t.start()
    t.join(10)
    assert errors == []


def test_a_database_that_cannot_use_wal_is_refused_by_name():
    from shoe_controller.journal import connect

    # SQLite keeps an in-memory database's journal in memory: it reports "memory" for WAL
    assert message(JournalError, connect, ":memory:") == (
        "journal :memory:: cannot switch to WAL mode (got memory)")
