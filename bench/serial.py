"""Firmware bridge figures: decoder throughput, and card_exit latency over a real pty.

    python bench/serial.py [--frames N] [--cards N]

1. Decoded frames per second: a recorded-looking stream (card exits, heartbeats,
   buttons, scanner reads) fed to the protocol's StreamDecoder in 4 KiB chunks, one
   core, framing + CRC + message decode. Also the framing layer alone.
2. card_exit latency: the device simulator writes a card_exit frame to its pty master
   and the Link, reading the slave through pyserial, decodes it and puts a CardExit on a
   queue.Queue; the figure is from just before the device's write to the moment the
   consumer thread has it from ``queue.get()`` (so it includes the consumer's wake-up).
   Cards are dealt one at a time with 0.5-2 ms between them. Target: p99 < 2 ms.
3. The control, sampled alternately with 2 (same load): the same bytes through a bare
   pty to a reader thread and a queue, no link: the kernel's and the hand-off's share.
4. Protocol 1.1 with the default [serial] settings and a 0.2 s heartbeat: how long an
   event the shoe can never deliver (a 513-byte event it re-sends as it is, and an
   event lost from its buffer) holds up the next one, and how many replay requests it
   costs (1.0 host: ~10 s and 391 requests for the oversize event; the lost one
   forever); and how long after a card exit with no scanner read the daemon's pairing
   reports it unreadable (the 500 ms window on the device's clock, judged at the next
   heartbeat).
"""

from __future__ import annotations

# ruff: noqa: E402  (imports follow the sys.path fix below)
import os
import sys

# Run as ``python bench/serial.py``, this file's directory comes first on sys.path and
# this file would shadow pyserial's ``serial`` package: drop that entry before importing.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import argparse
import queue
import random
import select
import statistics
import threading
import time
import tty

from firmware_bridge.config import SerialConfig
from firmware_bridge.events import CardExit, LinkUp
from firmware_bridge.framing import FrameDecoder
from firmware_bridge.link import Link
from firmware_bridge.protocol import (
    ButtonReport,
    CardExitReport,
    CardReadReport,
    Heartbeat,
    StreamDecoder,
    encode,
)
from firmware_bridge.simulator import DeviceSimulator


def _stream(n: int) -> bytes:
    rng = random.Random(1)
    parts = []
    t = 1_000_000
    seq = 0
    for _ in range(n):
        t += rng.randrange(100_000, 900_000)
        r = rng.random()
        if r < 0.6:
            seq += 1
            parts.append(encode(CardExitReport(t, rng.randrange(20_000, 60_000)), seq))
        elif r < 0.8:
            parts.append(encode(Heartbeat(t, 2, 80, max(1, seq - 63)), seq))
        elif r < 0.9:
            seq += 1
            parts.append(encode(ButtonReport(t, rng.randrange(1, 5)), seq))
        else:
            seq += 1
            parts.append(encode(CardReadReport(t, 1, b"QH-%06d" % seq), seq))
    return b"".join(parts)


def decode_rate(n: int) -> tuple[float, float, float]:
    stream = _stream(n)
    chunks = [stream[i : i + 4096] for i in range(0, len(stream), 4096)]
    best_full = best_framing = 0.0
    for _ in range(3):
        dec = StreamDecoder()
        t0 = time.perf_counter()
        got = sum(len(dec.feed(c)) for c in chunks)
        best_full = max(best_full, got / (time.perf_counter() - t0))
        assert got == n, (got, n)
        fdec = FrameDecoder()
        t0 = time.perf_counter()
        got = sum(len(fdec.feed(c)) for c in chunks)
        best_framing = max(best_framing, got / (time.perf_counter() - t0))
    return best_full, best_framing, len(stream) / n


def latency(cards: int) -> tuple[list[float], list[float], list[float], dict[str, int]]:
    rng = random.Random(2)
    q: queue.Queue[object] = queue.Queue()
    with DeviceSimulator(heartbeat_interval=0.2) as sim:
        written: list[int] = []
        sim.on_event_write = lambda _wire: written.append(time.monotonic_ns())
        cfg = SerialConfig(port=sim.path, poll_interval=0.05)
        with Link(cfg, q) as link:
            link.wait_up(timeout=5)
            assert isinstance(q.get(timeout=5), LinkUp)
            to_get: list[float] = []
            to_decode: list[float] = []
            control: list[float] = []
            bare = BarePty()
            try:
                for i in range(cards + 50):  # the first 50 warm up
                    written.clear()
                    sim.card_exit()
                    ev = q.get(timeout=5)
                    got = time.monotonic_ns()
                    assert isinstance(ev, CardExit), ev
                    time.sleep(rng.uniform(0.0005, 0.002))
                    floor = bare.sample()
                    time.sleep(rng.uniform(0.0005, 0.002))
                    if i >= 50:
                        to_get.append((got - written[0]) / 1e6)
                        to_decode.append((ev.rx_ns - written[0]) / 1e6)
                        control.append(floor)
            finally:
                bare.close()
            stats = link.stats
    return to_get, to_decode, control, stats


class BarePty:
    """The control: the same frame written to a bare pty master, read from the slave by
    a thread blocked in select() and handed over through a queue.Queue: the link's path
    without pyserial, decoding or link logic, so what the kernel and the thread
    hand-off alone cost. Sampled alternately with the link, under the same load."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.wire = encode(CardExitReport(1, 40_000), 1)
        self.handed: queue.Queue[bytes] = queue.Queue()
        self.stop_r, self.stop_w = os.pipe()
        self.thread = threading.Thread(target=self._reader, daemon=True)
        self.thread.start()

    def _reader(self) -> None:
        while True:
            ready, _, _ = select.select([self.slave, self.stop_r], [], [])
            if self.stop_r in ready:
                return
            self.handed.put(os.read(self.slave, 4096))

    def sample(self) -> float:
        t0 = time.monotonic_ns()
        os.write(self.master, self.wire)
        got = b""
        while len(got) < len(self.wire):
            got += self.handed.get(timeout=5)
        return (time.monotonic_ns() - t0) / 1e6

    def close(self) -> None:
        os.write(self.stop_w, b"x")
        self.thread.join()
        for fd in (self.master, self.slave, self.stop_r, self.stop_w):
            os.close(fd)


def unfillable(rounds: int) -> tuple[list[float], list[float], list[int]]:
    """Seconds from an undeliverable event to the next event's delivery (oversize, lost),
    and the replay requests each cost."""
    oversize: list[float] = []
    lost: list[float] = []
    requests: list[int] = []
    for kind, out in (("oversize", oversize), ("lost", lost)):
        for _ in range(rounds):
            q: queue.Queue[object] = queue.Queue()
            with DeviceSimulator(heartbeat_interval=0.2) as sim, \
                    Link(SerialConfig(port=sim.path), q) as link:
                link.wait_up(timeout=5)
                q.get(timeout=5)
                t0 = time.monotonic()
                if kind == "oversize":
                    sim.oversize_event(513)
                else:
                    sim.lose_next(1)
                    sim.card_exit()
                sim.card_exit()
                while not isinstance(q.get(timeout=30), CardExit):
                    pass
                out.append(time.monotonic() - t0)
                requests.append(link.stats["replays_requested"])
    return oversize, lost, requests


def unread_delay(cards: int) -> list[float]:
    """Seconds from a card exit with no read to the pairing's UnreadableCard."""
    from shoe_controller.daemon_inputs import SerialInput
    from shoe_controller.vision.barcode import BarcodeMapping
    from shoe_controller.vision.config import BarcodeConfig

    got: queue.Queue[tuple[object, float]] = queue.Queue()
    delays = []
    with DeviceSimulator(heartbeat_interval=0.2) as sim:
        serial = SerialInput(SerialConfig(port=sim.path, exclusive=False),
                             mapping=BarcodeMapping(BarcodeConfig()))
        serial.start(lambda inp, origin: got.put((inp, time.monotonic())))
        try:
            serial.link_up.wait(5)
            for _ in range(cards):
                t0 = time.monotonic()
                sim.card_exit()
                _inp, t = got.get(timeout=5)
                delays.append(t - t0)
        finally:
            serial.stop()
    return delays


def pct(xs: list[float], p: float) -> float:
    return statistics.quantiles(xs, n=1000, method="inclusive")[int(p * 10) - 1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=200_000)
    ap.add_argument("--cards", type=int, default=2000)
    args = ap.parse_args(argv)

    full, framing, size = decode_rate(args.frames)
    print(f"decode: {full:,.0f} frames/s (framing + CRC + messages; mean frame {size:.1f} bytes)")
    print(f"        {framing:,.0f} frames/s (framing + CRC only)")

    to_get, to_decode, floor, stats = latency(args.cards)
    print(
        f"card_exit latency, device write -> daemon queue.get(), {len(to_get)} cards over a pty: "
        f"p50 {pct(to_get, 50):.3f} ms  p99 {pct(to_get, 99):.3f} ms  max {max(to_get):.3f} ms "
        f"(target p99 < 2 ms: {'met' if pct(to_get, 99) < 2.0 else 'NOT met'})"
    )
    print(
        f"                  device write -> frame decoded on the host:           "
        f"p50 {pct(to_decode, 50):.3f} ms  p99 {pct(to_decode, 99):.3f} ms"
    )
    print(
        f"control: bare pty -> reader thread -> queue.get(), no link:          "
        f"p50 {pct(floor, 50):.3f} ms  p99 {pct(floor, 99):.3f} ms"
    )
    lost = stats["events_lost"] + stats["duplicates"] + stats["bad_frames"]
    print(f"link: {stats['events']} events, {lost} lost/duplicate/bad frames")
    oversize, lost_ev, requests = unfillable(5)
    print(f"1.1 unfillable gap, default settings: a 513-byte event holds the next one up "
          f"{1000 * statistics.median(oversize):.0f} ms (max {1000 * max(oversize):.0f}), "
          f"an event lost from the shoe's buffer {1000 * statistics.median(lost_ev):.0f} ms "
          f"(max {1000 * max(lost_ev):.0f}); replay requests each: {min(requests)}-"
          f"{max(requests)}; reported once as events_lost")
    delays = unread_delay(10)
    print(f"1.1 exit without a read -> UnreadableCard: median "
          f"{1000 * statistics.median(delays):.0f} ms, max {1000 * max(delays):.0f} ms "
          f"(window 500 ms on the device clock + up to one 200 ms heartbeat)")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs, load average {load} (latency tails track the load)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
