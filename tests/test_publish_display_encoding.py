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


def test_cached_roads_encoding_matches_full_encoding_through_a_shoe(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path / "j.sqlite3"), table_id="T1")
    publisher = Publisher(journal, MqttConfig(enabled=False), "T1", hmac_key=b"k")
    try:
        shoe = Shoe(Rules(burn="none"))
        state = DisplayState(table="T1")
        checked = rounds = 0
        for inp in [NewShoe(), *(CardSeen(c, None, "t") for c in shuffled_shoe("enc", 1)[:120])]:
            for event in shoe.apply(inp):
                data = event_to_dict(event)
                rounds += data["type"] == "result_confirmed"
                state = project(state, data)
                assert publisher._encode_display(state) == display_payload(to_payload(state))
                checked += 1
        assert rounds >= 10 and len(state.results) >= 10  # the roads really changed
        assert checked > 100
    finally:
        publisher.stop()
        journal.close()


def test_a_value_that_looks_like_the_roads_mark_does_not_confuse_it(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path / "j.sqlite3"), table_id="T1")
    publisher = Publisher(journal, MqttConfig(enabled=False), "T1", hmac_key=b"k")
    try:
        state = DisplayState(table="T1", notice="\x00roads\x00")
        assert publisher._encode_display(state) == display_payload(to_payload(state))
    finally:
        publisher.stop()
        journal.close()
