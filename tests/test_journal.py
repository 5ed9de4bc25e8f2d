"""The event journal on real SQLite files: order, chain, tampering, corruption, crashes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from shoe_controller.cli import main
from shoe_controller.journal import (
    GENESIS,
    Checkpointer,
    Journal,
    JournalCorrupt,
    JournalError,
    JournalMismatch,
    canonical_json,
)

T0 = "2026-11-30T04:00:00.000000Z"


def ev(type_: str, **fields: object) -> dict[str, object]:
    return {"type": type_, "shoe": 1, **fields}


def a_round(n: int) -> list[dict[str, object]]:
    return [
        ev("round_started", round=n),
        ev("card_dealt", round=n, hand="player", position=1, card="QH", orientation=None),
        ev("card_dealt", round=n, hand="banker", position=1, card="9S", orientation="up"),
        ev("round_result", round=n, player=["QH"], banker=["9S"], player_total=0,
           banker_total=9, winner="banker", settlement={"banker": 0.95, "player": -1}),
    ]


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "journal.sqlite3")


def fill(path: str, rounds: int = 3) -> list:
    with Journal.open(path, table_id="T1") as j:
        out = j.append([ev("shoe_started", decks=8)], time=T0)
        for n in range(1, rounds + 1):
            out += j.append(a_round(n))
    return out


def reference_hashes(rows):
    """The documented chain definition, written out independently of the module."""
    prev = "0" * 64
    for seq, time, type_, body, prev_hash, digest in rows:
        assert prev_hash == prev
        want = hashlib.sha256(
            (prev + "\n" + str(seq) + "\n" + time + "\n" + type_ + "\n" + body).encode("utf-8")
        ).hexdigest()
        assert digest == want, seq
        prev = digest


def test_sequence_is_contiguous_across_appends_and_reopens(path):
    fill(path, rounds=2)
    with Journal.open(path, table_id="T1") as j:
        j.append(a_round(3))
        assert j.last_seq == 13
        seqs = [e.seq for e in j.replay()]
    assert seqs == list(range(1, 14))


def test_rows_follow_the_documented_hash_chain(path):
    fill(path)
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT seq, time, type, body, prev_hash, hash FROM events "
                        "ORDER BY seq").fetchall()
    reference_hashes(rows)
    assert rows[0][4] == GENESIS
    # bodies are canonical JSON: reproducible from the parsed object
    for row in rows:
        assert row[3] == json.dumps(json.loads(row[3]), sort_keys=True,
                                    separators=(",", ":"), ensure_ascii=False)
    assert rows[0][1] == T0


def test_pragmas_are_wal_and_full_sync(path):
    with Journal.open(path) as j:
        assert j._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert j._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_replay_gives_back_what_was_appended(path):
    appended = fill(path)
    with Journal.open(path) as j:
        replayed = list(j.replay())
        assert replayed == appended
        assert [e.data for e in j.replay(6, 9)] == a_round(2)


def test_a_failed_append_leaves_nothing(path):
    fill(path, rounds=1)

    def boom(conn, entries):
        assert [e.seq for e in entries] == [6, 7, 8, 9]
        raise RuntimeError("outbox write failed")

    with Journal.open(path) as j:
        with pytest.raises(RuntimeError):
            j.append(a_round(2), hook=boom)
        assert j.last_seq == 5
        assert j.append([ev("shoe_ended", rounds=1, reason="cut")])[0].seq == 6
        assert j.verify() == 6


def test_event_without_type_is_refused_naming_it(path):
    with Journal.open(path) as j, pytest.raises(ValueError, match="needs a string 'type'"):
        j.append([{"shoe": 1}])
    with Journal.open(path) as j:
        assert j.last_seq == 0


def test_an_edited_row_is_detected_naming_the_seq(path, capsys):
    fill(path)
    conn = sqlite3.connect(path)
    body = conn.execute("SELECT body FROM events WHERE seq = 8").fetchone()[0]
    conn.execute("UPDATE events SET body = ? WHERE seq = 8", (body.replace("9S", "8S"),))
    conn.commit()
    conn.close()
    with pytest.raises(JournalCorrupt, match="seq 8: stored hash does not match") as info:
        Journal.open(path)
    assert info.value.seq == 8
    assert main(["journal", "verify", path]) == 1
    assert "seq 8" in capsys.readouterr().err


def test_an_edit_with_its_own_hash_recomputed_breaks_the_next_link(path):
    fill(path)
    conn = sqlite3.connect(path)
    seq, time, type_, body, prev, _ = conn.execute(
        "SELECT * FROM events WHERE seq = 3").fetchone()
    body = body.replace('"QH"', '"KH"')
    forged = hashlib.sha256(f"{prev}\n{seq}\n{time}\n{type_}\n{body}".encode()).hexdigest()
    conn.execute("UPDATE events SET body = ?, hash = ? WHERE seq = 3", (body, forged))
    conn.commit()
    conn.close()
    with pytest.raises(JournalCorrupt, match="seq 4: prev_hash does not match") as info:
        Journal.open(path)
    assert info.value.seq == 4


def test_a_deleted_row_is_detected(path):
    fill(path)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM events WHERE seq = 3")
    conn.commit()
    conn.close()
    with pytest.raises(JournalCorrupt, match="seq 4 follows seq 2, expected seq 3"):
        Journal.open(path)


def test_a_changed_type_column_is_detected(path):
    fill(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE events SET type = 'card_burned' WHERE seq = 2")
    conn.commit()
    conn.close()
    with pytest.raises(JournalCorrupt, match="seq 2"):
        Journal.open(path)


def test_garbage_file_is_refused_with_a_clear_message(path):
    with open(path, "wb") as f:
        f.write(b"this is not a database at all" * 100)
    with pytest.raises(JournalCorrupt, match="not a readable SQLite database"):
        Journal.open(path)
    assert main(["journal", "verify", path]) == 2


def test_a_damaged_page_is_refused(path):
    fill(path, rounds=30)
    with Journal.open(path) as j:  # fold the WAL into the main file
        j._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(path)
    assert size > 8192
    with open(path, "r+b") as f:  # scribble over the middle of the file
        f.seek(size // 2)
        f.write(os.urandom(4096))
    with pytest.raises(JournalCorrupt):
        Journal.open(path)


def test_foreign_sqlite_file_is_refused(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE other (x)")
    conn.commit()
    conn.close()
    with pytest.raises(JournalCorrupt, match="not a shoe-controller journal"):
        Journal.open(path, readonly=True)


def test_journal_of_another_table_is_refused(path):
    fill(path)
    with pytest.raises(JournalMismatch, match=r"belongs to table 'T1'.*'T2'"):
        Journal.open(path, table_id="T2")


def test_missing_directory_is_a_clear_error(tmp_path):
    with pytest.raises(JournalError, match=r"directory .*nope does not exist"):
        Journal.open(str(tmp_path / "nope" / "j.sqlite3"))


def test_verify_and_export_commands(path, tmp_path, capsys):
    appended = fill(path)
    assert main(["journal", "verify", path]) == 0
    assert "OK: 13 events of table T1" in capsys.readouterr().out
    out = tmp_path / "export.jsonl"
    assert main(["journal", "export", path, "-o", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["seq"] for x in lines] == list(range(1, 14))
    for x, e in zip(lines, appended, strict=True):
        assert x == {"seq": e.seq, "time": e.time, "type": e.type, "hash": e.hash,
                     "prev_hash": e.prev_hash, "event": e.data}
        assert canonical_json(x["event"]) == e.body
    assert main(["journal", "export", path, "--from", "6", "--to", "9"]) == 0
    sliced = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [x["seq"] for x in sliced] == [6, 7, 8, 9]


def test_export_stops_before_a_bad_row(path, capsys):
    fill(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE events SET time = '2026-01-01T00:00:00.000000Z' WHERE seq = 10")
    conn.commit()
    conn.close()
    assert main(["journal", "export", path]) == 1
    captured = capsys.readouterr()
    assert [json.loads(x)["seq"] for x in captured.out.splitlines()] == list(range(1, 10))
    assert "seq 10" in captured.err


def test_verify_of_missing_file_exits_2(tmp_path, capsys):
    assert main(["journal", "verify", str(tmp_path / "none.sqlite3")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_appends_survive_a_sigkill(path):
    """A child appends and kills itself without any clean-up: every committed event is
    there afterwards and the chain verifies."""
    script = textwrap.dedent(f"""
        import os, signal
        from shoe_controller.journal import Journal
        j = Journal.open({path!r}, table_id="T1")
        for n in range(200):
            j.append([{{"type": "card_burned", "shoe": 1, "card": "AS", "reason": str(n)}}])
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], timeout=120)
    assert proc.returncode == -signal.SIGKILL
    with Journal.open(path, table_id="T1") as j:
        assert j.verify() == 200
        assert [e.data["reason"] for e in j.replay()] == [str(n) for n in range(200)]


def test_folding_the_journal_rebuilds_the_shoe_exactly(path):
    """Event sourcing through a real file: the journal's events, decoded, are the game
    core's events, and folding evolve over them gives the live shoe's state."""
    from shoe_controller.game.shoe import fold
    from tests.test_publish_helpers import BUTTON_CONFIRM, shoe_batches

    batches = list(shoe_batches(13, max_rounds=20))
    with Journal.open(path, table_id="T1") as j:
        for batch in batches:
            j.append(batch)
    events = [e for b in batches for e in b]
    with Journal.open(path, table_id="T1") as j:
        replayed = list(j.events())
    assert replayed == events
    assert fold(BUTTON_CONFIRM, replayed) == fold(BUTTON_CONFIRM, events)
    assert fold(BUTTON_CONFIRM, replayed).round == 20


def test_one_writer_process_per_journal(path):
    """A second daemon on the same journal is refused, naming the holder; audits are not;
    a killed holder leaves no stale lock."""
    fill(path, rounds=1)
    script = textwrap.dedent(f"""
        import sys, time
        from shoe_controller.journal import Journal
        j = Journal.open({path!r}, table_id="T1")
        print("open", flush=True)
        time.sleep(60)
    """)
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(JournalError, match=rf"in use by another process \(pid {holder.pid}\)"):
            Journal.open(path, table_id="T1")
        with Journal.open(path, readonly=True) as j:
            assert j.verify() == 5
    finally:
        holder.kill()
        holder.wait(10)
    with Journal.open(path, table_id="T1") as j:  # the kernel released the lock
        assert j.last_seq == 5
        with Journal.open(path, table_id="T1") as same_process:  # the same process may
            assert same_process.last_seq == 5


def test_a_path_that_cannot_be_opened_is_not_called_corrupt(tmp_path):
    folder = tmp_path / "journal.sqlite3"
    folder.mkdir()  # a directory where the file should be
    with pytest.raises(JournalError, match="cannot open it") as info:
        Journal.open(folder)
    assert not isinstance(info.value, JournalCorrupt)


def test_a_full_disk_is_a_clear_error_and_writes_nothing(path):
    fill(path, rounds=1)
    with Journal.open(path, table_id="T1") as j:
        page = j._conn.execute("PRAGMA page_count").fetchone()[0]
        j._conn.execute(f"PRAGMA max_page_count = {page}")  # as if the disk were full
        big = [{"type": "fault", "shoe": 1, "round": None, "kind": "x", "detail": "y" * 5000}
               for _ in range(20)]
        with pytest.raises(JournalError, match=r"cannot append 20 event\(s\): .*full.*"
                                               r"nothing of them was journaled"):
            j.append(big)
        assert j.last_seq == 5
        j._conn.execute("PRAGMA max_page_count = 1073741823")
        assert j.append(big[:1])[0].seq == 6  # and it goes on once there is room
    with Journal.open(path, table_id="T1") as j:
        assert j.verify() == 6


def _fill_wal(journal: Journal, commits: int) -> None:
    """``commits`` appends of ~20 kB each: six or more WAL frames per commit."""
    for i in range(commits):
        journal.append([{"type": "note", "n": i, "text": "x" * 20_000}])


def test_appends_leave_wal_checkpoints_to_the_checkpointer_which_runs_when_idle(tmp_path):
    wal = tmp_path / "j.sqlite3-wal"
    page = 4096 + 24  # one WAL frame
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        # (no size trigger here: this is about idleness)
        checkpointer = Checkpointer(journal, idle=2.0, every=0.05, max_wait=120,
                                    wal_limit=1 << 40).start()
        try:
            _fill_wal(journal, 300)
            # No append ran a checkpoint: the WAL holds all of them, far past SQLite's
            # 1000-page threshold (which the control below stays under).
            assert wal.stat().st_size > 1800 * page
            assert checkpointer.wait_runs(1, timeout=20), "no checkpoint once idle"
            frames, copied = checkpointer.last
            assert frames >= 1800 and copied == frames
            # Copied whole: the next append starts the WAL afresh.
            journal.append([{"type": "note", "n": -1}])
            assert journal.checkpoint()[0] < 10
        finally:
            checkpointer.stop()
        assert journal.verify() == 301


def test_without_a_checkpointer_appends_checkpoint_as_sqlite_does(tmp_path):
    # The control for the test above: SQLite's own checkpoints keep the WAL near
    # 1000 pages when nothing defers them.
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        _fill_wal(journal, 300)
        assert (tmp_path / "j.sqlite3-wal").stat().st_size < 1100 * (4096 + 24)
