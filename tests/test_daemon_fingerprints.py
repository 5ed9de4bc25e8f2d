"""The daemon remembers earlier shoes in the fingerprint store: a shoe dealt again, even
under a new journal, raises a shuffle_repeat integrity alert. Real SQLite, the real
daemon (core loop driven in-process), real shuffles; nothing mocked."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from shoe_controller.daemon import Daemon, open_fingerprints
from shoe_controller.game.inputs import CardSeen, NewShoe
from shoe_controller.game.protection import AnalyticsConfig
from shoe_controller.game.rules import Rules
from shoe_controller.journal import Journal
from shoe_controller.sim import shuffled_shoe

RULES = Rules(burn="none")  # rounds and confirmations automatic: a card list is a shoe
CARDS = 120  # dealt of each shoe (about 25 rounds)


def run_daemon(journal_path: Path, store_dir: Path, shoes: list[list[Any]],
               keep: int = 500) -> list[dict[str, Any]]:
    """Start a daemon on ``journal_path`` with the fingerprint store of ``store_dir``,
    deal ``shoes`` (each begun by NewShoe; the last one left open), stop; return the
    journal's events of this run."""
    journal = Journal.open(journal_path, table_id="T1")
    first = journal.last_seq + 1
    analytics = AnalyticsConfig(fingerprint_history_shoes=keep)
    daemon = Daemon(rules=RULES, journal=journal, analytics=analytics,
                    fingerprints=open_fingerprints(str(store_dir), analytics))
    daemon.start()
    try:
        for cards in shoes:
            daemon.submit(NewShoe())
            for card in cards:
                daemon.submit(CardSeen(card, None, "test"))
            daemon.drain()
        assert daemon.errors == 0
        return [e.data for e in journal.replay(first)]
    finally:
        daemon.close()


def repeat_alerts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "integrity_alert"
            and e["kind"] == "shuffle_repeat"]


def test_a_shoe_repeated_under_a_new_journal_is_caught(tmp_path: Path) -> None:
    store = tmp_path / "state"
    store.mkdir()
    a = shuffled_shoe("fp-a", 1)[:CARDS]
    b = shuffled_shoe("fp-b", 1)[:CARDS]
    c = shuffled_shoe("fp-c", 1)[:CARDS]

    # Run 1 deals shoe a, then starts shoe b (ending a: its fingerprints are stored).
    first = run_daemon(tmp_path / "one.sqlite3", store, [a, b])
    assert not repeat_alerts(first)
    assert [e["reason"] for e in first if e["type"] == "shoe_ended"] == ["new_shoe"]

    # The store holds salted 64-bit fingerprints only, never a card.
    with sqlite3.connect(store / "fingerprints.sqlite3") as db:
        rows = db.execute("SELECT COUNT(*) FROM shoe_fingerprints").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert rows == CARDS - 7  # one per 8-card window of shoe a
    assert not any("card" in t for t in tables)

    # Run 2: a new journal, the same store. Its shoe 1 (shoe numbers start again: the
    # same number as the stored shoe) repeats run 1's shoe 1 and is caught within
    # rounds; a fresh shuffle after it is fine.
    second = run_daemon(tmp_path / "two.sqlite3", store, [a, c])
    alerts = repeat_alerts(second)
    assert len(alerts) == 1, alerts
    alert = alerts[0]
    assert alert["shoe"] == 1  # the repeated shoe, not the fresh one (shoe 2)
    assert alert["evidence"]["test"] == "repeat"
    assert alert["evidence"]["windows"] >= 2
    dealt_before = [e for e in second if e["type"] == "card_dealt" and e["shoe"] == 1
                    and e["round"] <= alert["round"]]
    assert len(dealt_before) < 20  # flagged in the first rounds


def test_a_restarted_daemon_remembers_its_own_shoes(tmp_path: Path) -> None:
    store = tmp_path / "state"
    store.mkdir()
    journal = tmp_path / "journal.sqlite3"
    a = shuffled_shoe("self-a", 1)[:CARDS]
    b = shuffled_shoe("self-b", 1)[:CARDS]
    assert not repeat_alerts(run_daemon(journal, store, [a]))
    # Restarted on the same journal (its shoe 1 is replayed and, once ended, stored
    # under its own number): new shoes raise nothing; shoe 1's order again does.
    events = run_daemon(journal, store, [b, a])
    alerts = repeat_alerts(events)
    assert [x["shoe"] for x in alerts] == [3]


def test_the_store_forgets_beyond_the_configured_history(tmp_path: Path) -> None:
    store = tmp_path / "state"
    store.mkdir()
    shoes = [shuffled_shoe(f"keep-{i}", 1)[:40] for i in range(4)]
    run_daemon(tmp_path / "j.sqlite3", store, [*shoes, []], keep=2)
    with sqlite3.connect(store / "fingerprints.sqlite3") as db:
        kept = db.execute("SELECT COUNT(DISTINCT shoe) FROM shoe_fingerprints").fetchone()[0]
    assert kept == 2
    # shoe 1 was forgotten: dealt again under a new journal, nothing is recalled
    again = run_daemon(tmp_path / "k.sqlite3", store, [shoes[0]], keep=2)
    assert not repeat_alerts(again)
    # shoe 4 was kept: it is recalled
    again = run_daemon(tmp_path / "l.sqlite3", store, [shoes[3]], keep=2)
    assert len(repeat_alerts(again)) == 1
