"""The display page in a real headless Chromium against a real mosquitto (websockets).

A simulated shoe (the game core's Shoe over a seeded, shuffled 8-deck shoe) feeds the
display projection; a paho client publishes the retained status and display state as
the daemon's publisher does. The page must show the right result and the right Big Road,
recover by itself when the broker restarts, and say clearly when the feed is offline.
Screenshots go to the test's tmp_path (and test-output/ when it exists).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from shoe_controller.display.server import DisplayServer, serve
from shoe_controller.game.cards import ALL_CARDS
from shoe_controller.game.display_state import DisplayState, project, to_payload
from shoe_controller.game.inputs import CardSeen, CutCardSeen, NewShoe
from shoe_controller.game.roads import build_roads, roads_to_dict
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from tests.support.browser import save_artifact

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TABLE = "T9"
TOPIC_STATE = f"shoe/{TABLE}/display/state"
TOPIC_STATUS = f"shoe/{TABLE}/status"


class SimulatedTable:
    """The game core dealing a shuffled shoe, and a publisher of the public feed.

    Like the daemon's publisher it re-publishes the retained status and the latest
    display state on every (re)connect, and leaves an ``offline`` last will.
    """

    def __init__(self, port: int, seed: int = 7) -> None:
        self.shoe = Shoe(Rules())
        self.state = DisplayState(table=TABLE)
        cards: list[object] = [c for _ in range(8) for c in ALL_CARDS]
        random.Random(seed).shuffle(cards)
        cards.insert(len(cards) - 16, None)  # the cut card, 16 cards from the end
        self.cards = cards
        self._next = 0
        self._lock = threading.Lock()
        self.connected = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="sim-table",
                                  protocol=mqtt.MQTTv5)
        self.client.will_set(TOPIC_STATUS, json.dumps({"status": "offline"}), qos=1,
                             retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.reconnect_delay_set(0.2, 1)
        self.client.connect("127.0.0.1", port, keepalive=5)
        self.client.loop_start()
        assert self.connected.wait(10), "simulated table could not reach the broker"
        self._feed(self.shoe.apply(NewShoe()))

    def _on_connect(self, client, userdata, flags, reason, props) -> None:
        client.publish(TOPIC_STATUS, json.dumps({"status": "online"}), qos=1, retain=True)
        with self._lock:
            payload = json.dumps(to_payload(self.state))
        client.publish(TOPIC_STATE, payload, qos=1, retain=True)
        self.connected.set()

    def _feed(self, events) -> None:
        with self._lock:
            for ev in events:
                self.state = project(self.state, ev)
            payload = json.dumps(to_payload(self.state))
        self.client.publish(TOPIC_STATE, payload, qos=1, retain=True)

    def play_round(self) -> None:
        """Deal cards until the next round's result is confirmed (or the shoe ends);
        publish the display state once per round, as on_result release does."""
        released = []
        while True:
            card = self.cards[self._next]
            self._next += 1
            events = self.shoe.apply(CutCardSeen() if card is None else CardSeen(card))
            released += events
            if any(e.type in ("result_confirmed", "shoe_ended") for e in events):
                break
        self._feed(released)

    def offline(self) -> None:
        self.client.publish(TOPIC_STATUS, json.dumps({"status": "offline"}), qos=1,
                            retain=True).wait_for_publish(5)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture
def page_server(ws_broker, bundle) -> Iterator[DisplayServer]:
    srv = serve(0, f"ws://127.0.0.1:{ws_broker.ws_port}", TABLE, bind="127.0.0.1")
    yield srv
    srv.close()


@pytest.fixture
def browser_page(page_server, chromium) -> Iterator[object]:
    page = chromium.new_page(viewport={"width": 1920, "height": 1080})
    page.on("console", lambda m: print("browser:", m.type, m.text))
    page.goto(page_server.url)
    yield page
    page.close()


def screenshot(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    save_artifact(path)
    return path


def big_road_on_page(page) -> list[tuple[int, int, str, int]]:
    cells = page.eval_on_selector_all(
        "#big-road g.cell",
        "els => els.map(e => [+e.dataset.col, +e.dataset.row, e.dataset.outcome,"
        " +e.dataset.ties])")
    return [tuple(c) for c in cells]


def wait_round(page, rnd: int) -> None:
    page.wait_for_function(f"() => document.getElementById('result').dataset.round === '{rnd}'",
                           timeout=15_000)


def test_page_shows_result_and_big_road_after_several_rounds(ws_broker, browser_page,
                                                             tmp_path) -> None:
    page = browser_page
    table = SimulatedTable(ws_broker.port)
    try:
        page.wait_for_function("() => document.body.dataset.feed === 'live'", timeout=15_000)
        for _ in range(12):
            table.play_round()
        rnd = table.state.result.round
        wait_round(page, rnd)
        result = table.state.result
        banner = page.inner_text("#result")
        assert page.get_attribute("#result", "data-winner") == result.winner
        title = "TIE" if result.winner == "tie" else f"{result.winner.upper()} WINS"
        assert title in banner
        assert f"Player {result.player_total} – {result.banker_total} Banker" in banner
        # the Big Road drawn is the Big Road of the results, computed independently
        letters = "".join(r.outcome[0].upper() for r in table.state.results)
        expected = [(c["col"], c["row"], c["outcome"], c["ties"])
                    for c in roads_to_dict(build_roads(letters))["big_road"]]
        assert big_road_on_page(page) == expected
        assert len(expected) >= 8
        # cards of the last round, scores, statistics and shoe progress
        shown = page.eval_on_selector_all("#player-cards .card", "els => els.map(e => "
                                          "e.dataset.card)")
        assert shown == list(table.state.player_cards)
        assert page.inner_text("#player-score") == str(result.player_total)
        assert page.inner_text("#banker-score") == str(result.banker_total)
        assert page.inner_text("#stat-rounds") == "12"
        assert page.inner_text("#stat-banker") == str(letters.count("B"))
        progress = to_payload(table.state)["shoe_progress"]
        assert page.inner_text("#progress-text") == (
            f"{progress['cards_dealt']} / {progress['cards_total']} cards")
        # the core opens the next round: its bets are open
        assert page.get_attribute("#status", "data-status") == "bets_open"
        assert "PLACE YOUR BETS" in page.inner_text("#status")
        assert not page.locator("#offline-overlay").is_visible()
        png = screenshot(page, tmp_path, "display-after-12-rounds")
        assert png.stat().st_size > 20_000
    finally:
        table.close()


def test_page_recovers_by_itself_after_a_broker_restart(ws_broker, browser_page,
                                                        tmp_path) -> None:
    page = browser_page
    table = SimulatedTable(ws_broker.port, seed=11)
    try:
        for _ in range(3):
            table.play_round()
        wait_round(page, 3)
        ws_broker.stop()
        # the page says so, clearly, while the broker is gone
        page.wait_for_function("() => document.body.dataset.feed === 'offline'", timeout=15_000)
        assert page.locator("#offline-overlay").is_visible()
        assert "FEED OFFLINE" in page.inner_text("#offline-overlay")
        assert page.inner_text("#feed") == "OFFLINE"
        screenshot(page, tmp_path, "display-broker-down")
        ws_broker.start()  # same ports, a clean broker: no retained messages survive
        assert table.connected.wait(15)
        for _ in range(2):
            table.play_round()
        page.wait_for_function("() => document.body.dataset.feed === 'live'", timeout=20_000)
        wait_round(page, 5)
        assert not page.locator("#offline-overlay").is_visible()
        assert page.inner_text("#stat-rounds") == "5"
    finally:
        table.close()


def test_page_shows_the_shoe_controller_offline(ws_broker, browser_page, tmp_path) -> None:
    page = browser_page
    table = SimulatedTable(ws_broker.port, seed=3)
    try:
        table.play_round()
        page.wait_for_function("() => document.body.dataset.feed === 'live'", timeout=15_000)
        table.offline()  # what the broker publishes as the daemon's last will
        page.wait_for_function("() => document.body.dataset.feed === 'offline'", timeout=15_000)
        assert "shoe controller is offline" in page.inner_text("#offline-reason")
        screenshot(page, tmp_path, "display-controller-offline")
    finally:
        table.close()


def test_page_follows_the_real_simulate_command(ws_broker, bundle, chromium, tmp_path) -> None:
    """`shoe-controller simulate` (the real daemon, publisher and page server) deals a
    whole shoe; the page, opened while it deals, ends on the shoe's last result and the
    Big Road of every confirmed round read independently from the casino feed."""
    results: dict[int, str] = {}
    voided: set[int] = set()
    got_end = threading.Event()

    def on_message(client, userdata, msg) -> None:
        env = json.loads(msg.payload)
        ev = env["event"]
        if env["type"] == "round_result":
            results[ev["round"]] = ev["winner"]
        elif env["type"] == "round_voided":
            voided.add(ev["round"])
        elif env["type"] == "shoe_ended":
            got_end.set()

    casino = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    casino.on_message = on_message
    casino.connect("127.0.0.1", ws_broker.port)
    casino.subscribe(f"shoe/{TABLE}/casino/events", qos=1)
    casino.loop_start()
    # the browser is up before the shoe starts, so the page sees it dealt live
    page = chromium.new_page(viewport={"width": 1920, "height": 1080})
    sim = subprocess.Popen(
        [sys.executable, "-m", "shoe_controller.cli", "simulate", "--shoes", "1",
         "--pace", "0.04", "--seed", "5", "--broker",
         f"mqtt://127.0.0.1:{ws_broker.port}", "--table-id", TABLE, "--state-dir",
         str(tmp_path / "state"), "--display-port", "0", "--broker-ws",
         f"ws://127.0.0.1:{ws_broker.ws_port}", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = None
        assert sim.stdout is not None
        for line in sim.stdout:
            found = re.search(r"display page on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        assert url, "simulate did not say where the display page is"
        page.goto(url)
        page.wait_for_function("() => +document.body.dataset.round >= 10 && "
                               "document.body.dataset.feed === 'live'", timeout=60_000)
        screenshot(page, tmp_path, "display-simulated-live")
        rest, _ = sim.communicate(timeout=240)
        assert sim.returncode == 0, rest
        assert got_end.wait(10)
        page.wait_for_function("() => document.body.dataset.phase === 'shoe_ended'",
                               timeout=20_000)
        kept = [results[r] for r in sorted(results) if r not in voided]
        letters = "".join(w[0].upper() for w in kept)
        expected = [(c["col"], c["row"], c["outcome"], c["ties"])
                    for c in roads_to_dict(build_roads(letters))["big_road"]]
        assert len(kept) > 50
        shown = big_road_on_page(page)
        # the page shows the newest columns: compare the visible part
        first = min(c[0] for c in shown)
        assert shown == [c for c in expected if c[0] >= first]
        last_winner = results[max(results)]
        assert page.get_attribute("#result", "data-winner") == last_winner
        assert page.inner_text("#stat-rounds") == str(len(kept))
        # every state the real daemon published was signed and checked by the page
        # against the key its own server handed it
        verified, refused = page.evaluate(
            "() => [window.displayFeed.verified, window.displayFeed.refused]")
        assert verified > 0 and refused == 0
        assert page.evaluate("() => document.body.dataset.signed") == "verified"
        screenshot(page, tmp_path, "display-simulated-shoe")
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()
        casino.loop_stop()
        casino.disconnect()
        page.close()
