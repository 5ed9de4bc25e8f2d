"""How large the journal's WAL file gets over a whole shoe dealt at full speed (for
``bench/journal.py`` and the WAL-bound test).

The real daemon (journal, Checkpointer, publisher with its outbox; the broker is
unreachable, so the outbox keeps every message) and the virtual dealer dealing straight
onto the daemon's queue with no pause between cards: the worst case for checkpoints,
which run when the journal is quiet. A thread samples the ``-wal`` file's size every
``sample`` seconds.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["WalFigures", "largest_wal_over_shoes"]


@dataclass(frozen=True)
class WalFigures:
    """``largest``: the biggest ``-wal`` file seen (bytes); ``events`` journaled;
    ``seconds`` the run took; ``at_end``: the ``-wal`` file once the shoe ended and the
    journal was quiet for a moment; ``truncates`` TRUNCATE checkpoints run."""

    largest: int
    events: int
    seconds: float
    at_end: int
    truncates: int


def largest_wal_over_shoes(directory: str, shoes: int = 1, seed: str = "wal",
                           sample: float = 0.002) -> WalFigures:
    """Deal ``shoes`` shoes at full speed into a daemon journaling in ``directory``."""
    from shoe_controller.daemon import Daemon
    from shoe_controller.game.rules import Rules
    from shoe_controller.journal import Journal
    from shoe_controller.keys import SigningKey
    from shoe_controller.publish.config import MqttConfig
    from shoe_controller.publish.publisher import Publisher
    from shoe_controller.sim import VirtualDealer, direct_hands

    rules = Rules(confirm="button")
    path = os.path.join(directory, "journal.sqlite3")
    journal = Journal.open(path, table_id="WAL-1")
    publisher = Publisher(journal, MqttConfig(url="mqtt://127.0.0.1:9"), "WAL-1",
                          key=SigningKey.generate())
    daemon = Daemon(rules=rules, journal=journal, publisher=publisher)
    largest = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError):
                largest[0] = max(largest[0], os.path.getsize(path + "-wal"))
            time.sleep(sample)

    daemon.start()
    loop = threading.Thread(target=daemon.run, daemon=True)
    loop.start()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    dealer = VirtualDealer(direct_hands(daemon.submit), shoes=shoes, seed=seed, rules=rules)
    daemon.observers.append(dealer.observe)
    t0 = time.perf_counter()
    try:
        dealer.run()
        seconds = time.perf_counter() - t0
        if dealer.error is not None:
            raise RuntimeError(f"the virtual dealer failed: {dealer.error}")
        ck: Any = daemon.checkpointer
        # The daemon may still be journaling the last round when the dealer returns: wait
        # until the journal has been quiet for half a second, then give the shoe end's
        # TRUNCATE 3 s (less than the 5 s idle TRUNCATE, so only the shoe end empties it).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and time.monotonic() - journal.appended_at < 0.5:
            time.sleep(0.05)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and journal.wal_bytes():
            time.sleep(0.05)
        at_end = journal.wal_bytes()
        truncates = ck.truncates if ck is not None else 0
    finally:
        done.set()
        daemon.stop()
        loop.join(10)
        watcher.join(2)
        events = journal.last_seq
        daemon.close(flush_timeout=0)
    return WalFigures(largest[0], events, seconds, at_end, truncates)
