"""`shoe-controller status [--json]`: what the running daemon is doing, from its control
socket (the ``status`` request; see :mod:`shoe_controller.control`).

Phase, shoe and round, the shoe link and its draw lock, the broker, the outbox backlog,
free space against the disk reserve, the last fault, versions. ``--json`` prints the
daemon's answer as it is (one object). Exit status 0; 2 when no daemon answers.

    sudo -u shoe shoe-controller status
    shoe-controller status --state-dir /tmp/shoe-sim-xyz --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from shoe_controller.storage import mb

DEFAULT_STATE_DIR = "/var/lib/shoe-controller"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--state-dir", metavar="DIR",
                        default=os.environ.get("STATE_DIRECTORY", DEFAULT_STATE_DIR),
                        help="the daemon's state directory (its control socket is DIR/control)")
    parser.add_argument("--socket", metavar="PATH", help="the control socket itself")
    parser.add_argument("--json", action="store_true", help="the status as one JSON object")


def render(st: dict[str, Any]) -> str:
    """The status as a few lines for a person.

    >>> print(render({"phase": "in_round", "shoe": 2, "round": 14, "round_open": True,
    ...   "paused": None, "link": {"up": True, "lock": "released"},
    ...   "broker": {"enabled": True, "connected": False, "last_error": "x", "disconnects": 1},
    ...   "outbox": 12, "disk": {"full": None, "free_bytes": 3 << 30, "reserve_bytes": 64 << 20,
    ...   "held_batches": 0}, "last_fault": None, "journal": {"last_seq": 900},
    ...   "versions": {"shoe_controller": "0.1.0", "protocol": "1.1", "python": "3.11.7"},
    ...   "uptime_s": 61.0}))
    phase      in_round (shoe 2, round 14 open)
    shoe link  up, draw lock released
    broker     DISCONNECTED (x), 1 disconnect(s) since start
    outbox     12 message(s) waiting
    disk       3072.0 MB free, reserve 64.0 MB
    last fault none
    journal    seq 900
    versions   shoe-controller 0.1.0, protocol 1.1, python 3.11.7; up 61 s
    """
    rnd = f"round {st.get('round')} {'open' if st.get('round_open') else 'done'}" \
        if st.get("round") else "no round yet"
    shoe = f"shoe {st['shoe']}, {rnd}" if st.get("shoe") else "no shoe yet"
    phase = st.get("phase")
    if st.get("paused"):
        phase = f"{phase}: {st['paused']}"
    link = st.get("link")
    link_text = "none (no shoe link)" if link is None else (
        f"{'up' if link['up'] else 'DOWN'}, draw lock {link['lock']}")
    b = st.get("broker") or {}
    if not b.get("enabled"):
        broker = "disabled (journal only)"
    elif b.get("connected"):
        broker = "connected"
    else:
        broker = f"DISCONNECTED ({b.get('last_error') or 'not yet connected'})"
    if b.get("disconnects"):
        broker += f", {b['disconnects']} disconnect(s) since start"
    d = st.get("disk") or {}
    disk = (f"{mb(d['free_bytes'])} free, reserve {mb(d['reserve_bytes'])}"
            if "free_bytes" in d else "not watched")
    if d.get("full"):
        disk = f"DISK FULL: {d['full']}" + (
            f" ({d['held_batches']} batch(es) held in memory)" if d.get("held_batches") else "")
    f = st.get("last_fault")
    fault = "none" if not f else f"{f['kind']} at {f['time']}: {f['detail']}"
    v = st.get("versions") or {}
    lines = [
        ("phase", f"{phase} ({shoe})"),
        ("shoe link", link_text),
        ("broker", broker),
        ("outbox", "?" if st.get("outbox") is None else f"{st['outbox']} message(s) waiting"),
        ("disk", disk),
        ("last fault", fault),
        ("journal", f"seq {(st.get('journal') or {}).get('last_seq')}"),
        ("versions", f"shoe-controller {v.get('shoe_controller')}, protocol "
                     f"{v.get('protocol')}, python {v.get('python')}; up "
                     f"{st.get('uptime_s', 0):.0f} s"),
    ]
    return "\n".join(f"{k:<10} {val}" for k, val in lines)


def run(args: argparse.Namespace) -> int:
    from shoe_controller.control import request

    path = args.socket or os.path.join(args.state_dir, "control")
    try:
        reply = request(path, "status")
    except OSError as exc:
        print(f"shoe-controller status: no daemon answers on {path} ({exc.strerror or exc})",
              file=sys.stderr)
        return 2
    head, _, body = reply.partition("\n")
    if head != "ok":
        print(f"shoe-controller status: {reply}", file=sys.stderr)
        return 2
    st = json.loads(body)
    print(json.dumps(st, indent=2, sort_keys=True) if args.json else render(st))
    return 0
