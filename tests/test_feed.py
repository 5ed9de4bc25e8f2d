"""The trust model of the casino feed, attacked (issue 13): every attack is reported by
`feed verify` (exit 1) or refused by the daemon at start (exit 2); a clean capture
passes (exit 0).

Captures are made the way the daemon makes its messages (a real journal through the real
Publisher, no broker: the outbox rows are the exact bytes it would publish), written as
`mosquitto_sub -v` lines. Signatures are also checked with the cryptography package
alone, from the byte format docs/mqtt.md documents (not through our own verifier).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from shoe_controller.journal import Journal, JournalError
from shoe_controller.keys import init_keys, load_signing_key
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.consumer import Follower, verify_capture
from shoe_controller.publish.head import head_file_path, open_table_journal
from shoe_controller.publish.payloads import casino_payload
from shoe_controller.publish.publisher import Publisher
from tests.test_publish_helpers import fixed_key, shoe_batches

ROOT = Path(__file__).resolve().parents[1]
KEY = fixed_key(11)
OTHER = fixed_key(12)
EVENTS_T = "shoe/T1/casino/events"
HEAD_T = "shoe/T1/casino/head"


def make_table(state: Path, table: str = "T1", rounds: int = 6, key=KEY):
    """A journal made as the daemon makes one, fed through the real Publisher (no
    broker). Returns (journal, publisher, the casino rows in order as capture lines)."""
    state.mkdir(parents=True, exist_ok=True)
    path = str(state / "journal.sqlite3")
    journal = open_table_journal(path, table, key=key)
    pub = Publisher(journal, MqttConfig(url="mqtt://127.0.0.1:9", release="on_result",
                                        display_feed=False), table, key=key)
    pub._ensure_caught_up()
    for batch in shoe_batches(3, max_rounds=rounds):
        pub.append(batch)
    pub.publish_head()
    return journal, pub


def capture(journal: Journal, table: str = "T1") -> list[bytes]:
    """The outbox as `mosquitto_sub -v` lines, in outbox order (what went on the wire)."""
    rows = journal._conn.execute("SELECT topic, payload FROM outbox ORDER BY id").fetchall()
    return [t.encode() + b" " + bytes(p) + b"\n" for t, p in rows]


@pytest.fixture
def table(tmp_path):
    journal, pub = make_table(tmp_path / "s")
    lines = capture(journal)
    yield journal, pub, lines
    pub.stop(timeout=0.5)
    journal.close()


def kinds(report) -> dict[str, int]:
    return report.counts()


def events_of(lines):
    return [ln for ln in lines if ln.startswith(EVENTS_T.encode())]


def test_clean_capture_passes_and_every_signature_checks_with_cryptography_alone(table):
    journal, _pub, lines = table
    report = verify_capture(lines, [KEY.public], "T1")
    assert report.ok, report.summary()
    assert report.verified == journal.last_seq > 50
    assert report.summary().startswith("OK: ")
    # independent check, straight from docs/mqtt.md: cut '"sig":"<hex>"' and one comma,
    # verify with the raw public key; the cut bytes are the canonical JSON without sig
    pub = Ed25519PublicKey.from_public_bytes(KEY.public.raw)
    for line in lines:
        payload = line.split(b" ", 1)[1].rstrip(b"\n")
        msg = json.loads(payload)
        sig = msg.pop("sig")
        member = b'"sig":"' + sig.encode() + b'"'
        cut = payload.replace(member + b",", b"", 1)
        assert cut == json.dumps(msg, sort_keys=True, separators=(",", ":"),
                                 ensure_ascii=False).encode()
        pub.verify(bytes.fromhex(sig), cut)  # raises if not
        assert msg["key_id"] == __import__("hashlib").sha256(KEY.public.raw).hexdigest()[:32]
        assert msg["epoch"] == journal.epoch
    first = json.loads(events_of(lines)[0].split(b" ", 1)[1])
    assert first["seq"] == 1 and first["type"] == "journal_started"
    assert first["event"] == {"type": "journal_started", "epoch": journal.epoch,
                              "table": "T1", "previous": None}


def test_cli_exit_codes(table, tmp_path):
    _journal, _pub, lines = table
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_bytes(b"".join(lines))
    forged = list(lines)
    forged[5] = forged[5].replace(b'"shoe":1', b'"shoe":2', 1)
    bad.write_bytes(b"".join(forged))
    pub = tmp_path / "signing.pub"
    pub.write_text(KEY.public.text + "\n")

    def feed(*args):
        return subprocess.run([sys.executable, "-m", "shoe_controller.cli", "feed",
                               "verify", *args], capture_output=True, text=True, timeout=60,
                              cwd=ROOT)

    r = feed(str(good), "--pubkey", str(pub), "--table", "T1")
    assert r.returncode == 0 and r.stdout.startswith("OK: "), r.stdout + r.stderr
    r = feed(str(bad), "--pubkey", str(pub), "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["ok"] is False and report["findings"]["bad_signature"] == 1
    assert feed(str(tmp_path / "nope"), "--pubkey", str(pub)).returncode == 2
    assert feed(str(good), "--pubkey", "ed25519:AAAA").returncode == 2
    assert feed(str(good)).returncode == 2  # --pubkey is required


def test_forged_byte_and_another_key(table):
    journal, _pub, lines = table
    ev = events_of(lines)
    i = next(k for k, ln in enumerate(lines) if b'"card_dealt"' in ln)
    forged = list(lines)
    # a one-byte change inside the event: the card's rank
    payload = lines[i].split(b" ", 1)[1]
    j = payload.index(b'"card":"') + len(b'"card":"')
    swapped = payload[:j] + (b"2" if payload[j:j + 1] != b"2" else b"3") + payload[j + 1:]
    forged[i] = EVENTS_T.encode() + b" " + swapped
    r = verify_capture(forged, [KEY.public], "T1")
    assert kinds(r) == {"bad_signature": 1, "gap": 1}, r.summary()
    # signed with another key (a forger's own): the pinned key refuses it
    entry = journal.entry(7)
    other = list(lines)
    k = next(n for n, ln in enumerate(other) if b'"seq":7,' in ln and ln.startswith(
        EVENTS_T.encode()))
    other[k] = EVENTS_T.encode() + b" " + casino_payload(entry, "T1", journal.epoch, OTHER)
    r = verify_capture(other, [KEY.public], "T1")
    assert "bad_signature" in kinds(r) and not r.ok
    assert len(ev) > 10


def test_old_epoch_replayed_ahead_of_the_live_feed(tmp_path, table):
    _journal, _pub, lines = table
    old_j, old_pub = make_table(tmp_path / "old", rounds=8)
    old = [ln for ln in capture(old_j) if ln.startswith(EVENTS_T.encode())]
    attack = lines[:40] + old[20:30] + lines[40:]
    r = verify_capture(attack, [KEY.public], "T1")
    assert kinds(r) == {"foreign_epoch": 10}, r.summary()
    old_pub.stop(timeout=0.5)
    old_j.close()


def test_reordered(table):
    _journal, _pub, lines = table
    ev = [i for i, ln in enumerate(lines) if ln.startswith(EVENTS_T.encode())]
    swapped = list(lines)
    a, b = ev[10], ev[11]
    swapped[a], swapped[b] = swapped[b], swapped[a]
    r = verify_capture(swapped, [KEY.public], "T1")
    assert kinds(r) == {"reordered": 1}, r.summary()


def test_withheld_tail_and_middle(table):
    _journal, _pub, lines = table
    ev = [i for i, ln in enumerate(lines) if ln.startswith(EVENTS_T.encode())]
    tail = [ln for i, ln in enumerate(lines) if i not in set(ev[-6:])]
    r = verify_capture(tail, [KEY.public], "T1")
    assert kinds(r) == {"withheld": 1}, r.summary()
    # without the head nothing says more was sent: a clean (shorter) run
    no_head = [ln for ln in tail if not ln.startswith(HEAD_T.encode())]
    assert verify_capture(no_head, [KEY.public], "T1").ok
    middle = [ln for i, ln in enumerate(lines) if i != ev[25]]
    r = verify_capture(middle, [KEY.public], "T1")
    assert kinds(r) == {"gap": 1}, r.summary()
    assert r.findings[0].seq == 26


def test_cross_table(tmp_path, table):
    _journal, _pub, lines = table
    t2_j, t2_pub = make_table(tmp_path / "t2", table="T2", rounds=2)
    t2 = [ln.split(b" ", 1)[1] for ln in capture(t2_j) if b"/casino/events " in ln]
    # T2's envelope on T1's topic, T1's on T2's topic
    attack = [*lines, EVENTS_T.encode() + b" " + t2[3]]
    assert kinds(verify_capture(attack, [KEY.public], "T1")) == {"wrong_table": 1}
    attack = [*lines, b"shoe/T2/casino/events " + lines[5].split(b" ", 1)[1]]
    assert kinds(verify_capture(attack, [KEY.public], "T1")) == {"wrong_topic": 1}
    t2_pub.stop(timeout=0.5)
    t2_j.close()


MALFORMED = [b"[]", b"{}", b'{"forged":1}', b'{"hmac":5}', b'{"sig":5}', b'"x"', b"1",
             b"-1.5e300", b"true", b"false", b"null", b"", b"{", b"\xff\xfe", b"NaN",
             b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
             b'{"seq":"1","type":"x","table":"T1","shoe":1,"round":1,"time":"t","event":[],'
             b'"hash":"a","prev_hash":"b","epoch":"c","key_id":"d","sig":"e"}']


@pytest.mark.parametrize("payload", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_payloads_are_findings_never_crashes(table, payload):
    _journal, _pub, lines = table
    for topic in (EVENTS_T, HEAD_T):
        r = verify_capture([*lines, topic.encode() + b" " + payload], [KEY.public], "T1")
        assert not r.ok
        assert set(kinds(r)) <= {"malformed", "unsigned", "bad_signature"}, r.summary()
    # and the follower (the same checks live) neither crashes nor writes it
    out: list[bytes] = []
    f = Follower(MqttConfig(), "T1", [KEY.public], out.append)
    f.receive(EVENTS_T, payload)
    f.receive(HEAD_T, payload)
    assert out == [] and f.findings


def test_a_line_without_a_topic_is_malformed(table):
    _journal, _pub, lines = table
    r = verify_capture([*lines, b"garbage\n"], [KEY.public], "T1")
    assert kinds(r) == {"malformed": 1}


def test_rolled_back_journal_republishing_old_seqs_is_a_fork(tmp_path, table):
    """A backup restored and run anyway (as before this issue): the same seqs come out
    again with other content. The consumer reports the forks."""
    _journal, _pub, lines = table
    backup = tmp_path / "backup"
    shutil.copytree(tmp_path / "s", backup)
    # the restored copy goes on differently from seq 40 (a different shoe)
    j2 = Journal.open(str(backup / "journal.sqlite3"), table_id="T1")
    j2._conn.execute("DELETE FROM events WHERE seq >= 40")
    j2.close()
    j2 = Journal.open(str(backup / "journal.sqlite3"), table_id="T1")
    entries = j2.append([{"type": "fault", "shoe": 1, "round": None, "kind": "x",
                          "detail": str(i)} for i in range(5)])
    forged = [EVENTS_T.encode() + b" " + casino_payload(e, "T1", j2.epoch, KEY)
              for e in entries]
    r = verify_capture(lines + forged, [KEY.public], "T1")
    assert kinds(r) == {"fork": 5}, r.summary()
    j2.close()


def run_cli(*argv, env=None):
    return subprocess.run([sys.executable, "-m", "shoe_controller.cli", *argv],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, **(env or {})})


def simulate_start(state: Path):
    """`simulate` on the state dir with no broker: it opens (or refuses) the journal."""
    return run_cli("simulate", "--state-dir", str(state), "--broker", "mqtt://127.0.0.1:9",
                   "--table-id", "T1", "--shoes", "1", "--pace", "0", "--quiet",
                   "--drain-timeout", "0")


def tighten(state: Path) -> None:
    """The modes `run`/`simulate` insist on (0750, files 0640; issue 14): the files
    these tests make in-process follow this process's umask instead."""
    os.chmod(state, 0o750)
    for p in state.iterdir():
        if p.is_file() and p.name != "signing.pub":
            os.chmod(p, 0o600 if p.name == "signing.key" else 0o640)


def crash_copy(src: Path, dst: Path, journal: Journal) -> None:
    """Copy a state dir as a crash (or a careless backup) leaves it: the journal's
    latest events only in its -wal file (no checkpoint since)."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.lock"))
    tighten(dst)


def prepared_state(tmp_path: Path) -> tuple[Path, Journal, Publisher]:
    """A state dir with a key, a journal the daemon made, events beyond its last
    checkpoint, and the head file written."""
    state = tmp_path / "state"
    state.mkdir(mode=0o750)
    init_keys(str(state))
    key = load_signing_key(str(state / "signing.key"))
    journal = open_table_journal(str(state / "journal.sqlite3"), "T1", key=key)
    journal.defer_checkpoints()
    pub = Publisher(journal, MqttConfig(url="mqtt://127.0.0.1:9", display_feed=False,
                                        release="per_card"), "T1", key=key)
    pub._ensure_caught_up()
    for batch in shoe_batches(5, max_rounds=3):
        pub.append(batch)
    pub.publish_head()
    return state, journal, pub


def test_wal_deleted_is_refused_at_start(tmp_path):
    state, journal, pub = prepared_state(tmp_path)
    copy = tmp_path / "copy"
    crash_copy(state, copy, journal)
    assert (copy / "journal.sqlite3-wal").exists()
    os.unlink(copy / "journal.sqlite3-wal")
    r = simulate_start(copy)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "refusing to start" in r.stderr and str(copy / "journal.sqlite3") in r.stderr
    assert "behind" in r.stderr and "-wal" in r.stderr
    # a journal file that holds nothing at all (only its name survived)
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o750)
    shutil.copy(state / "signing.key", empty / "signing.key")
    (empty / "journal.sqlite3").write_bytes(b"")
    tighten(empty)
    r = simulate_start(empty)
    assert r.returncode == 2 and "holds no journal" in r.stderr, r.stderr
    assert not (empty / "journal.sqlite3").stat().st_size  # untouched, not made anew
    pub.stop(timeout=0.5)
    journal.close()


def test_wal_shortened_is_refused_at_start(tmp_path):
    state, journal, pub = prepared_state(tmp_path)
    copy = tmp_path / "copy"
    crash_copy(state, copy, journal)
    wal = copy / "journal.sqlite3-wal"
    size = wal.stat().st_size
    with open(wal, "r+b") as f:
        f.truncate(size // 2)
    r = simulate_start(copy)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "behind what this table announced" in r.stderr
    pub.stop(timeout=0.5)
    journal.close()


def test_rolled_back_journal_is_refused_by_the_head_file_and_by_the_broker_head(tmp_path):
    state, journal, pub = prepared_state(tmp_path)
    backup = tmp_path / "backup"
    journal.checkpoint()
    shutil.copytree(state, backup, ignore=shutil.ignore_patterns("*.lock"))
    tighten(backup)
    for batch in shoe_batches(6, max_rounds=2):  # the table goes on after the backup
        pub.append(batch)
    head = pub.publish_head()
    pub.stop(timeout=0.5)
    journal.close()
    # restore the journal only: the head file knows better
    for name in ("journal.sqlite3", "journal.sqlite3-wal", "journal.sqlite3-shm"):
        with __import__("contextlib").suppress(FileNotFoundError):
            os.unlink(state / name)
        if (backup / name).exists():
            shutil.copy(backup / name, state / name)
    tighten(state)
    r = simulate_start(state)
    assert r.returncode == 2 and "behind" in r.stderr, r.stdout + r.stderr
    # the whole state dir restored (head file too): only the broker's head knows
    key = load_signing_key(str(state / "signing.key"))
    broker_head = json.loads(head)
    with pytest.raises(JournalError, match="the head retained on the broker says seq"):
        open_table_journal(str(backup / "journal.sqlite3"), "T1", key=key,
                           broker_head=broker_head)
    # a forked journal (same length, other content) at the head's seq
    fork = tmp_path / "fork"
    shutil.copytree(backup, fork, ignore=shutil.ignore_patterns("*.lock"))
    j = Journal.open(str(fork / "journal.sqlite3"), table_id="T1")
    need = broker_head["seq"] - j.last_seq
    j.append([{"type": "fault", "shoe": 1, "round": None, "kind": "x", "detail": str(i)}
              for i in range(need)])
    j.close()
    with pytest.raises(JournalError, match="forked"):
        open_table_journal(str(fork / "journal.sqlite3"), "T1", key=key,
                           broker_head=broker_head)


def test_a_head_file_that_was_edited_is_refused(tmp_path):
    state, journal, pub = prepared_state(tmp_path)
    pub.stop(timeout=0.5)
    journal.close()
    path = Path(head_file_path(str(state / "journal.sqlite3")))
    head = json.loads(path.read_text())
    path.write_text(json.dumps({**head, "seq": 1}, sort_keys=True, separators=(",", ":")))
    tighten(state)
    r = simulate_start(state)
    assert r.returncode == 2 and "head file" in r.stderr and "altered" in r.stderr


def test_a_new_journal_where_the_old_was_moved_aside_names_what_it_follows(tmp_path):
    state, journal, pub = prepared_state(tmp_path)
    last_seq, last_hash, epoch = pub.head[0], pub.head[1], journal.epoch
    pub.stop(timeout=0.5)
    journal.close()
    os.rename(state / "journal.sqlite3", tmp_path / "archived.sqlite3")
    key = load_signing_key(str(state / "signing.key"))
    j = open_table_journal(str(state / "journal.sqlite3"), "T1", key=key)
    first = j.first_entry().data
    assert j.epoch != epoch and first["previous"] == {"epoch": epoch, "seq": last_seq,
                                                      "hash": last_hash}
    j.close()


def test_key_rotation_is_announced_in_the_feed_and_keeps_old_seqs_byte_identical(tmp_path):
    from shoe_controller.daemon import StartRefused, device_keyring
    from shoe_controller.keys import load_public_key

    state, journal, pub = prepared_state(tmp_path)
    before = dict(journal._conn.execute(
        "SELECT seq, payload FROM outbox WHERE seq IS NOT NULL").fetchall())
    old_pub = load_public_key(str(state / "signing.pub"))
    last_before = journal.last_seq
    pub.stop(timeout=0.5)
    journal.close()
    tighten(state)
    r = run_cli("keys", "rotate", "--state-dir", str(state))
    assert r.returncode == 0, r.stderr
    new_pub = load_public_key(str(state / "signing.pub"))
    assert new_pub.key_id != old_pub.key_id and new_pub.key_id in r.stdout
    assert (state / f"signing.key.{old_pub.key_id}.old").stat().st_mode & 0o777 == 0o600
    # the daemon starts with the new key and a keyring that still signs old seqs with
    # the old one
    key = load_signing_key(str(state / "signing.key"))
    journal = open_table_journal(str(state / "journal.sqlite3"), "T1", key=key)
    ring = device_keyring(journal, key, str(state / "signing.key"))
    pub = Publisher(journal, MqttConfig(url="mqtt://127.0.0.1:9", display_feed=False,
                                        release="per_card"), "T1", key=ring)
    pub._ensure_caught_up()  # stages the key_rotated event (signed by the old key)
    for batch in shoe_batches(8, max_rounds=2):
        pub.append(batch)
    pub.publish_head()
    for seq in (1, 5, last_before):  # a replay of an old seq: the bytes first sent
        entry = journal.entry(seq)
        assert casino_payload(entry, "T1", journal.epoch, ring.for_seq(seq)) == before[seq]
    rotated = journal.entry(last_before + 1)
    assert rotated.type == "key_rotated"
    lines = capture(journal)
    # a consumer that pinned only the old key follows the rotation: all verified
    report = verify_capture(lines, [old_pub], "T1")
    assert report.ok, report.summary()
    env = json.loads(next(ln for ln in lines if b'"key_rotated"' in ln).split(b" ", 1)[1])
    assert env["key_id"] == old_pub.key_id  # announced under the old key
    assert json.loads(lines[-2].split(b" ", 1)[1])["key_id"] == new_pub.key_id
    # an endorsement by anyone else is no rotation: the forger's key is not adopted
    forged_body = dict(rotated.data)
    forged_body["new_public_key"] = OTHER.public.text
    forged_body["new_key_id"] = OTHER.key_id
    from shoe_controller.keys import check_rotation
    assert check_rotation(forged_body, old_pub) is None
    pub.stop(timeout=0.5)
    # the old key put back as signing.key: refused (the journal moved on)
    with pytest.raises(StartRefused, match="last key_rotated"):
        device_keyring(journal, load_signing_key(
            str(state / f"signing.key.{old_pub.key_id}.old")), str(state / "signing.key"))
    journal.close()


def test_an_older_head_from_a_broker_restarted_from_persistence_is_no_finding(table):
    journal, _pub, lines = table
    from shoe_controller.publish.payloads import head_payload
    e = journal.entry(20)
    stale = HEAD_T.encode() + b" " + head_payload("T1", journal.epoch, 20, e.hash, "t", KEY)
    assert verify_capture([*lines, stale], [KEY.public], "T1").ok
    wrong = HEAD_T.encode() + b" " + head_payload("T1", journal.epoch, 20, "ab" * 32, "t",
                                                  KEY)
    assert kinds(verify_capture([*lines, wrong], [KEY.public], "T1")) == {"fork": 1}
