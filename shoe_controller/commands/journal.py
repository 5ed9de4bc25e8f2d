"""`shoe-controller journal verify|export JOURNAL`: the auditor's view of the journal.

``verify`` re-computes the whole hash chain and says either how many events are sound
(exit 0) or the first bad sequence number and what is wrong (exit 1). ``export`` writes
the events as JSON lines ``{"seq", "time", "type", "hash", "prev_hash", "event"}``,
verifying as it goes, so an export never silently contains a broken chain. Both open the
file read-only: an audit never changes the journal, and may run beside the daemon.
"""

from __future__ import annotations

import argparse
import json
import sys

from shoe_controller.journal import (
    Journal,
    JournalCorrupt,
    JournalError,
    checked_entries,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    v = sub.add_parser("verify", help="check the hash chain of every event")
    v.add_argument("journal", help="the journal file (e.g. /var/lib/shoe-controller/"
                                   "journal.sqlite3)")
    e = sub.add_parser("export", help="events as JSON lines (seq, time, type, hash, "
                                      "prev_hash, event)")
    e.add_argument("journal", help="the journal file")
    e.add_argument("--from", dest="from_seq", type=int, default=1, metavar="SEQ",
                   help="first sequence number to export (default 1)")
    e.add_argument("--to", dest="to_seq", type=int, default=None, metavar="SEQ",
                   help="last sequence number to export (default: the last)")
    e.add_argument("-o", "--output", default="-", help="output file (default stdout)")


def run(args: argparse.Namespace) -> int:
    try:
        journal = Journal.open(args.journal, readonly=True, verify=False)
    except JournalError as exc:
        print(f"shoe-controller journal: {exc}", file=sys.stderr)
        return 2
    with journal:
        if args.action == "verify":
            return _verify(journal)
        return _export(journal, args.from_seq, args.to_seq, args.output)


def _verify(journal: Journal) -> int:
    try:
        count = journal.verify()
    except JournalCorrupt as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    table = f" of table {journal.table_id}" if journal.table_id else ""
    print(f"OK: {count} events{table}, hash chain intact (last hash "
          f"{journal.last_hash if count else '-'})")
    return 0


def _export(journal: Journal, from_seq: int, to_seq: int | None, output: str) -> int:
    if from_seq < 1 or (to_seq is not None and to_seq < from_seq):
        print("shoe-controller journal export: need 1 <= --from <= --to", file=sys.stderr)
        return 2
    out = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")  # noqa: SIM115
    try:
        # The chain is checked from seq 1 even when exporting a slice: a slice is only
        # worth something if everything before it is sound too. A row is written only
        # after it has been checked.
        for entry in checked_entries(journal.replay(1, to_seq), where=f"journal {journal.path}"):
            if entry.seq >= from_seq:
                out.write(json.dumps(entry.to_export(), ensure_ascii=False,
                                     separators=(",", ":")) + "\n")
    except JournalCorrupt as exc:
        print(f"FAILED: {exc} (the export stops before this row)", file=sys.stderr)
        return 1
    finally:
        if out is not sys.stdout:
            out.close()
    return 0
