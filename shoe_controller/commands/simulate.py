"""`shoe-controller simulate`: the real daemon at a virtual table (no hardware needed).

The device simulator stands in for the shoe's microcontroller on a pty, gpiozero's
MockFactory for the dealer station's pins, and a virtual dealer deals properly shuffled
shoes (seeded) following what the table shows. Everything else is the product: the
journal, the game core, the MQTT publisher. See docs/daemon.md.
"""

from __future__ import annotations

import argparse
import logging
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shoes", type=int,
                        help="stop once the journal holds N finished shoes (default 1)")
    parser.add_argument("--pace", type=float, metavar="SECONDS",
                        help="seconds between cards (0 = as fast as possible)")
    parser.add_argument("--seed",
                        help="shuffle seed: the same seed deals the same shoes (default 1)")
    parser.add_argument("--broker", metavar="mqtt://HOST:PORT",
                        help="MQTT broker (default: the config's, else mqtt://localhost:1883)")
    parser.add_argument("--table-id", help="table id in topics and the journal (default sim-1)")
    parser.add_argument("--state-dir", metavar="DIR",
                        help="journal + outbox + signing key; reuse it to resume (default: a "
                             "new temporary directory)")
    parser.add_argument("--config", metavar="FILE",
                        help="a table's TOML config (rules, mqtt...); pins are always mocked")
    parser.add_argument("--release", choices=("on_result", "per_card"),
                        help="override [mqtt] release")
    parser.add_argument("--reader", choices=("scanner", "barcode", "index"),
                        help="how cards are read: the shoe's scanner over the serial link "
                             "(fast, default), or synthetic camera frames through the real "
                             "barcode or index reader and pass tracker")
    parser.add_argument("--inject", metavar="KIND[=N],...",
                        help="errors to inject: extra-card, unreadable, foreign, "
                             "broker-outage; N<1 a rate per chance, N>=1 a count per shoe")
    parser.add_argument("--outage-seconds", type=float,
                        help="length of each injected broker outage (default 3)")
    parser.add_argument("--display-port", type=int, metavar="PORT",
                        help="serve the table display page on 127.0.0.1:PORT")
    parser.add_argument("--metrics-port", type=int, metavar="PORT",
                        help="serve Prometheus metrics on 127.0.0.1:PORT/metrics (0: a free "
                             "port, logged)")
    parser.add_argument("--broker-ws", default="", metavar="URL",
                        help="the broker's WebSocket URL for the display page")
    parser.add_argument("--hold-supervisor", type=float, default=0.0, metavar="SECONDS",
                        help="the supervisor takes this long to come to a paused table "
                             "(keeps 'paused' / 'misdeal' on the display)")
    parser.add_argument("--hold-bets", type=float, default=0.0, metavar="SECONDS",
                        help="bets stay open this long before each round's first card")
    parser.add_argument("--shoe-break", type=float, default=0.0, metavar="SECONDS",
                        help="pause between shoes (keeps 'shoe ended / shuffling' on the "
                             "display)")
    parser.add_argument("--drain-timeout", type=float,
                        help="seconds to wait for the outbox to empty at the end")
    parser.add_argument("--leds", action="store_true",
                        help="draw the dealer LEDs in the terminal on every change")
    parser.add_argument("--unsigned", action="store_true",
                        help="no signing key: every message is sent unsigned and marked so "
                             "(default: DIR/signing.key, made when there is none)")
    parser.add_argument("--quiet", action="store_true", help="no line per round")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def run(args: argparse.Namespace) -> int:
    from shoe_controller.sim import SimulateConfig, parse_inject
    from shoe_controller.sim.table import SimOptions, Simulation

    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s: %(message)s",
                        stream=sys.stderr)
    config = None
    if args.config:
        from shoe_controller.daemon import ConfigRefused, load_table_config

        try:
            config = load_table_config(args.config)
        except ConfigRefused as exc:
            print(f"shoe-controller simulate: refusing to start: {exc}", file=sys.stderr)
            return 2
    defaults = getattr(config, "simulate", None)
    if not isinstance(defaults, SimulateConfig):
        defaults = SimulateConfig()

    def pick(name: str) -> object:
        value = getattr(args, name)
        return getattr(defaults, name) if value is None else value

    try:
        inject = parse_inject(pick("inject"))  # type: ignore[arg-type]
    except ValueError as exc:
        print(f"shoe-controller simulate: {exc}", file=sys.stderr)
        return 2
    shoes, pace = int(pick("shoes")), float(pick("pace"))  # type: ignore[arg-type]
    if shoes < 1 or pace < 0:
        print("shoe-controller simulate: --shoes must be >= 1 and --pace >= 0",
              file=sys.stderr)
        return 2
    if min(args.hold_supervisor, args.hold_bets, args.shoe_break) < 0:
        print("shoe-controller simulate: --hold-supervisor, --hold-bets and --shoe-break "
              "must be >= 0", file=sys.stderr)
        return 2
    from shoe_controller.sim import Holds

    holds = Holds(supervisor=args.hold_supervisor, bets=args.hold_bets,
                  shoe_break=args.shoe_break)
    opts = SimOptions(
        shoes=shoes, pace=pace, seed=pick("seed"), broker=args.broker,  # type: ignore[arg-type]
        table_id=args.table_id, state_dir=args.state_dir, display_port=args.display_port,
        broker_ws=args.broker_ws, inject=inject, reader=str(pick("reader")),
        release=args.release, config=config, leds=args.leds, quiet=args.quiet,
        drain_timeout=float(pick("drain_timeout")),  # type: ignore[arg-type]
        outage_seconds=float(pick("outage_seconds")),  # type: ignore[arg-type]
        unsigned=args.unsigned, holds=holds, metrics_port=args.metrics_port,
    )
    from shoe_controller.daemon import ConfigRefused, DaemonError, StartRefused
    from shoe_controller.journal import JournalError

    try:
        return Simulation(opts, out=lambda s: print(s, flush=True)).run()
    except (ConfigRefused, StartRefused) as exc:
        print(f"shoe-controller simulate: refusing to start: {exc}", file=sys.stderr)
        return 2
    except (DaemonError, JournalError) as exc:
        print(f"shoe-controller simulate: refusing to start: {exc}", file=sys.stderr)
        return 1
