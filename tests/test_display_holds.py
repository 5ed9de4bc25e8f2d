"""`simulate --hold-supervisor/--hold-bets/--shoe-break`: the virtual table keeps each
state on the display long enough to be seen (issue 16: "GAME PAUSED" and "SHOE ENDED"
were never seen because the virtual supervisor resumed in milliseconds and the next shoe
loaded at once)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shoe_controller.daemon import Daemon
from shoe_controller.game.rules import Rules
from shoe_controller.journal import Journal
from shoe_controller.sim import Holds, VirtualDealer, direct_hands, parse_inject

RULES = Rules(confirm="button", decks=2)  # short shoes: a fast test


def run_table(path: Path, holds: Holds, shoes: int, inject: str) -> list[tuple[float, dict]]:
    """A real daemon core and the virtual dealer; every journaled event with the time it
    was journaled."""
    daemon = Daemon(rules=RULES, journal=Journal.open(path, table_id="T1"))
    seen: list[tuple[float, dict]] = []
    daemon.observers.append(lambda entries: seen.extend(
        (time.monotonic(), e.data) for e in entries))
    dealer = VirtualDealer(direct_hands(daemon.submit), shoes=shoes, seed="holds",
                           rules=RULES, inject=parse_inject(inject), holds=holds)
    daemon.observers.append(dealer.observe)
    daemon.start()
    core = threading.Thread(target=daemon.run, daemon=True)
    core.start()
    worker = threading.Thread(target=dealer.run, daemon=True)
    worker.start()
    try:
        assert dealer.done.wait(120), "the virtual dealer did not finish"
        assert dealer.error is None
    finally:
        dealer.stop()
        daemon.stop()
        core.join(10)
        daemon.close()
    return seen


def gaps(seen: list[tuple[float, dict]], first: str, then: str,
         reason: str | None = None) -> list[float]:
    """Seconds from each ``first`` event (with that ``reason``) to the next ``then``."""
    out, since = [], None
    for t, ev in seen:
        if ev["type"] == first and reason in (None, ev.get("reason")):
            since = t
        elif ev["type"] == then and since is not None:
            out.append(t - since)
            since = None
    return out


def test_holds_keep_paused_bets_open_and_shoe_ended_on_screen(tmp_path: Path) -> None:
    holds = Holds(supervisor=0.4, bets=0.01, shoe_break=0.5)
    seen = run_table(tmp_path / "j.sqlite3", holds, shoes=2, inject="foreign=1")
    # the table stopped on the foreign card; the supervisor took its time to come
    paused = gaps(seen, "round_paused", "round_resumed", reason="foreign_card")
    assert len(paused) == 2 and min(paused) >= 0.4
    between = gaps(seen, "shoe_ended", "shoe_started")
    assert len(between) == 1 and between[0] >= 0.5  # a pause between the shoes
    bets = gaps(seen, "bets_open", "round_started")
    assert len(bets) >= 8 and min(bets) >= 0.01  # bets stayed open before each round


def test_no_holds_by_default() -> None:
    assert Holds() == Holds(supervisor=0.0, bets=0.0, shoe_break=0.0)
