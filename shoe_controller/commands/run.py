"""`shoe-controller run`: the daemon beside a real shoe, per the table's config file.

Under systemd (systemd/shoe-controller.service) it reports READY=1 once the journal is
verified and replayed and its inputs are open, pings the watchdog from its core loop and
stops cleanly on SIGTERM. See docs/daemon.md and docs/deploy.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default="/etc/shoe-controller/table.toml", metavar="FILE",
                        help="the table's TOML config (default /etc/shoe-controller/table.toml)")
    parser.add_argument("--state-dir", metavar="DIR",
                        default=os.environ.get("STATE_DIRECTORY", "/var/lib/shoe-controller"),
                        help="journal and outbox (default $STATE_DIRECTORY or "
                             "/var/lib/shoe-controller)")
    parser.add_argument("--cards", choices=("camera", "scanner"), default="camera",
                        help="who reads the cards: the camera (default) or the shoe's scanner")
    parser.add_argument("--display-port", type=int, metavar="PORT",
                        help="serve the table display page on PORT (overrides [display] port)")
    parser.add_argument("--unsigned", action="store_true",
                        help="run without a signing key: every message is sent unsigned and "
                             "marked so (never on a casino table)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("--log-format", choices=("text", "json"), default="text",
                        help="text (timestamped unless under journald) or one JSON object "
                             "per line")


def run(args: argparse.Namespace) -> int:
    from shoe_controller.daemon import (
        ConfigRefused,
        DaemonError,
        StartRefused,
        build_daemon,
        load_table_config,
    )
    from shoe_controller.logsetup import setup_logging
    from shoe_controller.preflight import file_errors
    from shoe_controller.statedir import prepare

    setup_logging(logging.DEBUG if args.verbose else logging.INFO, args.log_format)
    try:
        config = load_table_config(args.config)
    except ConfigRefused as exc:
        print(f"shoe-controller run: refusing to start: {exc}", file=sys.stderr)
        return 2
    # A key or password file that is missing or unsafe is a configuration error: one
    # line and exit 2 (not a traceback and a restart loop under Restart=on-failure).
    state_dir = args.state_dir.split(":")[0]  # systemd may list several directories
    problems = file_errors(config, state_dir)
    if problems:
        more = f" (and {len(problems) - 1} more: run `shoe-controller config check " \
               f"{args.config}`)" if len(problems) > 1 else ""
        print(f"shoe-controller run: refusing to start: {args.config}: {problems[0]}{more}",
              file=sys.stderr)
        return 2
    try:
        prepare(state_dir)  # 0750, files 0640 whoever starts it; refuses wider ones
        daemon, extras = build_daemon(config, state_dir, cards=args.cards,
                                      display_port=args.display_port,
                                      unsigned=args.unsigned)
    except (ConfigRefused, StartRefused) as exc:  # no key, a journal behind its head...
        print(f"shoe-controller run: refusing to start: {exc}", file=sys.stderr)
        return 2
    except (DaemonError, OSError) as exc:
        print(f"shoe-controller run: refusing to start: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a setting the config loader cannot see (e.g. a key's content)
        print(f"shoe-controller run: refusing to start: {args.config}: {exc}", file=sys.stderr)
        return 2
    try:
        daemon.start()
        daemon.install_signals()
        logging.getLogger("shoe_controller.daemon").info("ready: %s", daemon.describe())
        daemon.run()
    except DaemonError as exc:
        print(f"shoe-controller run: {exc}", file=sys.stderr)
        return 1
    finally:
        daemon.close()
        for extra in extras:
            extra.stop()
    return 0
