"""`shoe-controller replay` on large inputs: peak memory (RSS) and time, to show it
streams (issue 14: 12 MB of tokens once took 1.26 GB).

    .venv/bin/python bench/replay.py            # 100 MB inputs (a few minutes)
    .venv/bin/python bench/replay.py --mb 10    # quicker

Inputs, written to a temporary folder (deleted after):

- ``check``: ``--mb`` MB of properly shuffled 8-deck shoes (each card once, the cut
  card among the last cards) with one bad token at the very end: the first pass reads
  and checks every token of it, then refuses the file (exit 2, nothing printed);
- ``full``: 20 such shoes played out in full (exact odds after every round), then
  ``PAUSE RESUME`` supervisor pairs up to ``--mb`` MB: both passes over the whole file,
  every event printed as JSON (to /dev/null);
- ``small``: the 20 shoes alone: the baseline.

Peak RSS is the child's own (``wait4``; this script's own process stays small).
Bounded memory means: the same peak whatever the size.

Measured 2026-12-01 on the shared 2-core development machine (8 sessions busy on it,
so the times are long; the memory is what counts)::

    small     0.020 MB  exit 0     44.1 s  peak RSS 50 MiB
    check   100.001 MB  exit 2    853.3 s  peak RSS 19 MiB
    full    100.008 MB  exit 0   1210.2 s  peak RSS 50 MiB

(the replay before streaming: 247 MiB on 2 MB of tokens, 1.26 GB on 12 MB.)
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RANKS = "A23456789TJQK"
SUITS = "SHDC"


def shoe_line(rng: random.Random) -> str:
    deck = [r + s for r in RANKS for s in SUITS] * 8
    rng.shuffle(deck)
    cut = rng.randint(300, 380)
    return " ".join(["SHOE", *deck[:cut], "CUT", *deck[cut:cut + 12]]) + "\n"


def write_inputs(d: Path, mb: float) -> dict[str, Path]:
    rng = random.Random(14)
    target = int(mb * 1024 * 1024)
    shoes = "".join(shoe_line(rng) for _ in range(20))
    paths = {"small": d / "small.txt", "full": d / "full.txt", "check": d / "check.txt"}
    paths["small"].write_text(shoes)
    with paths["full"].open("w") as f:
        f.write(shoes)
        pair = "PAUSE RESUME\n" * 4096
        size = len(shoes)
        while size < target:
            f.write(pair)
            size += len(pair)
    with paths["check"].open("w") as f:
        size = 0
        while size < target:
            line = shoe_line(rng)
            f.write(line)
            size += len(line)
        f.write("QX\n")  # the one bad token, at the very end
    return paths


def measure(path: Path) -> tuple[int, float, int]:
    """(exit status, seconds, peak RSS in MiB) of `replay --json FILE > /dev/null`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t = time.monotonic()
    with open(os.devnull, "w") as null:
        proc = subprocess.Popen([sys.executable, "-m", "shoe_controller.cli", "replay",
                                 "--json", str(path)], stdout=null,
                                stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.monotonic() - t, usage.ru_maxrss // 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=100.0, help="size of the large inputs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        paths = write_inputs(Path(tmp), args.mb)
        print(f"replay, peak RSS (machine: {os.cpu_count()} cores, shared)")
        for name in ("small", "check", "full"):
            size = paths[name].stat().st_size / 1024 / 1024
            rc, secs, rss = measure(paths[name])
            print(f"  {name:5s} {size:9.3f} MB  exit {rc}  {secs:7.1f} s  "
                  f"peak RSS {rss} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
