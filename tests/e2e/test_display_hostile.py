"""A hostile display state cannot run script in the table display page (issue 14, point 2).

Stored XSS was: the page built HTML with innerHTML from payload fields, so a forged
retained state with ``<img src=x onerror=...>`` in ``result.round`` ran script on every
screen. Now the page builds its DOM with createElement/textContent only, type-checks every
state before drawing it, and the server's CSP forbids inline script anyway. This test
proves both layers separately in real Chromium against a real mosquitto:

- with the CSP switched off (``bypass_csp``), so only the page's own code stands between
  the payload and the DOM, hostile strings in every field of real states run nothing and
  never become elements; a state that does not match the published JSON Schema (the
  independent reference) is refused and the last good state stays on screen;
- with the CSP on, even HTML injected on purpose cannot run its inline handler;
- the positive control: the same payload injected as HTML into the unprotected page does
  run, so the detector would have caught a page that built HTML.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import paho.mqtt.client as mqtt
import pytest

from shoe_controller.display.server import DisplayServer, serve
from shoe_controller.game.rules import BET_NAMES
from shoe_controller.keys import SigningKey
from shoe_controller.publish.payloads import display_payload
from tests.support.display_states import TABLE, table_states

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PAYLOAD = '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">'
SCRIPT = "<script>window.__pwned=(window.__pwned||0)+1</script>"
TOPIC_STATE = f"shoe/{TABLE}/display/state"
TOPIC_STATUS = f"shoe/{TABLE}/status"
SCHEMA = json.loads(resources.files("shoe_controller.publish").joinpath(
    "schemas/display_state.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SIGNER = SigningKey.generate()
STATIC = Path(__file__).resolve().parents[2] / "shoe_controller" / "display" / "static"


def leaf_paths(obj: Any, path: tuple = ()) -> Iterator[tuple]:
    """Every leaf (string, number, boolean) of a JSON value; lists: their first item."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaf_paths(v, (*path, k))
    elif isinstance(obj, list):
        if obj:
            yield from leaf_paths(obj[0], (*path, 0))
    elif obj is not None:
        yield path


def replaced(obj: Any, path: tuple, value: Any) -> Any:
    out = copy.deepcopy(obj)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


def every_string_hostile(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: every_string_hostile(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [every_string_hostile(v) for v in obj]
    return PAYLOAD if isinstance(obj, str) else obj


def acceptable(state: dict) -> bool:
    """The independent reference: the published JSON Schema, plus two rules the page adds
    on purpose: the state is this table's, and every bet named is a bet of DESIGN.md."""
    published = json.loads(display_payload(state, SIGNER))  # as the publisher sends it
    return (VALIDATOR.is_valid(published) and state["table"] == TABLE
            and all(b in BET_NAMES for b in state["bets"]))


@pytest.fixture
def table_feed(ws_broker, bundle) -> Iterator[tuple[DisplayServer, mqtt.Client]]:
    srv = serve(0, f"ws://127.0.0.1:{ws_broker.ws_port}", TABLE, bind="127.0.0.1")
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", ws_broker.port)
    client.loop_start()
    client.publish(TOPIC_STATUS, json.dumps({"status": "online"}), qos=1,
                   retain=True).wait_for_publish(5)
    yield srv, client
    client.loop_stop()
    client.disconnect()
    srv.close()


def open_page(chromium: Any, url: str, *, csp: bool) -> Any:
    context = chromium.new_context(bypass_csp=not csp, viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    page.on("console", lambda m: print("browser:", m.type, m.text))
    page.goto(url)
    page.wait_for_function("() => window.displayFeed.ready && document.body.dataset.feed "
                           "=== 'live'", timeout=15_000)
    return page


def publish_state(client: mqtt.Client, state: Any) -> None:
    text = state if isinstance(state, str) else json.dumps(state)
    client.publish(TOPIC_STATE, text, qos=1, retain=True).wait_for_publish(5)


def counters(page: Any) -> tuple[int, int]:
    return tuple(page.evaluate("() => [window.displayFeed.messages, window.displayFeed.refused]"))


def injected_elements(page: Any) -> int:
    # the page's own scripts have a src; nothing else may be a script, img, iframe...
    return page.evaluate("() => document.querySelectorAll('img, iframe, object, embed, "
                         "script:not([src])').length")


def test_the_page_code_never_builds_html() -> None:
    code = (STATIC / "app.js").read_text() + (STATIC / "index.html").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                 "DOMParser", "createContextualFragment", "eval(", "new Function",
                 "setAttribute(\"on", "srcdoc"):
        assert sink not in code, sink
    assert not re.search(r"<script>(?!\s*</script>)", (STATIC / "index.html").read_text())


def test_hostile_states_run_no_script(table_feed, chromium, tmp_path) -> None:
    srv, client = table_feed
    states = table_states()
    good = states["result"]
    page = open_page(chromium, srv.url, csp=False)  # only the page's own code protects it
    try:
        publish_state(client, good)
        page.wait_for_function(f"() => document.body.dataset.round === '{good['round']}'",
                               timeout=15_000)
        shown_round = page.get_attribute("#result", "data-round")

        # over the broker: every string of the state hostile, then the exact case
        for hostile in (every_string_hostile(good),
                        replaced(good, ("result", "round"), PAYLOAD),
                        replaced(good, ("result", "round"), SCRIPT)):
            before = counters(page)
            publish_state(client, hostile)
            page.wait_for_function(f"() => window.displayFeed.refused > {before[1]}",
                                   timeout=15_000)
            assert counters(page)[0] == before[0]  # refused, not drawn
        assert page.get_attribute("#result", "data-round") == shown_round

        # every leaf of real states (result, paused, misdeal) in turn: hostile text
        variants, expected = [], []
        for base in ("result", "paused", "misdeal", "bets_open"):
            for path in leaf_paths(states[base]):
                for value in (PAYLOAD, SCRIPT):
                    v = replaced(states[base], path, value)
                    variants.append(json.dumps(v))
                    expected.append(acceptable(v))
        assert len(variants) > 200 and any(expected) and not all(expected)
        refused = page.evaluate("""async (texts) => {
            const out = [];
            for (const t of texts) {
              const before = window.displayFeed.refused;
              await window.displayFeed.receive(t);
              out.push(window.displayFeed.refused > before);
            }
            return out;
        }""", variants)
        wrong = [(json.loads(t), r) for t, r, ok in zip(variants, refused, expected,
                                                        strict=True) if r == ok]
        assert not wrong, f"{len(wrong)} states refused/accepted wrongly, e.g. {wrong[0]}"
        # and a hostile pause reason that was drawn is shown as the plain "check needed"
        pause = replaced(states["paused"], ("pause_reason",), PAYLOAD)
        page.evaluate("(t) => window.displayFeed.receive(t)", json.dumps(pause))
        assert page.get_attribute("#status", "data-status") == "paused"
        assert "A check is needed" in page.inner_text("#status")
        assert "onerror" not in page.inner_text("body")

        assert page.evaluate("() => window.__pwned") is None, "hostile state ran script"
        # this page server has no key to check states with: the screen says so
        assert page.inner_text("#feed") == "LIVE · UNSIGNED"
        assert injected_elements(page) == 0
        path = tmp_path / "display-after-hostile-states.png"
        page.screenshot(path=str(path))

        # positive control: the same payload, injected as HTML, does run in this page
        page.evaluate("(p) => document.body.insertAdjacentHTML('beforeend', p)", PAYLOAD)
        page.wait_for_function("() => window.__pwned === 1", timeout=5_000)
    finally:
        page.context.close()


def test_the_csp_blocks_inline_script_even_if_html_got_in(table_feed, chromium) -> None:
    srv, _client = table_feed
    page = open_page(chromium, srv.url, csp=True)
    try:
        violations = page.evaluate("""(payload) => new Promise((ok) => {
            const seen = [];
            document.addEventListener('securitypolicyviolation',
                                      (e) => seen.push(e.violatedDirective));
            document.body.insertAdjacentHTML('beforeend', payload);
            setTimeout(() => ok(seen), 1500);
        })""", PAYLOAD)
        assert page.evaluate("() => window.__pwned") is None
        assert any(v.startswith("script-src") for v in violations), violations
    finally:
        page.context.close()


class _ForgedId:
    """A key that signs with its own private half but claims another key's id."""

    def __init__(self, key: SigningKey, claimed: str) -> None:
        self._key, self.key_id = key, claimed

    def sign(self, data: bytes) -> bytes:
        return self._key.sign(data)


def python_verifies(text: bytes, pinned: SigningKey) -> bool:
    """The reference check of docs/mqtt.md, in Python: one sig member, the key id pinned,
    not unsigned, the Ed25519 signature over the text with the member cut out."""
    found = re.findall(rb'"sig":"([0-9a-f]{128})"', text)
    if len(found) != 1:
        return False
    member = b'"sig":"' + found[0] + b'"'
    cut = text.replace(member + b",", b"", 1) if member + b"," in text else \
        text.replace(b"," + member, b"", 1)
    msg = json.loads(text)
    return (msg.get("key_id") == pinned.key_id and "unsigned" not in msg
            and pinned.public.verify(bytes.fromhex(found[0].decode()), cut))


def test_a_forged_display_state_is_refused(ws_broker, bundle, chromium) -> None:
    """The page pins the device's public key from its own server (never the feed) and
    draws only states whose Ed25519 signature verifies (WebCrypto)."""
    import base64

    device, other = SigningKey.generate(), SigningKey.generate()
    srv = serve(0, f"ws://127.0.0.1:{ws_broker.ws_port}", TABLE, bind="127.0.0.1",
                verify_keys={device.key_id: base64.b64encode(device.public.raw).decode()})
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", ws_broker.port)
    client.loop_start()
    client.publish(TOPIC_STATUS, json.dumps({"status": "online"}), qos=1,
                   retain=True).wait_for_publish(5)
    states = table_states()
    result, voided = states["result"], states["voided"]
    good = display_payload(result, device)
    tampered = good.replace(b'"winner":"' + result["result"]["winner"].encode(),
                            b'"winner":"tie', 1)
    assert tampered != good
    cases = [
        ("signed by the device", good),
        ("a result changed after signing", tampered),
        ("signed by another key", display_payload(voided, other)),
        ("another key claiming the device's id", display_payload(voided, _ForgedId(
            other, device.key_id))),
        ("unsigned", display_payload(voided, None)),
        ("signature removed", json.dumps({k: v for k, v in json.loads(
            display_payload(voided, device)).items() if k != "sig"}).encode()),
        ("signed but malformed", display_payload(replaced(voided, ("round",), PAYLOAD),
                                                 device)),
        ("signed by the device, next state", display_payload(voided, device)),
    ]
    verdicts = [python_verifies(p, device) and acceptable(json.loads(p)) for _, p in cases]
    assert verdicts == [True, False, False, False, False, False, False, True]
    page = open_page(chromium, srv.url, csp=True)
    try:
        for (what, payload), expected in zip(cases, verdicts, strict=True):
            before = counters(page)
            client.publish(TOPIC_STATE, payload, qos=1, retain=True).wait_for_publish(5)
            page.wait_for_function(
                f"() => window.displayFeed.messages + window.displayFeed.refused > "
                f"{sum(before)}", timeout=15_000)
            drawn = counters(page)[0] > before[0]
            assert drawn == expected, what
            if drawn:
                assert page.evaluate("() => document.body.dataset.round") == str(
                    json.loads(payload)["round"]), what
        assert page.evaluate("() => window.displayFeed.verified") == 3  # incl. malformed
        assert page.get_attribute("#feed", "class") == "feed live"  # checked: no warning
        assert page.evaluate("() => document.body.dataset.phase") == "voided"
    finally:
        page.context.close()
        client.loop_stop()
        client.disconnect()
        srv.close()
