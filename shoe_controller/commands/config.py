"""`shoe-controller config check FILE` / `config example`: validate a table's TOML.

``check`` validates the file as the daemon does and reports EVERY problem, one line
each (file, section, key, what is wrong), then exits 2; an empty file is not a table's
configuration. It also checks that the files the config names exist (key and password
files with safe modes: :mod:`shoe_controller.preflight`) and warns about settings
unsafe at a casino table (``confirm = "auto"``, an unsigned feed, plain MQTT to another
machine): valid with warnings exits 0, or 1 with ``--strict``. ``--json`` prints the
effective configuration, defaults filled in.
``example`` prints a file with every key at its default, commented (examples/table.toml);
``reference`` the Markdown reference of every key (docs/config.md).
"""

from __future__ import annotations

import argparse
import json
import sys

from shoe_controller.config import (
    ConfigError,
    check_config_text,
    config_to_dict,
    example_toml,
    read_config_text,
    reference_markdown,
    section_types,
)
from shoe_controller.preflight import casino_warnings, file_errors


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="validate a configuration file")
    check.add_argument("file", metavar="FILE")
    check.add_argument("--json", action="store_true",
                       help="print the effective configuration (defaults filled in) as JSON")
    check.add_argument("--state-dir", metavar="DIR",
                       help="also check the device's signing key in DIR (as `run` uses it)")
    check.add_argument("--strict", action="store_true",
                       help="exit 1 when there are warnings (settings unsafe at a casino)")
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
        text = read_config_text(args.file)  # never more than 1 MiB of it (issue 14)
    except FileNotFoundError:
        print(f"config: {args.file}: no such file", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"config: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"config: {args.file}: cannot read it ({exc.strerror})", file=sys.stderr)
        return 2
    config, errors = check_config_text(text, args.file)
    problems = [str(e) for e in errors]
    if not problems and not _has_settings(text):
        problems.append(f"{args.file}: the file has no settings at all: this is not a "
                        "table's configuration (start from `shoe-controller config example`)")
    if config is not None:
        problems += [f"{args.file}: {p}" for p in file_errors(config, args.state_dir)]
    for p in problems:
        print(f"config: {p}", file=sys.stderr)
    if problems or errors or config is None:
        n = len(problems)
        print(f"config: {args.file}: {n} problem{'s' if n != 1 else ''}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(config_to_dict(config), indent=2, default=str))
        return 0
    warnings = casino_warnings(config, args.state_dir)
    r = config.rules
    missing = [s for s, t in section_types().items() if t is None]
    print(f"{args.file}: OK" + (f" ({len(warnings)} warning{'s' if len(warnings) != 1 else ''})"
                                if warnings else ""))
    print(f"  table {config.table.id}: {r.decks} decks, burn {r.burn}, cut card {r.cut_card}, "
          f"extra card {r.extra_card}, {r.commission.replace('_', '-')}, rounds {r.rounds}, "
          f"confirm {r.confirm}")
    if missing:
        print(f"  not validated (no settings defined yet): {', '.join(missing)}")
    for w in warnings:
        print(f"  warning: {w}")
    return 1 if warnings and args.strict else 0


def _has_settings(text: str) -> bool:
    """Whether the TOML text sets anything at all (a section header counts)."""
    import tomllib

    try:
        return bool(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        return True  # reported as invalid TOML already
