"""The publisher's cached display encoding gives exactly the bytes of the plain one."""

from __future__ import annotations

from pathlib import Path

from shoe_controller.game.display_state import DisplayState, project, to_payload
from shoe_controller.game.events import event_to_dict
from shoe_controller.game.inputs import CardSeen, NewShoe
from shoe_controller.game.rules import Rules
from shoe_controller.game.shoe import Shoe
from shoe_controller.journal import Journal
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.payloads import display_payload
from shoe_controller.publish.publisher import Publisher
from shoe_controller.sim import shuffled_shoe
from tests.test_publish_helpers import fixed_key


def test_cached_roads_encoding_matches_full_encoding_through_a_shoe(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path / "j.sqlite3"), table_id="T1")
    publisher = Publisher(journal, MqttConfig(enabled=False), "T1", key=fixed_key(1))
    try:
        shoe = Shoe(Rules(burn="none"))
        state = DisplayState(table="T1")
        checked = rounds = 0
        for inp in [NewShoe(), *(CardSeen(c, None, "t") for c in shuffled_shoe("enc", 1)[:120])]:
            for event in shoe.apply(inp):
                data = event_to_dict(event)
                rounds += data["type"] == "result_confirmed"
                state = project(state, data)
                assert publisher._encode_display(state) == display_payload(
                    to_payload(state), fixed_key(1))
                checked += 1
        assert rounds >= 10 and len(state.results) >= 10  # the roads really changed
        assert checked > 100
    finally:
        publisher.stop()
        journal.close()


def test_a_value_that_looks_like_the_roads_mark_does_not_confuse_it(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path / "j.sqlite3"), table_id="T1")
    publisher = Publisher(journal, MqttConfig(enabled=False), "T1", key=fixed_key(1))
    try:
        state = DisplayState(table="T1", notice="\x00roads\x00")
        assert publisher._encode_display(state) == display_payload(to_payload(state), fixed_key(1))
    finally:
        publisher.stop()
        journal.close()


def test_deferred_display_state_is_staged_by_stage_display_or_flush(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path / "j.sqlite3"), table_id="T1")
    config = MqttConfig(url="mqtt://127.0.0.1:1", release="per_card")  # no broker: rows stay
    publisher = Publisher(journal, config, "T1", key=fixed_key(1))
    try:
        publisher.defer_display = True
        publisher.append([{"type": "shoe_started", "shoe": 1, "decks": 8},
                          {"type": "round_started", "shoe": 1, "round": 1}])
        assert publisher.pending() == 2  # the casino messages only
        assert publisher.display_pending_since is not None
        publisher.stage_display()
        assert publisher.pending() == 3 and publisher.display_pending_since is None
        publisher.append([{"type": "card_dealt", "shoe": 1, "round": 1, "hand": "player",
                           "position": 1, "card": "QH", "orientation": None}])
        assert publisher.pending() == 4
        publisher.flush(0.01)  # stages the waiting display state (it replaces the old one)
        assert publisher.pending() == 4 and publisher.display_pending_since is None
        expected = display_payload(to_payload(publisher._display), fixed_key(1))
        assert publisher._display_bytes == expected
        assert b'"cards":["QH"]' in expected
    finally:
        publisher.stop(timeout=0.5)
        journal.close()
