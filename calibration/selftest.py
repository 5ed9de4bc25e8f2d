"""`shoe-calibrate selftest`: the dealer station's LEDs, buzzer and buttons, the shoe's
sensors, and the serial link -- each checked, each reported pass or fail with why.

On the table: the LEDs light one by one and the buzzer beeps (watch and listen; each
pin is also read back), then the operator presses every button and turns the key, deals
one card through the exit gate and opens and closes the lid, each within ``--timeout``.
The serial link is checked by handshake, ping round trip, status and a lights command.

``--simulate`` runs it all off the Pi: gpiozero's MockFactory pins and the firmware
device simulator on a pty, with a virtual operator pressing the mock buttons and
scripting the simulator -- the same checks, end to end. Exit status 0 when every check
passes, 1 when one fails, 2 on a usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import msgspec

__all__ = ["Check", "add_arguments", "run", "run_checks"]

PARTS = ("leds", "buttons", "serial", "sensors")


@dataclass(frozen=True)
class Check:
    """One check's verdict."""

    part: str
    name: str
    ok: bool
    detail: str = ""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="the table's TOML file ([gpio], [serial])")
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="mock pins and the device simulator, with a virtual operator (off the Pi)",
    )
    parser.add_argument("--port", help="override [serial] port (a path or pyserial URL)")
    parser.add_argument(
        "--only", default=",".join(PARTS), help=f"comma-separated parts ({','.join(PARTS)})"
    )
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per operator step")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


def _load_sections(path: Path | None) -> tuple[Any, Any]:
    from firmware_bridge.config import SerialConfig
    from shoe_controller.dealer.config import GpioConfig

    table: dict[str, Any] = {}
    if path is not None:
        try:
            with path.open("rb") as f:
                table = tomllib.load(f)
        except OSError as exc:
            raise ValueError(f"{path}: cannot read it ({exc.strerror})") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not valid TOML ({exc})") from exc
    out = []
    for name, struct in (("gpio", GpioConfig), ("serial", SerialConfig)):
        try:
            out.append(msgspec.convert(table.get(name, {}), struct))
        except msgspec.ValidationError as exc:
            raise ValueError(f"{path}: [{name}]: {exc}") from exc
    return out[0], out[1]


class _Operator:
    """Who acts at each step: a person (prompted) or, with --simulate, a script."""

    def __init__(self, say: Callable[[str], None], act: Callable[[str], None] | None) -> None:
        self.say = say
        self.act = act

    def ask(self, step: str, prompt: str) -> None:
        self.say(prompt)
        if self.act is not None:
            # The virtual operator acts a moment later, from another thread, like a person.
            threading.Timer(0.05, self.act, args=(step,)).start()


def _check_leds(station: Any, say: Callable[[str], None], dwell: float) -> list[Check]:
    from shoe_controller.dealer.config import LED_NAMES
    from shoe_controller.dealer.lights import Lights

    checks = []
    say("LEDs: each lights alone in turn, left to right; watch the panel")
    for name in LED_NAMES:
        station.show(Lights(frozenset({name})))
        values = station.led_values()
        wrong = [n for n, v in values.items() if v != (n == name)]
        checks.append(
            Check(
                "leds",
                name,
                not wrong,
                "pin read back on" if not wrong else f"pins read back wrong: {', '.join(wrong)}",
            )
        )
        time.sleep(dwell)
    station.show(Lights())
    dark = not any(station.led_values().values())
    checks.append(Check("leds", "all off", dark, "" if dark else "an LED stayed on"))
    station.buzzer.on()
    sounding = bool(station.buzzer.is_active)
    time.sleep(dwell)
    station.buzzer.off()
    silent = not station.buzzer.is_active
    checks.append(
        Check(
            "leds",
            "buzzer",
            sounding and silent,
            "beeped" if sounding and silent else "buzzer pin did not follow",
        )
    )
    return checks


def _nothing() -> None:
    """A button handler that does nothing (the station's own handler must not run)."""


def _check_buttons(station: Any, operator: _Operator, timeout: float) -> list[Check]:
    pressed: dict[str, threading.Event] = {}
    for name, button in station.buttons.items():
        event = pressed.setdefault(name, threading.Event())
        # Raw presses: the station's own handlers turn them into game inputs; here we only
        # need to know the contact works.
        button.when_pressed = lambda _dev=None, e=event: e.set()
        button.when_released = _nothing
    checks = []
    for name in station.buttons:
        what = "turn the supervisor key on and off" if name == "key" else f"press {name}"
        operator.ask(f"button:{name}", f"buttons: {what}")
        ok = pressed[name].wait(timeout)
        checks.append(
            Check("buttons", name, ok, "pressed" if ok else f"no press within {timeout:g} s")
        )
    return checks


def _next_event(events: queue.Queue[Any], kinds: set[str], timeout: float) -> Any:
    end = time.monotonic() + timeout
    while (left := end - time.monotonic()) > 0:
        try:
            ev = events.get(timeout=left)
        except queue.Empty:
            return None
        if getattr(ev, "kind", None) in kinds:
            return ev
    return None


def _check_serial(link: Any, info: Any) -> list[Check]:
    from firmware_bridge.link import LinkError

    checks = [
        Check(
            "serial",
            "handshake",
            True,
            f"{info.device_id}, firmware {info.firmware}, protocol "
            f"{'.'.join(map(str, info.protocol))}",
        )
    ]
    try:
        rtt = link.ping()
        checks.append(Check("serial", "ping", True, f"round trip {rtt * 1000:.1f} ms"))
        status = link.request_status()
        checks.append(
            Check(
                "serial",
                "status",
                status.fault is None,
                f"cards {status.cards_total}, lid {'open' if status.lid_open else 'closed'}"
                + (f", FAULT {status.fault}" if status.fault else ""),
            )
        )
        caps = set(info.capabilities)
        if "lights" in caps:
            link.set_lights(100)
            link.set_lights(status.brightness)
            checks.append(Check("serial", "lights command", True, "acknowledged"))
        if "lock" in caps:
            link.set_lock(True)
            locked = link.request_status().locked
            link.set_lock(status.locked)
            checks.append(
                Check(
                    "serial",
                    "draw lock",
                    locked,
                    "engaged and released"
                    if locked
                    else "the device did not report the lock engaged",
                )
            )
    except LinkError as exc:
        checks.append(Check("serial", "commands", False, str(exc)))
    return checks


def _check_sensors(
    events: queue.Queue[Any], operator: _Operator, timeout: float, caps: set[str]
) -> list[Check]:
    """Each sensor the device says it has (its capabilities), with the operator's help."""
    checks = []
    if "card_exit" not in caps:
        checks.append(Check("sensors", "card exit", False, "the device reports no exit gate"))
        return checks
    operator.ask("card_exit", "sensors: deal one card through the exit gate")
    ev = _next_event(events, {"card_exit"}, timeout)
    checks.append(
        Check(
            "sensors",
            "card exit",
            ev is not None,
            f"gate blocked {ev.duration_us / 1000:.1f} ms"
            if ev is not None
            else f"no card exit within {timeout:g} s",
        )
    )
    for opened in (True, False) if "lid" in caps else ():
        word = "open" if opened else "close"
        operator.ask(f"lid:{word}", f"sensors: {word} the lid")
        ev = _next_event(events, {"lid"}, timeout)
        ok = ev is not None and ev.open is opened
        checks.append(
            Check("sensors", f"lid {word}", ok, "seen" if ok else f"no lid {word} in {timeout:g} s")
        )
    if "buttons" in caps:
        operator.ask("shoe:confirm", "sensors: press the shoe's own confirm button")
        ev = _next_event(events, {"button"}, timeout)
        checks.append(
            Check(
                "sensors",
                "shoe button",
                ev is not None,
                f"{ev.button} pressed" if ev is not None else f"no press in {timeout:g} s",
            )
        )
    if "card_read" in caps:
        operator.ask("scan", "sensors: pass a barcoded card over the shoe's scanner")
        ev = _next_event(events, {"card_read"}, timeout)
        checks.append(
            Check(
                "sensors",
                "scanner",
                ev is not None,
                f"read {ev.text!r} ({ev.symbology})"
                if ev is not None
                else f"no read in {timeout:g} s",
            )
        )
    return checks


def run_checks(
    gpio: Any,
    serial_cfg: Any,
    parts: set[str],
    *,
    timeout: float,
    simulate: bool,
    say: Callable[[str], None] = print,
    dwell: float | None = None,
) -> list[Check]:
    """Run the chosen checks; with ``simulate``, on mock pins and the device simulator.

    ``dwell``: seconds each LED stays lit (default 0.5 on the table, 0.02 simulated).
    """
    checks: list[Check] = []
    sim = None
    station = None
    link = None
    if simulate:
        gpio = msgspec.structs.replace(gpio, pin_factory="mock")
    try:
        if parts & {"leds", "buttons"}:
            from shoe_controller.dealer.station import Station, StationError

            try:
                station = Station(gpio, lambda _input, _origin: None)
            except StationError as exc:
                checks.append(Check("leds", "open pins", False, str(exc)))
        if parts & {"serial", "sensors"} and simulate:
            from firmware_bridge.simulator import DeviceSimulator

            sim = DeviceSimulator(heartbeat_interval=0.05)
            serial_cfg = msgspec.structs.replace(serial_cfg, port=sim.start())

        def act(step: str) -> None:
            kind, _, arg = step.partition(":")
            if kind == "button" and station is not None:
                if arg == "key":
                    station.turn_key(True)
                    station.turn_key(False)
                else:
                    station.press(arg)
            elif kind == "card_exit" and sim is not None:
                sim.card_exit(duration_us=38_000)
            elif kind == "lid" and sim is not None:
                sim.lid(arg == "open")
            elif kind == "shoe" and sim is not None:
                sim.press(arg)
            elif kind == "scan" and sim is not None:
                sim.card_read("D1-QH")

        operator = _Operator(say, act if simulate else None)
        if station is not None and "leds" in parts:
            checks += _check_leds(
                station, say, dwell if dwell is not None else (0.02 if simulate else 0.5)
            )
        if station is not None and "buttons" in parts:
            checks += _check_buttons(station, operator, timeout)
        if parts & {"serial", "sensors"}:
            from firmware_bridge.link import Link, LinkError

            events: queue.Queue[Any] = queue.Queue()
            link = Link(serial_cfg, events).start()
            try:
                info = link.wait_up(timeout=min(timeout, 10.0))
            except LinkError as exc:
                checks.append(Check("serial", "handshake", False, str(exc)))
            else:
                if "serial" in parts:
                    checks += _check_serial(link, info)
                if "sensors" in parts:
                    caps = set(info.capabilities)
                    checks += _check_sensors(events, operator, timeout, caps)
    finally:
        if link is not None:
            link.stop()
        if sim is not None:
            sim.stop()
        if station is not None:
            station.close()
    return checks


def run(args: argparse.Namespace) -> int:
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    unknown = parts - set(PARTS)
    if unknown or not parts:
        print(
            f"selftest: --only: unknown part(s) {sorted(unknown)}; parts: {PARTS}", file=sys.stderr
        )
        return 2
    try:
        gpio, serial_cfg = _load_sections(args.config)
    except ValueError as exc:
        print(f"selftest: {exc}", file=sys.stderr)
        return 2
    if args.port:
        serial_cfg = msgspec.structs.replace(serial_cfg, port=args.port)

    def say(text: str) -> None:
        print(text, file=sys.stderr if args.json else sys.stdout, flush=True)

    checks = run_checks(
        gpio, serial_cfg, parts, timeout=args.timeout, simulate=args.simulate, say=say
    )
    failed = [c for c in checks if not c.ok]
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [asdict(c) for c in checks]}))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table("part", "check", "result", "detail", title="self-test")
        for c in checks:
            table.add_row(c.part, c.name, "[green]PASS" if c.ok else "[bold red]FAIL", c.detail)
        Console().print(table)
        print("all checks passed" if not failed else f"{len(failed)} check(s) FAILED")
    return 0 if not failed else 1
