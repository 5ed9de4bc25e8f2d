"""What the device's Ed25519 signatures cost (issue 13; target: < 0.2 ms per event).

Printed:
1. per casino envelope, over every event of real shuffled shoes (not the shoe the code
   was tuned on: seeds 101..), the time of ``casino_payload`` signed minus unsigned
   (the whole cost signing adds: the signature, ``key_id``/``sig`` in the JSON), and of
   ``SigningKey.sign`` alone on the envelope's bytes; p50 / p99 / mean in microseconds;
2. per display state (the ~18 kB retained payload), the same difference;
3. per head (signed, written to the head file with fsync, staged): what the head
   thread spends off the card's path;
4. card read -> casino message at a subscriber through the whole daemon (bench/latency.py's
   measurement), signed and unsigned in the same run, beside the bare fsync floor
   (one journal append) on the same disk.

Run: .venv/bin/python bench/signing.py [--shoes N] [--cards N] [--gap S] [--dir DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

from shoe_controller.game.display_state import DisplayState, project, to_payload  # noqa: E402
from shoe_controller.journal import Journal  # noqa: E402
from shoe_controller.keys import SigningKey  # noqa: E402
from shoe_controller.publish.config import MqttConfig  # noqa: E402
from shoe_controller.publish.payloads import casino_payload, display_payload  # noqa: E402
from shoe_controller.publish.publisher import Publisher  # noqa: E402
from tests.test_publish_helpers import shoe_events  # noqa: E402


def us(xs: list[float]) -> str:
    xs = sorted(xs)
    p = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))] * 1e6  # noqa: E731
    return (f"p50 {p(0.5):6.1f} us  p99 {p(0.99):6.1f} us  mean "
            f"{statistics.fmean(xs) * 1e6:6.1f} us  (n={len(xs)})")


def envelope_cost(shoes: int, key: SigningKey) -> tuple[list[float], list[float]]:
    work = tempfile.mkdtemp(prefix="bench-sign-")
    j = Journal.open(os.path.join(work, "j.sqlite3"), table_id="BENCH")
    events = [e for s in range(101, 101 + shoes) for e in shoe_events(s)]
    entries = j.append(events)
    added, sign_only = [], []
    for e in entries:
        # the least of 5 tries of each: the CPU cost itself, without the preemptions of
        # a shared machine (the whole-daemon figures below keep those)
        plain = signed_t = alone = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            casino_payload(e, "BENCH", j.epoch, None)
            t1 = time.perf_counter()
            signed = casino_payload(e, "BENCH", j.epoch, key)
            t2 = time.perf_counter()
            key.sign(signed)
            t3 = time.perf_counter()
            plain, signed_t, alone = min(plain, t1 - t0), min(signed_t, t2 - t1), \
                min(alone, t3 - t2)
        added.append(signed_t - plain)
        sign_only.append(alone)
    j.close()
    return added, sign_only


def display_cost(key: SigningKey) -> list[float]:
    state = DisplayState(table="BENCH")
    out = []
    for ev in shoe_events(201):
        from shoe_controller.game.events import event_to_dict

        state = project(state, event_to_dict(ev))
        payload = to_payload(state)
        plain = signed = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            display_payload(payload, None)
            t1 = time.perf_counter()
            display_payload(payload, key)
            t2 = time.perf_counter()
            plain, signed = min(plain, t1 - t0), min(signed, t2 - t1)
        out.append(signed - plain)
    return out[::5]


def head_cost(n: int, key: SigningKey, directory: str | None) -> list[float]:
    work = tempfile.mkdtemp(prefix="bench-head-", dir=directory)
    j = Journal.open(os.path.join(work, "j.sqlite3"), table_id="BENCH")
    pub = Publisher(j, MqttConfig(url="mqtt://127.0.0.1:9", display_feed=False), "BENCH",
                    key=key)
    pub._ensure_caught_up()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        pub.publish_head()
        out.append(time.perf_counter() - t0)
    pub.stop(timeout=0.5)
    j.close()
    return out


def _latency_module():
    spec = importlib.util.spec_from_file_location("bench_latency", ROOT / "bench" / "latency.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shoes", type=int, default=3, help="shoes of envelopes (default 3)")
    ap.add_argument("--cards", type=int, default=300,
                    help="cards per latency run (default 300)")
    ap.add_argument("--gap", type=float, default=0.05, help="seconds between cards")
    ap.add_argument("--dir", help="where the journals go (the disk measured)")
    args = ap.parse_args()
    key = SigningKey.generate()
    added, sign_only = envelope_cost(args.shoes, key)
    print("1. casino envelope, signing added (signed - unsigned casino_payload, least of 5):")
    print(f"     {us(added)}")
    print(f"   Ed25519 sign alone on the envelope's bytes: {us(sign_only)}")
    print(f"2. display state (~18 kB), signing added: {us(display_cost(key))}")
    print(f"3. head (sign + head file fsync + outbox), off the card's path: "
          f"{us(head_cost(200, key, args.dir))}")
    lat = _latency_module()
    from tests.support.broker import Mosquitto

    with Mosquitto() as broker:
        signed = lat.daemon_latency(broker, args.cards, False, args.dir, args.gap, True)
        unsigned = lat.daemon_latency(broker, args.cards, False, args.dir, args.gap, False)
    floor = lat.fsync_floor(args.cards, args.dir, args.gap)
    print(f"4. card read -> subscriber, per_card, whole daemon, {args.cards} cards "
          f"{args.gap * 1000:.0f} ms apart:")
    print(f"     signed:   {lat.fmt(signed)}")
    print(f"     unsigned: {lat.fmt(unsigned)}")
    print(f"     floor (one bare journal append with fsync): {lat.fmt(floor)}")
    mean_added = statistics.fmean(added) * 1e3
    print(f"signing adds {mean_added:.3f} ms of CPU per event on average (target < 0.2 ms):"
          f" {'OK' if mean_added < 0.2 else 'OVER TARGET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
