"""The control socket and `shoe-controller ctl` against a real daemon (issue 14, finding
3 and 4): manual entry only when a card is awaited, a void after the result only with the
key, every action journaled with its source and the peer's uid and pid (SO_PEERCRED,
checked against the pid of the `ctl` process the test started), no card of an open round
in the log or the status line."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from shoe_controller.control import MAX_REQUEST, ControlSocketInput, request
from shoe_controller.daemon import Daemon
from shoe_controller.dealer.config import GpioConfig
from shoe_controller.dealer.station import Station
from shoe_controller.game.cards import parse_card
from shoe_controller.game.inputs import CardSeen, NewShoe, UnreadableCard
from shoe_controller.game.rules import Rules
from shoe_controller.journal import Journal

RULES = Rules(burn="none", confirm="button")


class Table:
    """A daemon with mock-pin station and the control socket, its loop on a thread."""

    def __init__(self, tmp: Path, handlers: dict | None = None) -> None:
        self.dir = tmp
        self.daemon = Daemon(rules=RULES, journal=Journal.open(tmp / "j.sqlite3",
                                                               table_id="T1"))
        self.station = Station(GpioConfig(pin_factory="mock", bounce_time=0),
                               self.daemon.submit)
        self.daemon.station = self.station
        self.socket = str(tmp / "control")
        self.daemon.sources = [ControlSocketInput(
            self.socket, key_on=lambda: self.station.key_on, handlers=handlers)]
        self.daemon.start()
        self.thread = threading.Thread(target=self.daemon.run, daemon=True)
        self.thread.start()

    def feed(self, *inputs: Any) -> None:
        n = len(list(self.daemon.journal.replay()))
        for inp in inputs:
            self.daemon.submit(inp, "test")
        self.wait(lambda: self.daemon.queue.empty()
                  and len(list(self.daemon.journal.replay())) > n, "the inputs")

    def events(self) -> list[dict]:
        return [e.data for e in self.daemon.journal.replay()]

    def wait(self, cond: Any, what: str) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if cond():
                time.sleep(0.02)
                return
            time.sleep(0.01)
        raise AssertionError(f"timed out waiting for {what}")

    def close(self) -> None:
        self.daemon.stop()
        self.thread.join(10)
        self.daemon.close()


@pytest.fixture
def table(tmp_path: Path):
    t = Table(tmp_path)
    yield t
    t.close()


def ctl(table: Table, *words: str) -> tuple[int, str, int]:
    """`shoe-controller ctl` as its own process: (exit status, output, its pid)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "shoe_controller.cli", "ctl",
                             "--socket", table.socket, *words], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(timeout=60)
    return proc.returncode, out.strip(), proc.pid


def test_a_manual_card_is_refused_when_nothing_is_awaited_and_journaled_with_who(table):
    table.feed(NewShoe(), CardSeen(parse_card("2S")))  # round 1 deals normally
    rc, out, pid = ctl(table, "card", "QH")
    assert rc == 1 and out.startswith("refused: no card is awaited"), out
    fault = table.events()[-1]
    assert (fault["type"], fault["kind"], fault["source"]) == ("fault", "input_refused",
                                                                "socket")
    assert fault["operator"]["pid"] == pid and fault["operator"]["uid"] == os.getuid()
    assert not [e for e in table.events() if e["type"] == "card_dealt" and e["card"] == "QH"]


def test_the_awaited_card_is_entered_once_as_a_manual_card_dealt(table):
    table.feed(NewShoe(), CardSeen(parse_card("2S")), UnreadableCard("blur"))
    rc, out, pid = ctl(table, "card", "qh")
    assert (rc, out) == (0, "ok")
    resumed, dealt = table.events()[-2:]
    assert resumed["type"] == "round_resumed" and resumed["source"] == "socket"
    assert (dealt["type"], dealt["card"], dealt["hand"]) == ("card_dealt", "QH", "banker")
    assert dealt["source"] == "manual"
    assert dealt["operator"]["pid"] == pid and dealt["operator"]["uid"] == os.getuid()
    assert ctl(table, "card", "KH")[0] == 1  # only that one


def test_a_void_after_the_result_needs_the_key_turned(table):
    table.feed(NewShoe(), *(CardSeen(parse_card(c)) for c in ("9S", "QH", "KD", "7C")))
    assert table.events()[-1]["type"] == "round_result"  # awaiting confirmation
    rc, out, _ = ctl(table, "void", "wrong", "cards")
    assert rc == 1 and "needs the supervisor key" in out, out
    assert not [e for e in table.events() if e["type"] == "round_voided"]
    table.station.turn_key(True)  # the key: pauses play, and allows the void
    table.wait(lambda: table.events()[-1]["type"] == "round_paused", "the key's pause")
    assert table.events()[-1]["source"] == "key"
    rc, out, pid = ctl(table, "void", "wrong", "cards")
    assert (rc, out) == (0, "ok")
    voided = next(e for e in table.events() if e["type"] == "round_voided")
    assert (voided["reason"], voided["key"], voided["after_result"]) == (
        "wrong cards", True, True)
    assert voided["operator"]["pid"] == pid and voided["source"] == "socket"


def test_pause_and_resume_over_the_socket_are_audited(table):
    table.feed(NewShoe())
    assert ctl(table, "pause", "checking")[:2] == (0, "ok")
    assert ctl(table, "pause")[0] == 1  # already paused: refused, and said so
    rc, out, pid = ctl(table, "resume")
    assert (rc, out) == (0, "ok")
    last = table.events()[-1]
    assert last["type"] == "round_resumed" and last["operator"]["pid"] == pid
    rc, out, _ = ctl(table, "resume")
    assert (rc, out) == (1, "refused: nothing is paused")


def test_no_card_of_an_open_round_reaches_the_log_or_the_status_line(table, caplog):
    caplog.set_level(logging.DEBUG)
    table.feed(NewShoe())
    status = table.daemon.describe()
    table.feed(CardSeen(parse_card("8D")))
    in_play = table.daemon.describe()
    table.feed(CardSeen(parse_card("5C")), UnreadableCard("blur"))
    assert ctl(table, "card", "JH")[0] == 0
    assert ctl(table, "card", "AH")[0] == 1
    table.feed(CardSeen(parse_card("4S")))
    # the status line says a round is in play, and not how far it has got
    assert table.daemon.describe() == in_play and "in play" in in_play
    assert in_play.split("seq")[1] == status.split("seq")[1]
    text = caplog.text
    for code in ("8D", "5C", "JH", "AH", "4S", "'card", "jh"):
        assert code not in text, code
    assert "supervisor card from uid" in text


def test_the_request_format(tmp_path):
    seen = []
    t = Table(tmp_path, handlers={"status": lambda args, op: (
        seen.append((args, op.pid)), "ok\n{\"shoe\": 1}")[1]})
    try:
        assert request(t.socket, "status --json") == 'ok\n{"shoe": 1}'
        assert seen == [(["--json"], os.getpid())]
        assert request(t.socket, "dance").startswith("error: unknown command 'dance'")
        assert request(t.socket, "card 1X").startswith("error: '1X' is not")
        assert request(t.socket, "x" * (MAX_REQUEST + 10)).startswith("error: request longer")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:  # no newline, EOF
            s.connect(t.socket)
            s.sendall(b"pause")
            s.shutdown(socket.SHUT_WR)
            assert s.recv(100) == b"refused: pause before any shoe\n"
        assert os.stat(t.socket).st_mode & 0o777 == 0o660
    finally:
        t.close()


def test_ctl_says_when_no_daemon_listens(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "shoe_controller.cli", "ctl", "--state-dir",
                           str(tmp_path), "resume"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("shoe-controller ctl: cannot reach the daemon at ")
    assert "Traceback" not in proc.stderr
