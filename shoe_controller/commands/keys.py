"""`shoe-controller keys init|show`: the device's Ed25519 signing key.

``init --state-dir DIR`` writes ``DIR/signing.key`` (0600, never overwritten) and
``DIR/signing.pub``, and prints the public key and its fingerprint for the casino to pin.
``show`` prints them again (from ``signing.key``, ``signing.pub`` or any public key
text). See docs/mqtt.md, "Key ceremony".
"""

from __future__ import annotations

import argparse
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    i = sub.add_parser("init", help="create the signing key (refuses to overwrite one)")
    i.add_argument("--state-dir", required=True, metavar="DIR",
                   help="the daemon's state directory (e.g. /var/lib/shoe-controller)")
    s = sub.add_parser("show", help="print the public key and its fingerprint")
    s.add_argument("--state-dir", metavar="DIR", help="read DIR/signing.key")
    s.add_argument("--pubkey", metavar="PUB", help="a public key file or text instead")


def _print_public(pub: object) -> None:
    print(f"public key:  {pub.text}")  # type: ignore[attr-defined]
    print(f"fingerprint: {pub.key_id}  (the key_id in every signed message: "  # type: ignore[attr-defined]
          "pin it in the casino's systems)")


def run(args: argparse.Namespace) -> int:
    from shoe_controller import keys

    try:
        if args.action == "init":
            if not os.path.isdir(args.state_dir):
                print(f"shoe-controller keys: {args.state_dir}: no such directory",
                      file=sys.stderr)
                return 2
            pub = keys.init_keys(args.state_dir)
            print(f"wrote {os.path.join(args.state_dir, keys.PRIVATE_NAME)} (private, 0600) "
                  f"and {os.path.join(args.state_dir, keys.PUBLIC_NAME)}")
            _print_public(pub)
            return 0
        if args.pubkey:
            _print_public(keys.load_public_key(args.pubkey))
            return 0
        if not args.state_dir:
            print("shoe-controller keys show: give --state-dir DIR or --pubkey PUB",
                  file=sys.stderr)
            return 2
        key = keys.load_signing_key(os.path.join(args.state_dir, keys.PRIVATE_NAME))
        _print_public(key.public)
        return 0
    except (keys.KeyFileError, OSError) as exc:
        print(f"shoe-controller keys: {exc}", file=sys.stderr)
        return 2
