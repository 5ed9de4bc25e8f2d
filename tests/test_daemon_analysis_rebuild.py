"""A crash between a round's end and its deferred shoe_analysis loses that analysis; the
next start rebuilds the current shoe's missing analyses, equal to those an uninterrupted
run journals."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shoe_controller.daemon import Daemon
from shoe_controller.game.rules import Rules
from shoe_controller.journal import Journal
from shoe_controller.sim import VirtualDealer, direct_hands

RULES = Rules(confirm="button")


def _deal_rounds(daemon: Daemon, rounds: int) -> None:
    dealer = VirtualDealer(direct_hands(daemon.submit), shoes=1, seed="rebuild", rules=RULES)
    daemon.observers.append(dealer.observe)
    t = threading.Thread(target=dealer.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        daemon.drain()
        v = dealer.view
        if v.round > rounds and v.phase == "initial":
            break
        time.sleep(0.002)
    dealer.stop()
    t.join(10)
    daemon.drain()


def _analyses(path: Path) -> dict[int, dict]:
    with Journal.open(path, readonly=True) as j:
        return {e.data["round"]: e.data for e in j.replay() if e.type == "shoe_analysis"}


def test_lost_analyses_of_the_current_shoe_are_rebuilt_on_resume(tmp_path, caplog):
    # the reference: an uninterrupted run
    ref = tmp_path / "ref.sqlite3"
    d = Daemon(rules=RULES, journal=Journal.open(ref, table_id="T1"))
    d.start()
    _deal_rounds(d, 6)
    d.run_projection()
    d.close()
    expected = _analyses(ref)
    assert len(expected) >= 5
    # the crash: every round's analysis lost (the projection never ran)
    lost = tmp_path / "lost.sqlite3"
    d = Daemon(rules=RULES, journal=Journal.open(lost, table_id="T1"))
    d.core._protect = None  # as if the process died before each deferred analysis
    d.start()
    _deal_rounds(d, 6)
    d.journal.close()
    assert _analyses(lost) == {}
    # the next start rebuilds them
    d = Daemon(rules=RULES, journal=Journal.open(lost, table_id="T1"))
    d.start()
    d.close()
    rebuilt = _analyses(lost)
    assert rebuilt.keys() == expected.keys()
    for rnd, a in expected.items():
        assert rebuilt[rnd]["probabilities"] == a["probabilities"], rnd
        assert rebuilt[rnd]["house_edge"] == a["house_edge"], rnd
    assert "rebuilt the shoe_analysis of round " in caplog.text
    # and a start with nothing missing adds nothing
    with Journal.open(lost, readonly=True) as j:
        before = j.last_seq
    d = Daemon(rules=RULES, journal=Journal.open(lost, table_id="T1"))
    d.start()
    d.close()
    with Journal.open(lost, readonly=True) as j:
        assert j.last_seq == before
