"""Journal integrity checks the mutants found untested (issue 15): ``verify()`` on a
damaged file, the type-column/body check, and the canonical JSON's exact options (the
form the hash chain and the signatures are computed over: sorted keys, no whitespace,
UTF-8 as is, no NaN; docs/journal.md and the module doc)."""

from __future__ import annotations

import math
import os
import sqlite3

import pytest

from shoe_controller.journal import (
    GENESIS,
    Checkpointer,
    Journal,
    JournalCorrupt,
    JournalEntry,
    JournalError,
    canonical_json,
    chain_hash,
    checked_entries,
    verify_entries,
)

T = "2026-12-01T10:00:00.000000Z"


def entry(seq: int, prev: str, type_: str, body: str) -> JournalEntry:
    return JournalEntry(seq, T, type_, body, prev, chain_hash(prev, seq, T, type_, body))


def test_canonical_json_sorted_compact_utf8_no_nan():
    assert canonical_json({"z": 1, "a": {"y": [1, 2], "b": None}}) == (
        '{"a":{"b":null,"y":[1,2]},"z":1}')
    assert canonical_json({"name": "Bàccarat 百家乐"}) == '{"name":"Bàccarat 百家乐"}'
    assert canonical_json([0.95, 8.0, -1.0, True]) == "[0.95,8.0,-1.0,true]"
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            canonical_json({"x": bad})


def test_the_chain_hash_is_sha256_of_the_documented_text():
    import hashlib

    body = '{"type":"x"}'
    text = f"{GENESIS}\n1\n{T}\nx\n{body}".encode()
    assert chain_hash(GENESIS, 1, T, "x", body) == hashlib.sha256(text).hexdigest()


def test_type_column_must_match_the_body():
    a = entry(1, GENESIS, "x", '{"type":"x"}')
    assert verify_entries([a]) == 1
    with pytest.raises(JournalCorrupt, match="seq 2: type column 'card_dealt' does not") as e:
        verify_entries([a, entry(2, a.hash, "card_dealt", '{"type":"round_result"}')])
    assert e.value.seq == 2
    with pytest.raises(JournalCorrupt, match="seq 1: type column"):
        verify_entries([entry(1, GENESIS, "x", '["x"]')])
    with pytest.raises(JournalCorrupt, match="seq 1: type column"):
        verify_entries([entry(1, GENESIS, "x", '{"kind":"x"}')])
    with pytest.raises(JournalCorrupt, match="seq 1: body is not JSON"):
        verify_entries([entry(1, GENESIS, "x", '{"type":"x"')])


def test_checked_entries_yields_nothing_past_a_bad_row():
    a = entry(1, GENESIS, "x", '{"type":"x"}')
    b = entry(2, a.hash, "y", '{"type":"z"}')
    got = []
    with pytest.raises(JournalCorrupt):
        for e in checked_entries([a, b]):
            got.append(e.seq)
    assert got == [1]


@pytest.mark.parametrize("field", ["seq", "prev_hash", "hash"])
def test_each_chain_field_is_checked(field):
    a = entry(1, GENESIS, "x", '{"type":"x"}')
    b = entry(2, a.hash, "x", '{"type":"x"}')
    bad = {
        "seq": entry(3, a.hash, "x", '{"type":"x"}'),
        "prev_hash": entry(2, GENESIS, "x", '{"type":"x"}'),
        "hash": JournalEntry(2, T, "x", '{"type":"x"}', a.hash, "0" * 64),
    }[field]
    assert verify_entries([a, b]) == 2
    with pytest.raises(JournalCorrupt) as e:
        verify_entries([a, bad])
    assert e.value.seq == 2


def _fill(path: str, n: int) -> None:
    with Journal.open(path, table_id="T1") as j:
        for i in range(n):
            j.append([{"type": "note", "i": i, "pad": "x" * 300}], time=T)
        j.checkpoint()


def test_verify_on_a_file_damaged_after_it_was_opened(tmp_path):
    """A damaged page read by verify() is a JournalCorrupt naming the file, never a
    journal that 'verifies'."""
    path = str(tmp_path / "j.sqlite3")
    _fill(path, 400)
    j = Journal.open(path, readonly=True)
    try:
        assert j.verify() == 400
        size = os.path.getsize(path)
        page = 4096
        with open(path, "r+b") as f:  # overwrite the b-tree pages of the events table
            for off in range(2 * page, size - page, page):
                f.seek(off)
                f.write(b"\xa5" * page)
        with pytest.raises(JournalCorrupt, match=r"cannot read the events .*damaged"):
            j.verify()
    finally:
        j.close()


def test_opening_a_damaged_file_is_refused(tmp_path):
    path = str(tmp_path / "j.sqlite3")
    _fill(path, 50)
    with open(path, "r+b") as f:
        f.seek(0)
        f.write(b"not a database at all" * 10)
    with pytest.raises(JournalCorrupt, match="not a readable SQLite database"):
        Journal.open(path, readonly=True)


def test_an_edited_row_is_found_by_verify(tmp_path):
    path = str(tmp_path / "j.sqlite3")
    _fill(path, 20)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE events SET body = ? WHERE seq = 7",
                 ('{"i":70,"pad":"","type":"note"}',))
    conn.commit()
    conn.close()
    with pytest.raises(JournalCorrupt) as e:  # opening checks the chain already
        Journal.open(path, readonly=True)
    assert e.value.seq == 7


def test_missing_directory_is_a_journal_error_not_corruption(tmp_path):
    with pytest.raises(JournalError, match="does not exist") as e:
        Journal.open(str(tmp_path / "nope" / "j.sqlite3"))
    assert not isinstance(e.value, JournalCorrupt)


# -- the read helpers (first_entry/entry: None on an empty journal and past its end, as
# documented; of_type's filter and order) and wait_runs's timeout: the expected rows are
# what the test itself appended


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "j.sqlite3")


def test_first_entry_and_entry_of_an_empty_journal_are_none(path):
    with Journal.open(path, table_id="T1") as j:
        assert j.first_entry() is None
        assert j.entry(1) is None
        assert j.entry(0) is None


def test_entry_gives_exactly_the_row_asked_for_or_none(path):
    events = [{"type": "a", "i": 1}, {"type": "b", "i": 2}, {"type": "a", "i": 3}]
    with Journal.open(path, table_id="T1") as j:
        j.append(events, time=T)
        first = j.first_entry()
        assert first is not None and (first.seq, first.data) == (1, events[0])
        for seq, event in enumerate(events, start=1):
            got = j.entry(seq)
            assert got is not None and (got.seq, got.data) == (seq, event)
        assert j.entry(4) is None
        assert j.entry(0) is None
        assert j.entry(-1) is None


def test_of_type_gives_every_entry_of_that_type_in_order(path):
    types = ["a", "b", "a", "c", "a", "b"]
    with Journal.open(path, table_id="T1") as j:
        j.append([{"type": t, "i": i} for i, t in enumerate(types)], time=T)
        for wanted in ("a", "b", "c", "none"):
            got = j.of_type(wanted)
            expected = [seq for seq, t in enumerate(types, start=1) if t == wanted]
            assert [e.seq for e in got] == expected
            assert all(e.type == wanted and e.data["type"] == wanted for e in got)


def test_wait_runs_gives_false_when_the_timeout_passes(path):
    import threading

    with Journal.open(path, table_id="T1") as j:
        c = Checkpointer(j)  # never started: no checkpoint will ever run
        got: list[bool] = []
        # in a thread of its own: a wait_runs that ignored its timeout would hang the
        # test (asleep, so no CPU limit would end it); it fails it instead
        waiter = threading.Thread(target=lambda: got.append(c.wait_runs(1, timeout=0.05)),
                                  daemon=True)
        waiter.start()
        waiter.join(10)
        assert got == [False]
        assert c.wait_runs(0, timeout=0.05) is True
