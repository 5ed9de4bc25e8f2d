"""The display page's languages are data files: complete, consistent, and covered by the
fonts they name (checked with fontconfig, independently of the browser).

Every ``static/i18n/<tag>.json`` must have exactly English's keys, the same ``{name}``
placeholders in each string, a meta block naming installed fonts, and every character it
can put on screen (plus digits and the few symbols the page adds) in one of those fonts.
The Chromium test (tests/e2e/test_display_languages.py) then checks that the browser
really draws each language's text with those fonts and that nothing overflows.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from functools import cache
from importlib import resources

import msgspec
import pytest

from shoe_controller.display.config import DisplayConfig, available_languages

REQUIRED = {"en", "zh-Hans", "zh-Hant", "th", "fil", "id", "ru", "es", "vi"}
PLACEHOLDER = re.compile(r"\{(\w+)\}")
#: characters the page draws besides the language's strings: digits and separators of
#: Intl numbers, percent, the currency signs of the usual tables, the dash of ranges
PAGE_CHARS = set("0123456789.,%-–·/ ₱฿$") | {"\u00a0", "\u202f"}


def language(tag: str) -> dict:
    root = resources.files("shoe_controller.display.static").joinpath("i18n")
    return json.loads(root.joinpath(f"{tag}.json").read_text(encoding="utf-8"))


@cache
def charset(family: str) -> frozenset[int]:
    """Code points of an installed font family (its regular face), per fontconfig."""
    out = ""
    for style in ("Regular", "Book"):  # DejaVu calls its regular face Book
        out = out or subprocess.run(
            ["fc-list", "-f", "%{charset}\n", f":family={family}:style={style}"],
            capture_output=True, text=True, check=True).stdout
    points: set[int] = set()
    for line in out.splitlines()[:1]:
        for part in line.split():
            lo, _, hi = part.partition("-")
            points.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return frozenset(points)


def test_every_market_has_a_language_file() -> None:
    assert set(available_languages()) >= REQUIRED
    for tag in available_languages():
        assert msgspec.convert({"language": tag}, DisplayConfig).languages() == (tag,)


@pytest.mark.parametrize("tag", sorted(REQUIRED))
def test_language_file_is_complete_and_consistent(tag: str) -> None:
    en, lang = language("en"), language(tag)
    assert lang["meta"]["tag"] == tag
    assert lang["meta"]["name"] and lang["meta"]["locale"].split("-")[0] == tag.split("-")[0]
    assert lang["meta"]["fonts"], "name the fonts that cover this script"
    if tag != "en":
        assert "native-speaking" in lang["meta"]["review"]
    assert set(lang["strings"]) == set(en["strings"]), set(lang["strings"]) ^ set(en["strings"])
    for key, text in lang["strings"].items():
        assert isinstance(text, str) and text.strip(), key
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(en["strings"][key])), key
        assert "<" not in text and ">" not in text, key  # text, never markup


def test_casino_terms_of_each_market() -> None:
    """The words players read at the table (issue 16)."""
    expect = {
        "zh-Hans": {"banker": "庄", "player": "闲", "tie_name": "和", "bet_pairs": "对子",
                    "stat_natural": "例牌", "big_road": "大路", "bead_plate": "珠盘路",
                    "big_eye_boy": "大眼仔", "small_road": "小路", "cockroach_pig": "蟑螂路"},
        "zh-Hant": {"banker": "莊", "player": "閒", "tie_name": "和", "bet_pairs": "對子",
                    "big_road": "大路", "bead_plate": "珠盤路", "cockroach_pig": "曱甴路"},
        "th": {"banker": "เจ้ามือ", "player": "ผู้เล่น", "tie_name": "เสมอ"},
        "vi": {"banker_name": "Nhà cái", "player_name": "Người chơi", "tie_name": "Hòa"},
        "es": {"banker_name": "Banca", "player_name": "Jugador", "tie_name": "Empate",
               "no_more_bets": "NO VA MÁS"},
        "ru": {"banker_name": "Банкир", "player_name": "Игрок", "tie_name": "Ничья"},
    }
    for tag, terms in expect.items():
        strings = language(tag)["strings"]
        for key, word in terms.items():
            assert strings[key] == word, (tag, key)


@pytest.mark.skipif(shutil.which("fc-list") is None, reason="fontconfig not installed")
@pytest.mark.parametrize("tag", sorted(REQUIRED))
def test_the_named_fonts_are_installed_and_cover_every_character(tag: str) -> None:
    lang = language(tag)
    fonts = lang["meta"]["fonts"]
    for family in fonts:
        assert charset(family), f"{tag}: font {family!r} is not installed (see .ci/run)"
    covered = frozenset().union(*(charset(f) for f in fonts))
    text = "".join(lang["strings"].values())
    chars = {c for c in PLACEHOLDER.sub("", text)} | PAGE_CHARS
    missing = sorted(c for c in chars if ord(c) not in covered)
    assert not missing, f"{tag}: {fonts} lack " + " ".join(f"U+{ord(c):04X} {c}"
                                                         for c in missing)
    # the cards' suits are drawn in DejaVu Sans
    assert {0x2660, 0x2665, 0x2666, 0x2663} <= charset("DejaVu Sans")
