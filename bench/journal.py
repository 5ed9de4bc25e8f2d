"""Journal and publish figures: appends per second with fsync, chain verification speed,
and card-to-subscriber latency over a real mosquitto on loopback.

Figures printed:
- journal appends/s, one event per transaction (each one fsynced: synchronous=FULL, WAL)
- journal events/s in batches of 5 (a round's worth per transaction)
- Publisher.append events/s (journal + release + signature + outbox, one transaction)
- verify (hash chain re-check at start) events/s
- journal append -> message at a subscriber, per_card release: p50 / p99 (needs mosquitto)
- the largest WAL file seen over a whole shoe dealt at full speed (the real daemon,
  Checkpointer and outbox; target < 8 MB), and the WAL left once the shoe ended

The journal lives in --dir (default: a temporary folder under the system temp dir);
put it on the disk the daemon's state directory uses (an SD card on a Pi) for figures
that mean something there.

Run: .venv/bin/python bench/journal.py [--events N] [--dir DIR] [--latency-n N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.support.broker (a private mosquitto)

from shoe_controller.journal import Journal  # noqa: E402
from shoe_controller.keys import SigningKey  # noqa: E402
from shoe_controller.publish.config import MqttConfig  # noqa: E402
from shoe_controller.publish.probe import percentiles, publish_latency, summary  # noqa: E402
from shoe_controller.publish.publisher import Publisher  # noqa: E402


def card(i: int) -> dict[str, object]:
    return {"type": "card_dealt", "shoe": 1, "round": i // 5 + 1, "hand": "player",
            "position": 1, "card": "QH", "orientation": "up"}


def filesystem(path: str) -> str:
    try:
        out = subprocess.run(["df", "-T", path], capture_output=True, text=True, timeout=5)
        return out.stdout.splitlines()[1].split()[1]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "?"


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.0f}/s ({seconds / n * 1e3:.3f} ms each)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--dir", default=None, help="where to put the benchmark journal")
    ap.add_argument("--latency-n", type=int, default=500)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-journal-", dir=args.dir)
    print(f"journal folder {work} ({filesystem(work)}), {os.cpu_count()} CPUs")
    try:
        n = args.events
        with Journal.open(os.path.join(work, "single.sqlite3"), table_id="B") as j:
            t0 = time.perf_counter()
            for i in range(n):
                j.append([card(i)])
            single = time.perf_counter() - t0
        print(f"journal append, 1 event per fsynced transaction: {rate(n, single)}")

        with Journal.open(os.path.join(work, "batch.sqlite3"), table_id="B") as j:
            t0 = time.perf_counter()
            for i in range(0, n, 5):
                j.append([card(k) for k in range(i, i + 5)])
            batch = time.perf_counter() - t0
        print(f"journal append, 5 events per fsynced transaction: {rate(n, batch)} events")

        with Journal.open(os.path.join(work, "pub.sqlite3"), table_id="B") as j:
            pub = Publisher(j, MqttConfig(release="per_card"), "B",
                            key=SigningKey.generate())
            t0 = time.perf_counter()
            for i in range(n):
                pub.append([card(i)])
            staged = time.perf_counter() - t0
            print(f"Publisher.append (journal + sign + outbox, 1 txn): {rate(n, staged)}")

        from shoe_controller.sim.walprobe import largest_wal_over_shoes

        wal_dir = os.path.join(work, "wal")
        os.makedirs(wal_dir)
        w = largest_wal_over_shoes(wal_dir)
        print(f"largest WAL over a shoe at full speed ({w.events} events in "
              f"{w.seconds:.1f} s): {w.largest / 2**20:.1f} MB (target < 8 MB: "
              f"{'met' if w.largest < 8 * 2**20 else 'NOT met'}); after the shoe: "
              f"{w.at_end} bytes, {w.truncates} TRUNCATE checkpoint(s)")

        with Journal.open(os.path.join(work, "single.sqlite3"), verify=False) as j:
            t0 = time.perf_counter()
            count = j.verify()
            ver = time.perf_counter() - t0
        print(f"verify (hash chain re-check): {rate(count, ver)} events")

        try:
            from tests.support.broker import Mosquitto
            broker = Mosquitto().start()
        except (ImportError, RuntimeError) as exc:
            print(f"publish latency: skipped ({exc})")
            return 0
        try:
            lat = publish_latency("127.0.0.1", broker.port, n=args.latency_n, directory=work)
        finally:
            broker.__exit__()
        p = percentiles(lat, (50, 99))
        print(f"journal append -> subscriber (per_card, loopback): {summary(lat)}")
        print("  (includes the journal's fsync: compare the single-event append above)")
        print(f"  target p99 <= 10 ms: {'met' if p[99] <= 0.010 else 'NOT met'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
