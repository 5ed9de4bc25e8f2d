"""`shoe-controller config check FILE` / `config example`: validate a table's TOML.

``check`` loads the file exactly as the daemon does: it prints a short summary and exits
0 when valid; otherwise it prints the problem (file, section, key, what is wrong) and
exits 2. ``--json`` prints the effective configuration, defaults filled in.
``example`` prints a file with every key at its default, commented (examples/table.toml);
``reference`` the Markdown reference of every key (docs/config.md).
"""

from __future__ import annotations

import argparse
import json
import sys

from shoe_controller.config import (
    ConfigError,
    config_to_dict,
    example_toml,
    load_config,
    reference_markdown,
    section_types,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="validate a configuration file")
    check.add_argument("file", metavar="FILE")
    check.add_argument("--json", action="store_true",
                       help="print the effective configuration (defaults filled in) as JSON")
    sub.add_parser("example", help="print a configuration with every key at its default")
    sub.add_parser("reference", help="print the reference of every key (docs/config.md)")


def run(args: argparse.Namespace) -> int:
    if args.action == "example":
        sys.stdout.write(example_toml())
        return 0
    if args.action == "reference":
        sys.stdout.write(reference_markdown() + "\n")
        return 0
    try:
        config = load_config(args.file)
    except FileNotFoundError:
        print(f"config: {args.file}: no such file", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"config: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(config_to_dict(config), indent=2, default=str))
        return 0
    r = config.rules
    missing = [s for s, t in section_types().items() if t is None]
    print(f"{args.file}: OK")
    print(f"  table {config.table.id}: {r.decks} decks, burn {r.burn}, cut card {r.cut_card}, "
          f"extra card {r.extra_card}, {r.commission.replace('_', '-')}, rounds {r.rounds}, "
          f"confirm {r.confirm}")
    if missing:
        print(f"  not validated (no settings defined yet): {', '.join(missing)}")
    return 0
