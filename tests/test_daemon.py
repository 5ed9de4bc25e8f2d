"""The daemon's core loop and wiring, in process: resume, buttons, faults, notify, stop."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shoe_controller.daemon import Daemon, GameCore
from shoe_controller.daemon_inputs import CameraInput, ExitReadPairing, bridge_inputs
from shoe_controller.dealer.config import GpioConfig
from shoe_controller.dealer.station import Station
from shoe_controller.game.inputs import CardSeen, Fault, NewShoe, UnreadableCard
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import fold
from shoe_controller.journal import Journal
from shoe_controller.sdnotify import Notifier
from shoe_controller.sim import DealerView, VirtualDealer, direct_hands, parse_inject

ROOT = Path(__file__).resolve().parents[1]
RULES = Rules(confirm="button")


def new_daemon(path: Path, **kw: Any) -> Daemon:
    return Daemon(rules=RULES, journal=Journal.open(path, table_id="T1"), **kw)


class Running:
    """A daemon's core loop on a thread (the main thread keeps the test)."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        daemon.start()
        self.thread = threading.Thread(target=daemon.run, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.daemon.stop()
        self.thread.join(10)
        assert not self.thread.is_alive()


def deal(daemon: Daemon, seed: str, shoes: int = 1, stop_after: int | None = None,
         inject: str = "") -> VirtualDealer:
    """Run a virtual dealer against ``daemon`` until done (or ``stop_after`` events)."""
    dealer = VirtualDealer(direct_hands(daemon.submit), shoes=shoes, seed=seed, rules=RULES,
                           inject=parse_inject(inject))
    dealer.catch_up(e.data for e in daemon.journal.replay())
    daemon.observers.append(dealer.observe)
    t = threading.Thread(target=dealer.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 60
    while not dealer.done.is_set() and time.monotonic() < deadline:
        v = dealer.view
        if stop_after is not None and v.events >= stop_after and v.phase in ("initial", "draw"):
            dealer.stop()
            break
        time.sleep(0.001)
    t.join(10)
    assert dealer.error is None
    return dealer


def results(path: Path) -> list[dict]:
    with Journal.open(path, readonly=True) as j:
        return [e.data for e in j.replay() if e.type == "round_result"]


def test_resume_mid_round_gives_the_same_shoe_as_an_uninterrupted_run(tmp_path: Path):
    # Uninterrupted.
    ref = Running(new_daemon(tmp_path / "a.sqlite3"))
    deal(ref.daemon, "21")
    ref.stop()
    ref.daemon.close()
    # Interrupted mid-round, then a new daemon on the same journal.
    first = Running(new_daemon(tmp_path / "b.sqlite3"))
    deal(first.daemon, "21", stop_after=300)
    first.stop()
    mid_state = first.daemon.core.state
    first.daemon.close()
    assert mid_state.phase == "in_round" and mid_state.due() is not None
    second = new_daemon(tmp_path / "b.sqlite3")
    second.start()
    assert second.resumed_events >= 300
    assert second.core.state == mid_state
    with Journal.open(tmp_path / "b.sqlite3", readonly=True) as j:
        assert fold(RULES, (e.event() for e in j.replay())) == mid_state
    loop = threading.Thread(target=second.run, daemon=True)
    loop.start()
    deal(second, "21")
    second.stop()
    loop.join(10)
    second.close()
    a, b = results(tmp_path / "a.sqlite3"), results(tmp_path / "b.sqlite3")
    assert len(a) > 55
    assert a == b  # card for card, result for result


def test_station_buttons_and_leds_through_mock_pins(tmp_path: Path):
    daemon = new_daemon(tmp_path / "j.sqlite3")
    station = Station(GpioConfig(pin_factory="mock", bounce_time=0), daemon.submit)
    daemon.station = station
    run = Running(daemon)
    try:
        from shoe_controller.game.cards import parse_cards

        daemon.submit(NewShoe())
        # Burn indicator 2 burns 2; then a round: P 2H B KD P 3C B QS -> Player 5 draws.
        for c in parse_cards("2D 9S 9C 2H KD 3C QS"):
            daemon.submit(CardSeen(c))
        wait(lambda: station.led_values()["player_draws"], "the Player draws LED")
        assert not station.led_values()["banker_draws"]
        daemon.submit(CardSeen(parse_cards("4H")[0]))  # P 9 ... Banker 0 draws on 4
        wait(lambda: station.led_values()["banker_draws"], "the Banker draws LED")
        daemon.submit(CardSeen(parse_cards("5S")[0]))  # B 5: Player 9 wins
        wait(lambda: station.led_values()["player_wins"], "the Player wins LED")
        # The dealer presses confirm: a real mock pin driven low.
        pin = station.factory.pin(station.cfg.button_confirm)
        pin.drive_low()
        pin.drive_high()
        wait(lambda: last_type(daemon) in ("bets_open", "shoe_analysis"), "confirmation")
        types = journal_types(daemon)
        assert "result_confirmed" in types
        # A fault: fault LED and buzzer; the supervisor's key silences, then resumes.
        daemon.submit(CardSeen(parse_cards("6D")[0]))  # opens round 2
        daemon.submit(Fault("camera_lost", "test"))
        wait(lambda: station.led_values()["fault"] and station.lights.buzzer,
             "the fault LED and the buzzer")
        station.turn_key(True)
        wait(lambda: not station.lights.buzzer, "the buzzer to stop")
        assert station.led_values()["fault"]
        station.turn_key(False)
        wait(lambda: not station.led_values()["fault"], "the fault LED to go out")
        wait(lambda: last_type(daemon) == "round_resumed", "round_resumed")
    finally:
        run.stop()
        daemon.close()


def test_notify_ready_and_watchdog_come_from_the_core_loop(tmp_path: Path):
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(5)
        notifier = Notifier(env={"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "200000"})
        daemon = new_daemon(tmp_path / "j.sqlite3", notifier=notifier)
        run = Running(daemon)
        try:
            first = sock.recv(4096).decode()
            assert first.startswith("READY=1\nSTATUS=")
            got = [sock.recv(4096).decode() for _ in range(4)]
            assert "WATCHDOG=1" in got
            # A wedged loop stops the pings: block the loop inside an observer.
            gate, entered = threading.Event(), threading.Event()
            daemon.observers.append(lambda entries: (entered.set(), gate.wait(5)))
            daemon.submit(NewShoe())
            assert entered.wait(5)
            while True:  # drain what was sent before the loop wedged
                try:
                    sock.settimeout(0.15)
                    sock.recv(4096)
                except TimeoutError:
                    break
            with pytest.raises(TimeoutError):
                sock.settimeout(0.6)
                while True:
                    if sock.recv(4096) == b"WATCHDOG=1":
                        break
            gate.set()
        finally:
            run.stop()
            daemon.close()


def test_a_core_failure_on_one_input_does_not_stop_the_loop(tmp_path: Path, caplog):
    daemon = new_daemon(tmp_path / "j.sqlite3")
    daemon.core._decide = _raise_once(daemon.core._decide)
    daemon.start()
    daemon.submit(NewShoe())
    daemon.submit(NewShoe())
    daemon.drain()
    assert daemon.errors == 1
    types = journal_types(daemon)
    assert types[0] == "fault" and "shoe_started" in types
    fault = next(e.data for e in daemon.journal.replay() if e.type == "fault")
    assert fault["kind"] == "internal_error" and "injected core failure" not in fault["detail"]
    assert "RuntimeError on NewShoe()" in fault["detail"]
    daemon.close()


def test_camera_failure_is_a_fault_and_a_retry(tmp_path: Path):
    opened = []

    def source() -> Iterator[tuple[float, Any]]:
        opened.append(time.monotonic())
        raise OSError("/dev/video0: no such device")

    class Reader:
        def read(self, frame: Any) -> Any:  # pragma: no cover - no frame ever comes
            raise AssertionError

    from shoe_controller.vision.passes import PassTracker

    camera = CameraInput(source, Reader(), PassTracker(), max_backoff=0.2)
    daemon = new_daemon(tmp_path / "j.sqlite3", sources=[camera])
    run = Running(daemon)
    try:
        daemon.submit(NewShoe())
        wait(lambda: len(opened) >= 3, "the camera to be retried")
        wait(lambda: "fault" in journal_types(daemon), "a fault event")
        faults = [e.data for e in daemon.journal.replay() if e.type == "fault"]
        assert len(faults) == 1 and faults[0]["kind"] == "camera_lost"
        assert "no such device" in faults[0]["detail"]
        daemon.submit(UnreadableCard("still alive"))  # the loop goes on
        wait(lambda: journal_types(daemon).count("fault") >= 1 and daemon.inputs_handled >= 3,
             "the next input")
    finally:
        run.stop()
        daemon.close()


def test_serial_link_lost_and_back(tmp_path: Path):
    from firmware_bridge.config import SerialConfig
    from firmware_bridge.simulator import DeviceSimulator
    from shoe_controller.daemon_inputs import SerialInput
    from shoe_controller.vision.barcode import BarcodeMapping
    from shoe_controller.vision.config import BarcodeConfig

    sim = DeviceSimulator("T-1")
    path = sim.start()
    cfg = SerialConfig(port=path, exclusive=False, heartbeat_timeout=1.0,
                       reconnect_initial=0.05, reconnect_max=0.2)
    serial = SerialInput(cfg, mapping=BarcodeMapping(BarcodeConfig()))
    daemon = new_daemon(tmp_path / "j.sqlite3", sources=[serial])
    run = Running(daemon)
    try:
        assert serial.link_up.wait(10)
        sim.shoe_loaded()
        for code in ("D1-2D", "D1-9S", "D1-9C", "D1-2H"):  # indicator 2, burn 2, round 1
            sim.card_exit()
            sim.card_read(code)
        wait(lambda: "card_dealt" in journal_types(daemon), "a card over the serial link")
        sim.unplug()
        wait(lambda: "fault" in journal_types(daemon), "link_down as a fault")
        fault = next(e.data for e in daemon.journal.replay() if e.type == "fault")
        assert fault["kind"] == "link_down"
        assert "round_paused" in journal_types(daemon)
        sim.replug()
        wait(lambda: serial.link_up.is_set(), "the link to come back")
        sim.card_exit()  # a card that leaves unread: never lost silently
        wait(lambda: daemon.inputs_handled >= 7, "the unread card")
        types = journal_types(daemon)
        assert types.count("misdeal") == 1  # a card while paused is a misdeal, recorded
    finally:
        run.stop()
        daemon.close()
        sim.stop()


def test_sigterm_stops_simulate_cleanly(tmp_path: Path):
    state = tmp_path / "s"
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoe_controller.cli", "simulate", "--state-dir", str(state),
         "--pace", "0.02", "--quiet", "--broker", "mqtt://127.0.0.1:9"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        wait(lambda: _rows(state) > 20, "20 journaled events", timeout=60)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out + err
    assert "stopped after 0 of 1 shoe(s)" in out
    with Journal.open(state / "journal.sqlite3", readonly=True) as j:
        assert j.verify() == j.last_seq > 20


def test_a_tampered_journal_refuses_to_start(tmp_path: Path):
    daemon = new_daemon(tmp_path / "s" / "journal.sqlite3") if (tmp_path / "s").mkdir() is None \
        else None
    assert daemon is not None
    daemon.start()
    for inp in (NewShoe(), UnreadableCard("x"), UnreadableCard("y")):
        daemon.submit(inp)
    daemon.drain()
    daemon.close()
    conn = sqlite3.connect(tmp_path / "s" / "journal.sqlite3")
    with conn:
        conn.execute("UPDATE events SET body = replace(body, '\"decks\":8', '\"decks\":6') "
                     "WHERE seq = 1")
    conn.close()
    os.chmod(tmp_path / "s", 0o750)  # what the daemon makes and requires (issue 14)
    for f in (tmp_path / "s").iterdir():
        os.chmod(f, 0o640)
    proc = subprocess.run(
        [sys.executable, "-m", "shoe_controller.cli", "simulate", "--state-dir",
         str(tmp_path / "s"), "--broker", "mqtt://127.0.0.1:9", "--table-id", "T1"],
        capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr  # refusals at start: exit 2
    assert "refusing to start" in proc.stderr and "seq 1" in proc.stderr


def test_bridge_translation_and_exit_read_pairing():
    from firmware_bridge.events import (
        BridgeFault,
        ButtonPressed,
        CardRead,
        LidChanged,
        ShoeEmpty,
        ShoeLoaded,
    )
    from shoe_controller.vision.barcode import BarcodeMapping
    from shoe_controller.vision.config import BarcodeConfig

    m = BarcodeMapping(BarcodeConfig())
    assert bridge_inputs(CardRead(seq=1, t_us=0, symbology="code128", payload=b"D2-QH"), m) \
        == [(CardSeen(_card("QH"), None, "scanner"), "serial:card_read")]
    assert bridge_inputs(CardRead(seq=1, t_us=0, symbology="code128", payload=b"CUT"), m)[0][0] \
        .__class__.__name__ == "CutCardSeen"
    foreign = bridge_inputs(CardRead(seq=1, t_us=0, symbology="code128", payload=b"ZZ"), m)
    assert foreign[0][0].__class__.__name__ == "ForeignCard"
    assert bridge_inputs(CardRead(seq=1, t_us=0, symbology="code128", payload=b"QH")) == []
    assert bridge_inputs(ShoeLoaded(seq=2, t_us=0)) == [(NewShoe(), "serial:shoe_loaded")]
    assert bridge_inputs(LidChanged(seq=4, t_us=0, open=False)) == []
    (lid, origin), = bridge_inputs(LidChanged(seq=5, t_us=0, open=True))
    assert lid.kind == "lid_opened" and origin == "serial:lid"
    (empty, _), = bridge_inputs(ShoeEmpty(seq=6, t_us=0))
    assert empty.kind == "shoe_empty"
    assert bridge_inputs(ButtonPressed(seq=3, t_us=0, button="call_supervisor")) == []
    (fault, _), = bridge_inputs(BridgeFault(source="device", name="scanner_error"))
    assert fault == Fault("firmware_fault", "scanner_error")
    p = ExitReadPairing(window_us=200_000)  # device clock, µs
    unread = [UnreadableCard("card exit without a scanner read within 0.2 s")]
    card = CardSeen(_card("QH"), None, "scanner")
    assert p.exit(1_000_000) == [] and p.read(1_010_000, card, "D1-QH") == [card]
    assert p.exit(2_000_000) == []
    assert p.exit(2_100_000) == unread  # the card of 2.0 left unread: said before the next
    assert p.read(2_150_000, card, "D1-QH") == [card]
    assert p.clock(5_000_000) == []
    assert p.exit(6_000_000) == [] and p.clock(6_100_000) == [] and p.clock(6_250_000) == unread
    p.exit_sensor = False  # a shoe without an exit sensor: a read is a card
    assert p.read(7_000_000, card, "D1-QH") == [card] and p.clock(9_000_000) == []


def test_dealer_view_counts_every_card_that_left_the_shoe():
    v = DealerView(decks=8, burn="none").fold([
        {"type": "shoe_started", "shoe": 1, "decks": 8},
        {"type": "round_started", "round": 1},
        *[{"type": "card_dealt", "hand": h, "position": 1} for h in ("player", "banker")] * 2,
        {"type": "round_result", "winner": "tie"},
        {"type": "misdeal", "kind": "extra_card", "card": "4D", "policy": "carry"},
        {"type": "result_confirmed", "round": 1},
        {"type": "round_started", "round": 2},
        {"type": "card_dealt", "hand": "player", "position": 1, "card": "4D"},  # carried
        {"type": "card_dealt", "hand": "banker", "position": 1},
    ])
    assert v.consumed == 6 and v.phase == "initial" and v.round_cards == 2
    assert v.alarm == ("misdeal", "extra_card")
    v = v.apply({"type": "fault", "kind": "unreadable_card"})
    assert v.alarm == ("fault", "unreadable_card") and v.consumed == 6
    assert v.apply({"type": "round_resumed"}).alarm is None


def test_game_core_folds_what_it_decides():
    from shoe_controller.game.cards import parse_cards

    core = GameCore(Rules(burn="none"))
    journal: list[Any] = []
    for inp in [NewShoe(), *(CardSeen(c) for c in parse_cards("7S KC 9D 5D 3H"))]:
        events, core.state = core.decide(inp)
        raised, core.pstate, core.state = core.protect(events)
        journal += events + raised
    assert any(e.type == "shoe_analysis" for e in journal)  # the projection ran
    replay = GameCore(Rules(burn="none"))
    for ev in journal:
        replay.fold(ev)
    assert replay.state == core.state


# -- helpers -------------------------------------------------------------------------------


def control(path: Path, command: str) -> str:
    """Send one supervisor command to the daemon's control socket; its answer."""
    from shoe_controller.control import request

    return request(str(path), command)


def _card(code: str) -> Any:
    from shoe_controller.game.cards import parse_card

    return parse_card(code)


def _raise_once(fn: Any) -> Any:
    calls = []

    def wrapped(*a: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("injected core failure")
        return fn(*a)

    return wrapped


def _rows(state: Path) -> int:
    path = state / "journal.sqlite3"
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def journal_types(daemon: Daemon) -> list[str]:
    return [e.type for e in daemon.journal.replay()]


def last_type(daemon: Daemon) -> str | None:
    types = journal_types(daemon)
    return types[-1] if types else None


def wait(cond: Any, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


if os.environ.get("SHOE_DEBUG"):  # pragma: no cover
    import logging

    logging.basicConfig(level=logging.DEBUG)


def test_run_wiring_from_a_config_file_with_mock_pins_and_the_shoe_simulator(tmp_path: Path):
    """`shoe-controller run`'s assembly (build_daemon) on virtual hardware."""
    from firmware_bridge.simulator import DeviceSimulator
    from shoe_controller.config import load_config_text
    from shoe_controller.daemon import build_daemon

    sim = DeviceSimulator("RUN-1")
    path = sim.start()
    config = load_config_text(
        f'[table]\nid = "RUN-1"\n[rules]\nburn = "none"\n'
        f'[gpio]\npin_factory = "mock"\nbounce_time = 0\n'
        f'[serial]\nport = "{path}"\nexclusive = false\n'
        f'[mqtt]\nenabled = false\n', "run.toml")
    from shoe_controller.keys import init_keys
    init_keys(str(tmp_path))  # `shoe-controller keys init`
    daemon, extras = build_daemon(config, str(tmp_path), cards="scanner")
    run = Running(daemon)
    try:
        assert daemon.sources[0].link_up.wait(10)
        sim.shoe_loaded()
        for code in ("9S", "QH", "KD", "7C"):  # Player natural 9 v 7: the round is complete
            sim.card_exit()
            sim.card_read(f"D1-{code}")
        wait(lambda: "round_result" in journal_types(daemon), "the round's result")
        assert daemon.station.led_values()["player_wins"]
        result = next(e.data for e in daemon.journal.replay() if e.type == "round_result")
        assert (result["player"], result["banker"], result["winner"]) == (
            ["9S", "KD"], ["QH", "7C"], "player")
        # The supervisor's key pauses play: the shoe's draw lock engages until resumed.
        assert not sim.locked
        sim.card_exit()
        sim.card_read("D1-5C")  # opens round 2
        daemon.station.turn_key(True)
        wait(lambda: sim.locked, "the shoe's draw lock")
        daemon.station.turn_key(False)
        wait(lambda: not sim.locked, "the lock released")
        # A card leaves unread: the round waits for the supervisor to enter it, which
        # they do on the control socket (the key and buttons cannot name a card).
        sim.card_exit()
        wait(lambda: "unreadable_card" in [e.data.get("kind") for e in
                                           daemon.journal.replay()], "the unread card")
        assert control(tmp_path / "control", "card 1X").startswith("error: '1X' is not")
        assert control(tmp_path / "control", "card 7c") == "ok"
        wait(lambda: last_type(daemon) in ("card_dealt", "draw_prompt"), "the entered card")
        dealt = [e.data for e in daemon.journal.replay() if e.type == "card_dealt"]
        assert dealt[-1]["card"] == "7C" and dealt[-1]["round"] == 2
        assert "round_resumed" in journal_types(daemon)
        # The lid opens mid-shoe (cards may be added or taken): a fault, the alarm, and
        # the round paused with the shoe's draw lock engaged until the supervisor acts.
        sim.lid(True)
        wait(lambda: "lid_opened" in [e.data.get("kind") for e in daemon.journal.replay()
                                      if e.type == "fault"], "the lid's fault")
        assert daemon.station.led_values()["fault"] and daemon.lights.buzzer
        wait(lambda: sim.locked, "the draw lock after the lid opened")
        assert (tmp_path / "journal.sqlite3").exists()
    finally:
        run.stop()
        daemon.close()
        for extra in extras:
            extra.stop()
        sim.stop()


def test_synthetic_camera_reads_through_the_real_reader_and_pass_tracker(tmp_path: Path):
    """simulate --reader barcode's camera: frames -> zxing reader -> pass tracker."""
    from shoe_controller.sim.camera import SyntheticCamera

    camera = SyntheticCamera.for_reader("barcode", seed=3)
    daemon = new_daemon(tmp_path / "j.sqlite3", sources=[camera])
    run = Running(daemon)
    exits: list[float] = []
    try:
        daemon.submit(NewShoe())
        # Burn indicator 3H burns 3, then P 7S, B 2D.
        for label in ("3H", "4C", "5D", "6S", "7S", "2D", "UNREADABLE"):
            camera.show(label, then=lambda: (exits.append(time.monotonic()),
                                             camera.card_exit(time.monotonic())))
        wait(lambda: "fault" in journal_types(daemon), "the unreadable pass", timeout=60)
        entries = [e.data for e in daemon.journal.replay()]
        assert [e["card"] for e in entries if e["type"] in ("burn_indicator", "card_burned",
                                                            "card_dealt")] == \
            ["3H", "4C", "5D", "6S", "7S", "2D"]
        fault = next(e for e in entries if e["type"] == "fault")
        assert fault["kind"] == "unreadable_card"
        assert camera.frames > 7 * 6
    finally:
        run.stop()
        daemon.close()


def test_run_with_a_camera_that_is_not_there_is_a_fault_not_a_crash(tmp_path: Path):
    """`run --cards camera` on a machine without /dev/video9: camera_lost, and retrying."""
    from firmware_bridge.simulator import DeviceSimulator
    from shoe_controller.config import load_config_text
    from shoe_controller.daemon import build_daemon

    sim = DeviceSimulator("RUN-2")
    path = sim.start()
    config = load_config_text(
        f'[gpio]\npin_factory = "mock"\n[serial]\nport = "{path}"\nexclusive = false\n'
        f'[vision]\nreader = "barcode"\n[camera]\nsource = "usb"\ndevice = "/dev/video9"\n'
        f'[mqtt]\nenabled = false\n', "run.toml")
    daemon, _ = build_daemon(config, str(tmp_path), cards="camera", unsigned=True)
    run = Running(daemon)
    try:
        sim.shoe_loaded()
        wait(lambda: "fault" in journal_types(daemon), "camera_lost")
        fault = next(e.data for e in daemon.journal.replay() if e.type == "fault")
        assert fault["kind"] == "camera_lost" and "video9" in fault["detail"]
        assert run.thread.is_alive()
    finally:
        run.stop()
        daemon.close()
        sim.stop()


@pytest.mark.parametrize("rules", [
    {"extra_card": "void"}, {"extra_card": "carry"}, {"cut_card": "one_more_round"},
    {"rounds": "button"}, {"burn": "decks"}, {"burn": "none", "confirm": "auto"},
], ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()))
def test_the_virtual_dealer_finishes_a_shoe_under_every_house_rule(tmp_path: Path, rules: dict):
    table_rules = Rules(**{"confirm": "button", **rules})
    daemon = Daemon(rules=table_rules, journal=Journal.open(tmp_path / "j.sqlite3"))
    dealer = VirtualDealer(direct_hands(daemon.submit), shoes=1, seed=5, rules=table_rules,
                           inject=parse_inject("extra-card=2,unreadable=1,foreign=1"),
                           timeout=3)
    daemon.observers.append(dealer.observe)
    run = Running(daemon)
    threading.Thread(target=dealer.run, daemon=True).start()
    try:
        assert dealer.done.wait(60) and dealer.error is None
    finally:
        run.stop()
    types = journal_types(daemon)
    daemon.close()
    assert types.count("shoe_ended") == 1 and types.count("round_result") >= 55
    assert types.count("fault") >= 1 and types.count("integrity_alert") >= 1
    if rules.get("extra_card") == "void":
        assert types.count("round_voided") == types.count("misdeal") >= 1
