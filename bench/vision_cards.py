"""Read one design's frames of chosen cards and list every frame not read right.

For looking at a weak card: the design's calibration frames are learned as
``bench/vision.py`` learns them (an external deck through ``shoe-calibrate learn``), then
``-n`` frames of each card are rendered in the guided or full range (seed ``S * 1_000_003
+ i``, as the bench seeds its frames) and read; each rejection or misread is printed with
its reason, and with ``--dump DIR`` written as a PNG file.

    python bench/vision_cards.py ext:bellot --cards KS -n 150 --seed 9090
    python bench/vision_cards.py ext:bellot --cards KS KC --range full --dump /tmp/ks
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import vision as bench  # bench/vision.py: its learning and ranges

from calibration.evaluate import verdict
from shoe_controller.sim import render


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("design", nargs="?", default="classic",
                    help="a render.py design or ext:<deck> (classic)")
    ap.add_argument("--cards", nargs="*", help="card codes (default: all 52)")
    ap.add_argument("--range", default="guided", choices=sorted(bench.RANGES))
    ap.add_argument("-n", type=int, default=20, help="frames per card (20)")
    ap.add_argument("--seed", type=int, default=777)
    ap.add_argument("--dump", default="", help="write the frames not read right here")
    a = ap.parse_args()
    cv2.setNumThreads(1)
    reader, took, why, _path = bench.learn_style(a.design, Path(tempfile.mkdtemp()))
    if reader is None:
        print(f"{a.design}: learning failed: {why}")
        return 1
    print(f"{a.design}: learned in {took:.1f} s")
    bad: Counter[tuple[str, str]] = Counter()
    cards = a.cards or list(render.CARD_CODES)
    for card in cards:
        for i in range(a.n):
            seed = a.seed * 1_000_003 + i
            frame, _truth = render.render_frame(card, a.design, bench.RANGES[a.range], seed)
            read = reader.read(frame)
            got = verdict(read)
            if got == card:
                continue
            print(f"{card} seed={seed} -> {got} {getattr(read, 'reason', '')}")
            bad[(card, got)] += 1
            if a.dump:
                Path(a.dump).mkdir(parents=True, exist_ok=True)
                name = f"{a.design.replace(':', '-')}_{card}_{seed}.png"
                cv2.imwrite(str(Path(a.dump) / name), frame)
    total = len(cards) * a.n
    print(f"{total - sum(bad.values())} of {total} read right; not right: "
          + (", ".join(f"{c} as {g} x{k}" for (c, g), k in sorted(bad.items())) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
