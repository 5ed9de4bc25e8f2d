"""`shoe-controller keys init|show|rotate`: the device's Ed25519 signing key.

``init --state-dir DIR`` writes ``DIR/signing.key`` (0600, never overwritten) and
``DIR/signing.pub``, and prints the public key and its fingerprint for the casino to pin.
``show`` prints them again (from ``signing.key``, ``signing.pub`` or any public key
text). ``rotate --state-dir DIR`` (daemon stopped) replaces the key with a signed
``key_rotated`` event. See docs/mqtt.md, "Key ceremony".
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
    r = sub.add_parser("rotate", help="replace the key, announced in the feed by a "
                                      "key_rotated event the old key signs (daemon stopped)")
    r.add_argument("--state-dir", required=True, metavar="DIR")
    r.add_argument("--journal", metavar="FILE",
                   help="the journal (default DIR/journal.sqlite3)")
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
        if args.action == "rotate":
            return _rotate(args)
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


def _rotate(args: argparse.Namespace) -> int:
    """Write the new key beside the old, journal ``key_rotated`` (the old key endorses
    the new; its envelope is signed by the old key when the daemon next starts), then
    retire the old key as ``signing.key.<key_id>.old`` (kept: replays of the seqs it
    signed stay byte-identical) and put the new one in place."""
    from shoe_controller import keys
    from shoe_controller.journal import Journal, JournalError

    d = args.state_dir
    path = os.path.join(d, keys.PRIVATE_NAME)
    old = keys.load_signing_key(path)
    jpath = args.journal or os.path.join(d, "journal.sqlite3")
    try:
        journal = Journal.open(jpath, existing=True)
    except JournalError as exc:
        print(f"shoe-controller keys rotate: {exc}", file=sys.stderr)
        return 2
    with journal:
        last = journal.of_type("key_rotated")
        if last and last[-1].data.get("new_key_id") != old.key_id:
            print(f"shoe-controller keys rotate: {path} is key {old.key_id}, but the journal "
                  f"last rotated to {last[-1].data.get('new_key_id')}: put that key back "
                  "first", file=sys.stderr)
            return 2
        nxt = path + ".next"
        new = keys.SigningKey.generate()
        from cryptography.hazmat.primitives import serialization

        pem = new.private.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption())
        try:
            keys._write_new(nxt, pem, 0o600)
        except FileExistsError:
            print(f"shoe-controller keys rotate: {nxt} exists (an interrupted rotation?): "
                  "look at it, remove it, try again", file=sys.stderr)
            return 2
        body = keys.rotation_body(old, new.public, journal.epoch or "",
                                  journal.table_id or "")
        (entry,) = journal.append([body])
    os.rename(path, os.path.join(d, keys.retired_name(old.key_id)))
    os.rename(nxt, path)
    tmp = os.path.join(d, keys.PUBLIC_NAME + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(new.public.text + "\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, os.path.join(d, keys.PUBLIC_NAME))
    print(f"rotated at seq {entry.seq}: key {old.key_id} retired "
          f"({keys.retired_name(old.key_id)}, kept for replays of seqs up to {entry.seq})")
    _print_public(new.public)
    print("consumers that pinned the old key accept the new one from the feed's signed "
          "key_rotated event; pin the new fingerprint everywhere too (displays!)")
    return 0
