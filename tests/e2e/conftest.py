"""One headless Chromium for every display page test (Debian's /usr/bin/chromium driven by
Playwright; never ``playwright install``) per test module: each test opens its own pages
in it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """The browser a test module shares (a Playwright ``Browser``); module-scoped so that
    no Playwright event loop outlives the display tests."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def bundle() -> None:
    """The page's MQTT client bundle (the Makefile's install step normally built it)."""
    from shoe_controller.display import build as display_build
    from shoe_controller.display.server import bundle_present

    if not bundle_present():
        display_build.build(quiet=True)
    assert bundle_present()

