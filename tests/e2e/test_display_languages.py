"""Every language x every table state in real Chromium: right `<html lang>`, no text out
of its box, every glyph drawn by a font the language names (no fallback, no tofu box),
numbers formatted for the locale; screenshots of every state in English, Traditional
Chinese and Thai (and a portrait screen) saved as artifacts to be looked at.

One browser, one page per language; states are fed through the page's own message path
(``displayFeed.receive``, the same as a broker message) while a real mosquitto keeps the
page LIVE. The text-overflow check measures each text node's own rendered extent (a DOM
Range), not the element the page shrinks, so it catches what the page's fitting misses.
Font use is read from Chromium itself (DevTools ``CSS.getPlatformFontsForNode``); that
those fonts hold every character is checked with fontconfig in
tests/test_display_languages.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest

from shoe_controller.display.server import DisplayServer, bet_last_rounds, serve
from shoe_controller.game.rules import Rules
from tests.support.browser import save_artifact
from tests.support.display_states import STATE_NAMES, TABLE, table_states

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

LANGUAGES = ("en", "zh-Hans", "zh-Hant", "th", "fil", "id", "ru", "es", "vi")
SCREENSHOTS = ("en", "zh-Hant", "th")
LIMITS = {"player": [100, 50000], "banker": [100, 50000], "tie": [50, 5000],
          "pairs": [50, 2500], "bonus": [50, 2500]}
#: the digit group separator CLDR gives each locale (what Intl must produce for 50000)
GROUPING = {"en": ",", "zh-Hans": ",", "zh-Hant": ",", "th": ",", "fil": ",", "id": ".",
            "ru": "\u00a0", "es": ".", "vi": "."}
#: containers a text must stay inside (besides its own element and the screen)
BOXES = ("header#top, #status, #last-round, .hand, #centre, .result, .prompt, #limits, "
         ".road, .ask, #stats, #offline-overlay .box")

OVERFLOW_JS = """(boxes) => {
  const bad = [];
  const screen = {left: 0, top: 0, right: innerWidth, bottom: innerHeight};
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const out = (r, b, vertical) => r.left < b.left - 1 || r.right > b.right + 1 ||
    (vertical && (r.top < b.top - 1 || r.bottom > b.bottom + 1));
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const e = n.parentElement;
    if (e.closest('svg, script, [hidden]')) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (!r.width && !r.height) continue;
    const name = e.id || e.className || e.tagName;
    // its own element horizontally (the glyphs' content area may be taller than a
    // line-height:1 box); every container around it and the screen both ways
    if (out(r, e.getBoundingClientRect(), false)) bad.push(['element', name, n.textContent]);
    for (let box = e.closest(boxes); box;
         box = box.parentElement && box.parentElement.closest(boxes)) {
      if (out(r, box.getBoundingClientRect(), true)) {
        bad.push([box.id || box.className, name, n.textContent]);
      }
    }
    if (out(r, screen, true)) bad.push(['screen', name, n.textContent]);
  }
  return bad;
}"""


def meta(tag: str) -> dict:
    root = resources.files("shoe_controller.display.static").joinpath("i18n")
    return json.loads(root.joinpath(f"{tag}.json").read_text(encoding="utf-8"))["meta"]


@pytest.fixture(scope="module")
def display(bundle) -> Iterator[DisplayServer]:
    from tests.support.broker import Mosquitto

    with Mosquitto(websockets=True) as broker:
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        client.connect("127.0.0.1", broker.port)
        client.loop_start()
        client.publish(f"shoe/{TABLE}/status", json.dumps({"status": "online"}), qos=1,
                       retain=True).wait_for_publish(5)
        srv = serve(0, f"ws://127.0.0.1:{broker.ws_port}", TABLE, bind="127.0.0.1",
                    limits=LIMITS, currency="PHP", bet_last_rounds=bet_last_rounds(Rules()))
        try:
            yield srv
        finally:
            srv.close()
            client.loop_stop()
            client.disconnect()


def open_page(chromium: Any, url: str, viewport: dict[str, int]) -> Any:
    page = chromium.new_page(viewport=viewport)
    page.requested = []  # every URL the page fetches (it must fetch nothing elsewhere)
    page.on("request", lambda r: page.requested.append(r.url))
    page.on("console", lambda m: print("browser:", m.type, m.text) if m.type == "error"
            else None)
    page.goto(url)
    page.wait_for_function("() => window.displayFeed.ready && "
                           "document.body.dataset.feed === 'live'", timeout=20_000)
    return page


def show(page: Any, state: dict) -> None:
    before = page.evaluate("() => window.displayFeed.messages")
    page.evaluate("(t) => window.displayFeed.receive(t)", json.dumps(state))
    assert page.evaluate("() => window.displayFeed.messages") == before + 1, "refused"


def fonts_used(cdp: Any, page: Any, checked: set[str]) -> dict[str, set[str]]:
    """Family -> texts Chromium drew with it, for every element holding a text not in
    ``checked`` yet (which it adds to)."""
    texts = page.evaluate("""(checked) => {
      const seen = new Set(checked), out = [];
      for (const e of document.querySelectorAll('[data-gc]')) e.removeAttribute('data-gc');
      for (const e of document.body.querySelectorAll('*')) {
        if (e.closest('[hidden]')) continue;
        const own = [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent)
          .join('').trim();
        if (!own || seen.has(own)) continue;
        seen.add(own);
        e.setAttribute('data-gc', String(out.length));
        out.push(own);
      }
      return out;
    }""", sorted(checked))
    checked.update(texts)
    root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    ids = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-gc]"})["nodeIds"]
    used: dict[str, set[str]] = {}
    assert len(ids) == len(texts)
    for node, text in zip(ids, texts, strict=True):  # both in document order
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        for f in fonts:
            if f["glyphCount"]:
                used.setdefault(f["familyName"], set()).add(text)
    return used


def test_every_language_renders_every_state(display, chromium, tmp_path: Path) -> None:
    states = table_states()
    problems: list[str] = []
    for tag in LANGUAGES:
        page = open_page(chromium, display.url + f"?lang={tag}", {"width": 1920, "height": 1080})
        cdp = page.context.new_cdp_session(page)
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        allowed = set(meta(tag)["fonts"]) | {"DejaVu Sans"}  # + the cards' suits
        checked: set[str] = set()
        try:
            assert page.evaluate("() => document.documentElement.lang") == tag
            for name in STATE_NAMES:
                show(page, states[name])
                where = f"{tag}/{name}"
                assert page.evaluate("() => document.documentElement.lang") == tag, where
                for kind, element, text in page.evaluate(OVERFLOW_JS, BOXES):
                    problems.append(f"{where}: text out of its {kind} ({element}): {text!r}")
                for family, texts in fonts_used(cdp, page, checked).items():
                    if family not in allowed:
                        problems.append(f"{where}: drawn in {family!r} (fallback): "
                                        f"{sorted(texts)[:3]}")
                if tag in SCREENSHOTS:
                    path = tmp_path / f"{tag}-{name}.png"
                    page.screenshot(path=str(path))
                    save_artifact(path, "display")
            # nothing (no font, no script) comes from anywhere but the page's own server
            origin = display.url.rstrip("/")
            assert page.requested and all(u.startswith(origin + "/")
                                          for u in page.requested), page.requested
            assert any("/i18n/" + tag in u for u in page.requested)
            # numbers by Intl for the locale: the limits read "50<group>000"
            limits = page.inner_text("#limits")
            assert f"50{GROUPING[tag]}000" in limits, (tag, limits)
        finally:
            page.close()
    assert not problems, "\n".join(problems[:40])


def test_portrait_screen(display, chromium, tmp_path: Path) -> None:
    states = table_states()
    for tag in ("en", "zh-Hant", "th"):
        page = open_page(chromium, display.url + f"?lang={tag}", {"width": 1080, "height": 1920})
        try:
            for name in ("bets_open", "player_draws", "misdeal", "shoe_ended"):
                show(page, states[name])
                bad = page.evaluate(OVERFLOW_JS, BOXES)
                assert not bad, (tag, name, bad[:5])
                # stacked: the hands side by side above the centre, the roads below
                player, centre = (page.locator(s).bounding_box() for s in ("#player", "#centre"))
                assert centre["y"] >= player["y"] + player["height"] - 1
                path = tmp_path / f"portrait-{tag}-{name}.png"
                page.screenshot(path=str(path))
                save_artifact(path, "display")
        finally:
            page.close()


def test_a_screen_alternates_its_languages_and_lang_overrides(bundle, chromium) -> None:
    srv = serve(0, "", TABLE, bind="127.0.0.1", language=["zh-Hant", "en"],
                language_seconds=2)
    try:
        page = chromium.new_page()
        try:
            page.goto(srv.url)
            page.wait_for_function("() => document.documentElement.lang === 'zh-Hant'",
                                   timeout=10_000)
            assert page.inner_text("#banker h2") == "莊"
            page.wait_for_function("() => document.documentElement.lang === 'en'",
                                   timeout=5_000)
            assert page.inner_text("#banker h2") == "BANKER"
            page.wait_for_function("() => document.documentElement.lang === 'zh-Hant'",
                                   timeout=5_000)
            page.goto(srv.url + "?lang=vi")
            page.wait_for_function("() => window.displayFeed.ready", timeout=10_000)
            assert page.evaluate("() => document.documentElement.lang") == "vi"
            assert page.inner_text("#banker h2") == "NHÀ CÁI"
        finally:
            page.close()
    finally:
        srv.close()
