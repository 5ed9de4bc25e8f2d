"""`shoe-controller feed verify | follow`: the reference consumer of the casino feed.

``verify FILE --pubkey PUB [--table T] [--json]`` checks a capture (the lines
``mosquitto_sub -v -t 'shoe/T1/casino/#'`` prints: ``topic payload``; ``-`` for stdin):
exit 0 only for a clean, contiguous, correctly signed run of one table; 1 on any finding
(gaps, forks, bad signatures, wrong table or topic, foreign epochs, malformed payloads,
a head ahead of the last event); 2 on bad usage (a missing file, an unreadable key).

``follow --broker URL --table T --pubkey PUB [--out FILE]`` follows a table live,
verifies everything, fills gaps with MQTT 5 replay requests, and writes the verified
events in order, exactly once, as JSON lines (appending to FILE, and resuming after its
last event when FILE already holds some). See docs/mqtt.md and
shoe_controller/publish/consumer.py.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    v = sub.add_parser("verify", help="check a capture of the casino feed")
    v.add_argument("file", help="capture file (mosquitto_sub -v lines), or - for stdin")
    v.add_argument("--pubkey", required=True, metavar="PUB", action="append",
                   help="the device's public key: signing.pub, its text, or a PEM file "
                        "(again for each key a capture may be signed with)")
    v.add_argument("--table", help="the table the capture must be of")
    v.add_argument("--json", action="store_true", help="the report as one JSON object")
    f = sub.add_parser("follow", help="follow a table live, verified and gap-filled")
    f.add_argument("--broker", required=True, metavar="URL",
                   help="mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    f.add_argument("--table", required=True)
    f.add_argument("--pubkey", required=True, metavar="PUB", action="append")
    f.add_argument("--out", metavar="FILE", help="append the events here (default stdout)")
    f.add_argument("--prefix", default="shoe", help="topic prefix (default shoe)")
    f.add_argument("--from-seq", type=int, default=1, metavar="N",
                   help="first seq wanted when FILE holds none (default 1)")
    f.add_argument("--username")
    f.add_argument("--password-file", metavar="FILE")
    f.add_argument("--ca-file", metavar="FILE")
    f.add_argument("--client-id")
    f.add_argument("--seconds", type=float, help="stop after this long (default: never)")


def _keys(specs: list[str]) -> list:
    from shoe_controller.keys import load_public_key

    return [load_public_key(spec) for spec in specs]


def run(args: argparse.Namespace) -> int:
    from shoe_controller.keys import KeyFileError

    try:
        keys = _keys(args.pubkey)
    except KeyFileError as exc:
        print(f"shoe-controller feed: --pubkey: {exc}", file=sys.stderr)
        return 2
    if args.action == "verify":
        return _verify(args, keys)
    return _follow(args, keys)


def _verify(args: argparse.Namespace, keys: list) -> int:
    from shoe_controller.publish.consumer import verify_capture

    try:
        f = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"shoe-controller feed verify: {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    with f:
        report = verify_capture(f, keys, args.table)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        for finding in report.findings[:50]:
            where = f"seq {finding.seq}" if finding.seq is not None else "-"
            print(f"{finding.kind}: {where}: {finding.detail}")
        if len(report.findings) > 50:
            print(f"... and {len(report.findings) - 50} more finding(s)")
        print(report.summary())
    return 0 if report.ok else 1


def _resume_point(path: str) -> tuple[str | None, int, str | None]:
    """(epoch, next seq, last hash) after the last line of an existing output file."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 65536))
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
    except FileNotFoundError:
        return None, 0, None
    if not lines:
        return None, 0, None
    last = json.loads(lines[-1])
    return last["epoch"], int(last["seq"]) + 1, last["hash"]


def _follow(args: argparse.Namespace, keys: list) -> int:
    import msgspec

    from shoe_controller.publish.config import MqttConfig
    from shoe_controller.publish.consumer import Follower

    try:
        config = msgspec.convert({"url": args.broker, "username": args.username,
                                  "password_file": args.password_file,
                                  "ca_file": args.ca_file}, MqttConfig)
    except msgspec.ValidationError as exc:
        print(f"shoe-controller feed follow: {exc}", file=sys.stderr)
        return 2
    epoch, next_seq, last_hash = (None, args.from_seq, None)
    if args.out:
        try:
            e, n, h = _resume_point(args.out)
        except (ValueError, KeyError, OSError) as exc:
            print(f"shoe-controller feed follow: {args.out}: cannot resume after its last "
                  f"line ({exc})", file=sys.stderr)
            return 2
        if e is not None:
            epoch, next_seq, last_hash = e, n, h
    out = open(args.out, "ab") if args.out else sys.stdout.buffer  # noqa: SIM115

    def write(payload: bytes) -> None:
        out.write(payload + b"\n")
        out.flush()

    def finding(f: object) -> None:
        print(f"feed follow: {f.kind}: seq {f.seq}: {f.detail}",  # type: ignore[attr-defined]
              file=sys.stderr, flush=True)

    follower = Follower(config, args.table, keys, write, prefix=args.prefix,
                        from_seq=next_seq, epoch=epoch, client_id=args.client_id,
                        on_finding=finding)
    follower.last_hash = last_hash
    signal.signal(signal.SIGTERM, lambda *_: follower.stop())
    try:
        rc = follower.run(args.seconds)
    except KeyboardInterrupt:
        rc = 1 if follower.findings else 0
    finally:
        if out is not sys.stdout.buffer:
            out.close()
    print(f"feed follow: {follower.written} event(s) written, next seq {follower.next_seq}, "
          f"{follower.requests} replay request(s), {len(follower.findings)} finding(s)",
          file=sys.stderr)
    return rc
