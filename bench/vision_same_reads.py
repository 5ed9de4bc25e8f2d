"""Do two versions of the index reader read the same? For speed work on the reader: a
change that is meant to be faster and nothing else must give the same verdict on every
frame (kind, card, orientation, confidence to the last bit, rejection reason) and learn
the same profile (templates, labels, geometry, colours: a sha256 of them).

The frames are rendered once by this checkout's renderer (so both versions read the
very same pixels): per design the 53 calibration frames, then guided, full-range and
grey frames and a few frames with two cards in view. Each version (this checkout, and
``--base``, a git revision exported to a temporary folder) learns each design and reads
every frame in a process of its own (the two at the same time); the verdicts are
compared one by one. Then the time: one process (pinned to ``--core``) holds both
readers (the base's package imported under another name, ``shoe_controller_base``),
each with the profile its own version learned, and reads every frame with both, in
turn, ``--repeat`` times (which goes first alternates); per frame and version the least
process CPU time counts (OpenCV on one thread). Reading the same frame side by side in
one process is what makes the two times comparable on a busy machine (two processes
one after the other, or even at the same time, are not: the load they meet differs).

    python bench/vision_same_reads.py --base main --designs classic dejavu-jumbo
    nice -n 10 python bench/vision_same_reads.py --base HEAD~3   # default designs

Exit status 1 when any verdict or profile differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DESIGNS = ("classic", "four-colour", "dejavu-jumbo", "serif-jumbo-border",
           "condensed-jumbo-art", "liberation-serif-border")

_RENDER = """
import sys, cv2, numpy as np
cv2.setNumThreads(1)
from shoe_controller.sim import render
from shoe_controller.sim.render import CALIBRATION, FULL, GUIDED, Pose
out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for style in sys.argv[4:]:
    cal = [(lab, render.render_frame(lab, style, CALIBRATION, seed=i, pose=Pose())[0])
           for i, lab in enumerate((*render.CARD_CODES, "CUT"))]
    frames, names = [], []
    for rng, deg, k, grey in (("guided", GUIDED, n, False), ("full", FULL, n, False),
                              ("grey", FULL, max(n // 10, 2), True)):
        for lab in render.evaluation_labels(k, 7 + seed + len(names)):
            frames.append(render.render_frame(lab, style, deg, seed=5000 + seed + len(names),
                                              grey=grey)[0])
            names.append(f"{rng}:{lab}")
    for k in range(4):
        rng = np.random.default_rng(k)
        a, b = rng.choice(render.CARD_CODES, 2, replace=False)
        f = render.empty_background(rng)
        f = render.compose_frame(render.draw_card_face(a, style), Pose((200.0, 200.0)), f)
        f = render.compose_frame(render.draw_card_face(b, style),
                                 Pose((450.0, 260.0), angle=5.0), f)
        frames.append(render.degrade(f, GUIDED, rng))
        names.append(f"two:{a}{b}")
    np.savez_compressed(f"{out}/{style}.npz", cal_labels=np.array([c[0] for c in cal]),
                        cal=np.array([c[1] for c in cal]), names=np.array(names),
                        **{f"f{i}": f for i, f in enumerate(frames)})
"""

_READ = """
import sys, json, time, hashlib, cv2, numpy as np
cv2.setNumThreads(1)
from shoe_controller.vision.index_learn import LearnError, learn_profile
from shoe_controller.vision.index_reader import IndexReader
corpus, repeat = sys.argv[1], int(sys.argv[2])
res = {}
for style in sys.argv[3:]:
    d = np.load(f"{corpus}/{style}.npz")
    try:
        prof = learn_profile(dict(zip(d["cal_labels"].tolist(), d["cal"])), source=style)
    except LearnError as e:
        res[style] = {"learn_error": str(e)}
        continue
    h = hashlib.sha256()
    for a in (prof.rank_templates, prof.suit_templates, prof.rank_labels, prof.suit_labels):
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(json.dumps([prof.geometry, prof.colours, prof.thresholds], sort_keys=True,
                        default=str).encode())
    reader = IndexReader(prof)
    reads, ms = [], []
    for i in range(len(d["names"])):
        f = d[f"f{i}"]
        best = 1e9
        for _ in range(repeat):
            c = time.process_time()
            x = reader.read(f)
            best = min(best, time.process_time() - c)
        ms.append(best * 1e3)
        reads.append([x.kind, x.card.code if x.card else None, x.orientation,
                      repr(x.confidence), x.reason])
    res[style] = {"profile": h.hexdigest(), "reads": reads, "names": d["names"].tolist(),
                  "ms": ms}
print(json.dumps(res))
"""


_AB = """
import sys, json, time, cv2, numpy as np
cv2.setNumThreads(1)
sys.path.insert(0, sys.argv[1])
from shoe_controller.vision.index_learn import learn_profile as learn_new
from shoe_controller.vision.index_reader import IndexReader as ReaderNew
from shoe_controller_base.vision.index_learn import learn_profile as learn_old
from shoe_controller_base.vision.index_reader import IndexReader as ReaderOld
corpus, repeat = sys.argv[2], int(sys.argv[3])
res = {}
for style in sys.argv[4:]:
    d = np.load(f"{corpus}/{style}.npz")
    cal = dict(zip(d["cal_labels"].tolist(), d["cal"]))
    try:
        readers = (ReaderOld(learn_old(cal, source=style)),
                   ReaderNew(learn_new(cal, source=style)))
    except Exception:  # either version refuses the design: no time for it
        continue
    ms = ([], [])
    for i in range(len(d["names"])):
        f = d[f"f{i}"]
        best = [1e9, 1e9]
        for r in range(repeat):
            for k in ((0, 1) if (i + r) % 2 == 0 else (1, 0)):
                c = time.process_time()
                readers[k].read(f)
                best[k] = min(best[k], time.process_time() - c)
        ms[0].append(best[0] * 1e3)
        ms[1].append(best[1] * 1e3)
    res[style] = ms
print(json.dumps(res))
"""


def _rename_package(src: Path, dest: Path) -> None:
    """A copy of the package ``src`` (shoe_controller) named ``dest.name``, its imports
    of itself renamed, so that two versions can be imported into one process."""
    shutil.copytree(src, dest)
    for f in dest.rglob("*.py"):
        f.write_text(re.sub(r"\bshoe_controller(?=[\s.])", dest.name, f.read_text()))


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1"}


def _run(tree: Path, script: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", script, *args], cwd=tree, env=_env(tree),
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: {out.stderr.strip()[-2000:]}")
    return out.stdout


def _run_both(trees: tuple[Path, Path], script: str, *args: str) -> tuple[str, str]:
    """``script`` in each tree at the same time."""
    procs = [subprocess.Popen([sys.executable, "-c", script, *args], cwd=t,
                              env=_env(t), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for t in trees]
    outs = []
    for t, proc in zip(trees, procs, strict=True):
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"{t}: {err.strip()[-2000:]}")
        outs.append(out)
    return outs[0], outs[1]


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q / 100 * (len(s) - 1)))]


def _word(read: list[object]) -> str:
    """A read ([kind, card, orientation, confidence, reason]) in one word.

    >>> _word(["card", "9C", "up", "0.9", ""]), _word(["reject", None, None, "0.0", "x"])
    ('9C', 'REJECT')
    """
    kind = read[0]
    if kind == "card":
        return str(read[1])
    return {"cut": "CUT", "empty": "NONE"}.get(str(kind), "REJECT")


def _verdict_changes(style: str, base: dict[str, list], new: dict[str, list]) -> int:
    """Print how the verdicts of one design moved against the truth (the label in each
    frame's name; a frame of two cards is right as either card, whose index may be the
    only one in view, or rejected); the count of frames the change made worse (read
    wrong, or rejected where the base read right)."""
    moves: dict[str, int] = {}
    worse = 0
    lines = []
    for name, r1, r2 in zip(base["names"], base["reads"], new["reads"], strict=True):
        kind, label = name.split(":", 1)
        truth = {label[:2], label[2:], "REJECT"} if kind == "two" else {label}
        a, b = _word(r1), _word(r2)
        ka = "right" if a in truth else "rejected" if a == "REJECT" else "WRONG"
        kb = "right" if b in truth else "rejected" if b == "REJECT" else "WRONG"
        moves[f"{ka} -> {kb}"] = moves.get(f"{ka} -> {kb}", 0) + 1
        if kb == "WRONG" or (ka == "right" and kb != "right"):
            worse += 1
            lines.append(f"    {name}: {r1} -> {r2}")
        elif ka == "WRONG":
            lines.append(f"    {name} (the base read it wrong): {r1} -> {r2}")
    print(f"{style:28} {len(base['reads'])} frames: "
          + ", ".join(f"{k} {v}" for k, v in sorted(moves.items())))
    for line in lines[:8]:
        print(line)
    return worse


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, help="git revision to compare with (e.g. main)")
    p.add_argument("--designs", nargs="+", default=list(DESIGNS))
    p.add_argument("--frames", type=int, default=80,
                   help="guided and full-range frames per design (each)")
    p.add_argument("--repeat", type=int, default=2, help="reads per frame timed")
    p.add_argument("--core", type=int, default=max(os.sched_getaffinity(0)),
                   help="the core the timing process is pinned to (-1: not pinned)")
    p.add_argument("--seed", type=int, default=0,
                   help="added to the frames' seeds (0: the frames this tool always read)")
    p.add_argument("--verdicts", action="store_true",
                   help="for a change meant to read more: compare the verdicts in one word "
                        "(the card, CUT, NONE or REJECT) against the truth, print how many "
                        "frames went from right to rejected, rejected to right, and any "
                        "that either version read wrong; exit 1 when the change reads any "
                        "frame wrong or rejects one the base read right")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base, corpus = Path(tmp) / "base", Path(tmp) / "corpus"
        base.mkdir()
        corpus.mkdir()
        archive = subprocess.run(["git", "archive", args.base], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        _run(ROOT, _RENDER, str(corpus), str(args.frames), str(args.seed), *args.designs)
        out_a, out_b = _run_both((base, ROOT), _READ, str(corpus), "1", *args.designs)
        a, b = json.loads(out_a), json.loads(out_b)
        renamed = Path(tmp) / "renamed"
        _rename_package(base / "shoe_controller", renamed / "shoe_controller_base")
        core = args.core if args.core >= 0 and shutil.which("taskset") else None
        pre = ["taskset", "-c", str(core)] if core is not None else []
        ms = {}
        if not args.verdicts:  # a change meant to read more is not timed here
            timing = subprocess.run([*pre, sys.executable, "-c", _AB, str(renamed),
                                     str(corpus), str(args.repeat), *args.designs], cwd=ROOT,
                                    env=_env(ROOT), capture_output=True, text=True,
                                    check=False)
            if timing.returncode != 0:
                raise SystemExit(f"timing: {timing.stderr.strip()[-2000:]}")
            ms = json.loads(timing.stdout)
    differences = 0
    ms_a: list[float] = []
    ms_b: list[float] = []
    for style in args.designs:
        x, y = a[style], b[style]
        if "learn_error" in x or "learn_error" in y:
            same = x.get("learn_error") == y.get("learn_error")
            differences += not same
            why = " | ".join(v.get("learn_error", "learned")[:120] for v in (x, y))
            print(f"{style:28} learning fails {'alike' if same else 'DIFFERENTLY'}: {why}")
            continue
        if args.verdicts:
            differences += _verdict_changes(style, x, y)
            continue
        diff = [(n, r1, r2) for n, r1, r2 in zip(x["names"], x["reads"], y["reads"], strict=True)
                if r1 != r2]
        differences += len(diff) + (x["profile"] != y["profile"])
        old, new = ms.get(style, ([], []))
        ms_a += old
        ms_b += new
        timed = (f"; ms median {_pct(old, 50):.2f} -> {_pct(new, 50):.2f}" if old else "")
        print(f"{style:28} {len(x['reads'])} frames, {len(diff)} verdicts differ, profile "
              f"{'same' if x['profile'] == y['profile'] else 'DIFFERS'}{timed}")
        for n, r1, r2 in diff[:5]:
            print(f"    {n}: {r1} -> {r2}")
    if ms_a:
        ratio = sorted(n / o for o, n in zip(ms_a, ms_b, strict=True))[len(ms_a) // 2]
        where = "" if core is None else f" on core {core}"
        print(f"all: ms median {_pct(ms_a, 50):.2f} -> {_pct(ms_b, 50):.2f}, p99 "
              f"{_pct(ms_a, 99):.2f} -> {_pct(ms_b, 99):.2f}, per-frame ratio median "
              f"{ratio:.3f} (process CPU, OpenCV on one thread, least of {args.repeat} "
              f"reads, both read side by side in one process{where}; "
              f"{args.base} -> this checkout)")
    print(f"differences: {differences}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
