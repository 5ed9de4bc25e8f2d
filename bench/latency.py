"""Daemon figures: card read -> MQTT message at a subscriber, peak RSS, time to READY.

Printed:
1. card read -> casino message received by a subscriber on loopback, ``per_card``
   release, through the whole daemon (core loop: decide + protection projection +
   journal append with fsync + release + signature + outbox + paho -> mosquitto ->
   subscriber): p50 / p99 / max, measured two ways:
   a. from the moment the read enters the daemon's input queue (what the camera's pass
      tracker or the serial adapter hands over);
   b. from the moment the shoe's scanner event is written on the pty by the device
      simulator (adds the serial link: framing, CRC, the Link thread, exit/read pairing).
   Cards are dealt one at a time, each a new card of a real shuffled shoe through the
   real game core: at ``--gap`` (0.05 s, six times a fast dealer's pace: the loop is
   idle between cards, as in play; this is the figure for the target) and back to back
   (``--stress-gap``). The subscriber runs in a process of its own, as displays and
   casino systems do (in the daemon's process its network thread took interpreter time
   from the daemon and its wait was counted in the figure).
2. the daemon's peak RSS: `shoe-controller simulate` (daemon + device simulator +
   virtual dealer + publisher, one 8-deck shoe) as a child process, from
   getrusage(RUSAGE_CHILDREN).ru_maxrss; targets: p99 <= 10 ms, RSS <= 150 MB.
   Also the floor under both: one bare journal append (SQLite WAL, fsync) on that disk.
3. time from start to READY=1 (sd_notify on a real unix socket): a fresh state
   directory, and a restart that verifies and replays a journal of ``--ready-shoes``
   full shoes (default 1).
4. what the device's signatures add to 1a (issue 13): signed, unsigned (``--unsigned``)
   and the bare fsync floor, interleaved over ``--rounds`` rounds (so a load that comes
   and goes on a shared machine falls on all three alike), each at the dealer pace:
   p50 / p99 per round, and the ratios p99 signed / floor, unsigned / floor and
   signed / unsigned (the median over the rounds; a ratio is what carries from a loaded
   machine to another, the milliseconds are the machine's); and the CPU time this
   process spent per card, signed and unsigned (the daemon's own cost, which a loaded
   machine does not stretch). ``--signing-only``: just 4.

Needs mosquitto (apt-get install mosquitto).
Run: .venv/bin/python bench/latency.py [--cards N] [--dir DIR] [--gap S] [--stress-gap S]
                                        [--ready-shoes N] [--rounds N] [--signing-only]
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# bench/ holds serial.py (the bridge's benchmark): off the path, or `import serial`
# inside pyserial's users would find it instead of pyserial.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))  # tests.support.broker: a private mosquitto on loopback

from shoe_controller.daemon import Daemon  # noqa: E402
from shoe_controller.game.inputs import CardSeen, NewShoe  # noqa: E402
from shoe_controller.game.rules import Rules  # noqa: E402
from shoe_controller.journal import Journal  # noqa: E402
from shoe_controller.keys import SigningKey  # noqa: E402
from shoe_controller.publish.config import MqttConfig  # noqa: E402
from shoe_controller.publish.probe import SubscriberProcess, percentiles  # noqa: E402
from shoe_controller.publish.publisher import Publisher  # noqa: E402
from shoe_controller.sim import shuffled_shoe  # noqa: E402
from tests.support.broker import Mosquitto  # noqa: E402


def fmt(lat: list[float]) -> str:
    p = percentiles(lat, (50, 99))
    return (f"n={len(lat)}  p50 {p[50] * 1e3:.2f} ms  p99 {p[99] * 1e3:.2f} ms  "
            f"max {max(lat) * 1e3:.2f} ms")


class CardDealtSeqs:
    """Observer: the seq of each journaled card_dealt, in order (the thing we time)."""

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.cond = threading.Condition()

    def __call__(self, entries: list) -> None:
        with self.cond:
            self.seqs += [e.seq for e in entries if e.type == "card_dealt"]
            self.cond.notify_all()

    def wait_count(self, n: int, timeout: float = 10.0) -> int:
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.seqs) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"card {n} was not journaled within {timeout} s")
                self.cond.wait(left)
            return self.seqs[n - 1]


def daemon_latency(broker: Mosquitto, cards: int, via_serial: bool,
                   directory: str | None = None, gap: float = 0.05,
                   signed: bool = True, cpu: list[float] | None = None) -> list[float]:
    """Seconds from a card read to its card_dealt message at a subscriber (``signed``:
    with the device's Ed25519 signatures, as on a table; off: --unsigned). ``cpu``: gets
    this process's CPU seconds per timed card (set-up and warm-up left out)."""
    from firmware_bridge.config import SerialConfig
    from firmware_bridge.simulator import DeviceSimulator
    from shoe_controller.daemon_inputs import SerialInput
    from shoe_controller.vision.barcode import BarcodeMapping
    from shoe_controller.vision.config import BarcodeConfig

    work = tempfile.mkdtemp(prefix="bench-latency-", dir=directory)
    rules = Rules(burn="none")  # results confirmed at once: every card is due
    journal = Journal.open(os.path.join(work, "journal.sqlite3"), table_id="BENCH")
    mqtt = MqttConfig(url=broker.url, release="per_card")
    publisher = Publisher(journal, mqtt, "BENCH",
                          key=SigningKey.generate() if signed else None)
    recorder = SubscriberProcess("127.0.0.1", broker.port, publisher.topics.casino_events)
    sim = serial = None
    sources = []
    if via_serial:
        sim = DeviceSimulator("BENCH")
        serial = SerialInput(SerialConfig(port=sim.start(), exclusive=False),
                             mapping=BarcodeMapping(BarcodeConfig()))
        sources = [serial]
    daemon = Daemon(rules=rules, journal=journal, publisher=publisher, sources=sources)
    seqs = CardDealtSeqs()
    daemon.observers.append(seqs)
    daemon.start()
    loop = threading.Thread(target=daemon.run, daemon=True)
    loop.start()
    if serial is not None and not serial.link_up.wait(10):
        raise RuntimeError("the simulated shoe's link did not come up")
    latencies: list[float] = []
    deck = iter(shuffled_shoe("bench", 1) * 4)
    warmup = 20
    daemon.submit(NewShoe())
    dealt = 0
    try:
        while len(latencies) < cards:
            card = next(deck)
            t0 = time.perf_counter()
            if sim is not None:
                sim.card_exit()
                sim.card_read(f"D1-{card.code}")
            else:
                daemon.submit(CardSeen(card, None, "bench"))
            dealt += 1
            seq = seqs.wait_count(dealt)
            arrived = recorder.wait_for(seq)
            if dealt > warmup:
                latencies.append(arrived - t0)
            elif dealt == warmup:
                cpu0 = time.process_time()
            time.sleep(gap)  # between a dealer's cards (a real one: 0.3 s or more)
        if cpu is not None:
            cpu.append((time.process_time() - cpu0) / len(latencies))
    finally:
        daemon.stop()
        loop.join(5)
        daemon.close(flush_timeout=1)
        recorder.close()
        if sim is not None:
            sim.stop()
    return latencies


def fsync_floor(n: int, directory: str | None, gap: float) -> list[float]:
    """Seconds per bare journal append of one event (SQLite WAL + fsync) on the same disk,
    ``gap`` seconds apart: the floor under the figures above, for reading them. (At the
    same pace: on this VM an fsync after 50 ms idle takes twice one back to back.)"""
    work = tempfile.mkdtemp(prefix="bench-fsync-", dir=directory)
    out = []
    with Journal.open(os.path.join(work, "journal.sqlite3"), table_id="BENCH") as j:
        for i in range(n):
            t0 = time.perf_counter()
            j.append([{"type": "card_dealt", "shoe": 1, "round": i + 1, "hand": "player",
                       "position": 1, "card": "QH", "orientation": None}])
            out.append(time.perf_counter() - t0)
            time.sleep(gap)
    return out


def peak_rss_mb(broker: Mosquitto) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of a one-shoe `simulate` child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "-m", "shoe_controller.cli", "simulate", "--quiet",
                        "--state-dir", d, "--broker", broker.url, "--shoes", "1"],
                       check=True, capture_output=True, cwd=ROOT, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(after, before) / 1024, time.monotonic() - t0


def time_to_ready(broker: Mosquitto, state_dir: str, shoes: int) -> float:
    """Seconds from spawning `simulate` to its READY=1 datagram."""
    sock_path = os.path.join(tempfile.mkdtemp(), "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(sock_path)
        sock.settimeout(120)
        env = dict(os.environ, NOTIFY_SOCKET=sock_path)
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "shoe_controller.cli", "simulate", "--quiet",
             "--state-dir", state_dir, "--broker", broker.url, "--shoes", str(shoes)],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                msg = sock.recv(4096)
                if msg.startswith(b"READY=1"):
                    ready = time.monotonic() - t0
                    break
        finally:
            proc.wait(600)
    return ready


def signing_rounds(broker: Mosquitto, cards: int, directory: str | None, gap: float,
                   rounds: int) -> None:
    """Print section 4: signed, unsigned and the fsync floor, interleaved."""
    import statistics

    print(f"  signed vs unsigned vs the fsync floor, {cards} cards {gap * 1e3:g} ms apart, "
          f"from the daemon's input queue, {rounds} interleaved round(s):")
    ratios: dict[str, list[float]] = {"signed / floor": [], "unsigned / floor": [],
                                      "signed / unsigned": []}
    p50s: dict[str, list[float]] = {"signed": [], "unsigned": [], "floor": []}
    p99s: dict[str, list[float]] = {"signed": [], "unsigned": [], "floor": []}
    cpu: dict[str, list[float]] = {"signed": [], "unsigned": []}
    for r in range(rounds):
        got = {}
        for name in ("signed", "unsigned"):
            got[name] = daemon_latency(broker, cards, False, directory, gap,
                                       signed=name == "signed", cpu=cpu[name])
        got["floor"] = fsync_floor(cards, directory, gap)
        for name, lat in got.items():
            p = percentiles(lat, (50, 99))
            p50s[name].append(p[50])
            p99s[name].append(p[99])
            print(f"    round {r + 1} {name:9s} {fmt(lat)}")
        s99, u99, f99 = (p99s[k][-1] for k in ("signed", "unsigned", "floor"))
        ratios["signed / floor"].append(s99 / f99)
        ratios["unsigned / floor"].append(u99 / f99)
        ratios["signed / unsigned"].append(s99 / u99)
    med = statistics.median
    print("    median over the rounds: "
          + "; ".join(f"{k} p50 {med(p50s[k]) * 1e3:.2f} ms p99 {med(p99s[k]) * 1e3:.2f} ms"
                      for k in ("signed", "unsigned", "floor")))
    print("    p99 ratios (median over the rounds): "
          + "; ".join(f"{k} {med(v):.2f}" for k, v in ratios.items()))
    cs, cu = med(cpu["signed"]), med(cpu["unsigned"])
    print(f"    CPU of this process (daemon, publisher, paho; the subscriber is apart) per "
          f"card: signed {cs * 1e3:.2f} ms, unsigned {cu * 1e3:.2f} ms, signing adds "
          f"{(cs - cu) * 1e3:.2f} ms (median over the rounds; CPU time does not stretch "
          "with the load, the milliseconds above do)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cards", type=int, default=400, help="cards timed per path")
    parser.add_argument("--dir", help="where the timed journals live (default: the system "
                        "temp dir); use the state directory's disk (an SD card on a Pi): "
                        "the fsync of each append is most of the latency")
    parser.add_argument("--gap", type=float, default=0.05,
                        help="seconds between a card's arrival at the subscriber and the "
                        "next card (default 0.05: six times faster than a fast dealer, "
                        "who needs 0.3 s or more; the loop is idle between cards, as in "
                        "play)")
    parser.add_argument("--stress-gap", type=float, default=0.002,
                        help="the same, back to back (default 0.002): the core loop's "
                        "idle-time work (a round's analysis, the display state) then "
                        "overlaps the next card")
    parser.add_argument("--ready-shoes", type=int, default=1,
                        help="shoes in the journal the restart -> READY figure replays")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds of signed / unsigned / floor (default 3)")
    parser.add_argument("--signing-only", action="store_true",
                        help="only the signed vs unsigned vs floor section")
    args = parser.parse_args()
    with Mosquitto() as broker:
        if args.signing_only:
            print("== bench/latency.py: card read -> subscriber (per_card), loopback "
                  "mosquitto")
            signing_rounds(broker, args.cards, args.dir, args.gap, args.rounds)
            return 0
        print("== bench/latency.py: card read -> subscriber (per_card), loopback mosquitto,")
        print(f"  subscriber in a process of its own; journal directory: "
              f"{args.dir or tempfile.gettempdir()}")
        for label, gap in (("dealer pace", args.gap), ("back to back", args.stress_gap)):
            print(f"  {label}, {gap * 1e3:g} ms between cards:")
            lat = daemon_latency(broker, args.cards, via_serial=False, directory=args.dir,
                                 gap=gap)
            print(f"    from the daemon's input queue:       {fmt(lat)}"
                  + ("   (target p99 <= 10 ms)" if gap == args.gap else ""))
            lat = daemon_latency(broker, args.cards, via_serial=True, directory=args.dir,
                                 gap=gap)
            print(f"    from the shoe's scanner event (pty): {fmt(lat)}")
            print(f"    (floor: one bare journal append with fsync on that disk: "
                  f"{fmt(fsync_floor(args.cards, args.dir, gap))})")
        rss, secs = peak_rss_mb(broker)
        print(f"  daemon peak RSS (simulate, 1 shoe of 8 decks in {secs:.1f} s): {rss:.1f} MB "
              "(target <= 150 MB)")
        with tempfile.TemporaryDirectory() as d:
            fresh = time_to_ready(broker, d, shoes=args.ready_shoes)
            with Journal.open(os.path.join(d, "journal.sqlite3"), readonly=True) as j:
                events = j.last_seq
            again = time_to_ready(broker, d, shoes=args.ready_shoes)
        print(f"  start -> READY=1: fresh state dir {fresh:.2f} s; restart verifying and "
              f"replaying a {events}-event journal {again:.2f} s (process start included)")
        signing_rounds(broker, args.cards, args.dir, args.gap, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
