"""Prometheus metrics of a running `simulate` (--metrics-port), scraped over HTTP on
loopback and parsed with prometheus_client's own text parser."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]


def scrape(url: str) -> dict[str, dict]:
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    out: dict[str, dict] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = tuple(sorted(sample.labels.items()))
            out.setdefault(sample.name, {})[key] = sample.value
    return out


def test_metrics_of_a_running_simulate(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoe_controller.cli", "simulate", "--state-dir",
         str(tmp_path / "s"), "--pace", "0.01", "--quiet", "--broker", "mqtt://127.0.0.1:9",
         "--metrics-port", "0", "--inject", "unreadable=2"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        url = None
        assert proc.stdout is not None
        for line in proc.stdout:
            m = re.match(r"simulate: metrics on (http://127\.0\.0\.1:\d+/metrics)", line)
            if m:
                url = m.group(1)
                break
        assert url, "simulate says where its metrics are"
        deadline = time.monotonic() + 60
        got: dict = {}
        while time.monotonic() < deadline:
            got = scrape(url)
            dealt = got.get("shoe_events_total", {}).get((("type", "card_dealt"),), 0)
            if dealt >= 40 and got.get("shoe_card_rejections_total"):
                break
            time.sleep(0.3)
        events = got["shoe_events_total"]
        assert events[(("type", "card_dealt"),)] >= 40
        assert events[(("type", "shoe_started"),)] == 1
        reads = got["shoe_card_reads_total"][(("source", "scanner"),)]
        assert reads >= events[(("type", "card_dealt"),)]  # burns are reads too
        assert got["shoe_card_rejections_total"][(("reason", "no_read"),)] >= 1
        hist = got["shoe_card_to_publish_seconds_count"][()]
        assert hist >= 40 and got["shoe_card_to_publish_seconds_sum"][()] > 0
        assert got["shoe_outbox_messages"][()] > 0  # the broker is unreachable
        assert got["shoe_broker_connected"][()] == 0
        assert got["shoe_link_up"][()] == 1
        assert got["shoe_disk_free_bytes"][()] > 0
        assert got["shoe_disk_reserve_bytes"][()] == 64 * 1024 * 1024
        assert got["shoe_disk_full"][()] == 0
        assert got["shoe_journal_last_seq"][()] > 40
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def test_an_open_round_is_never_counted_on_the_endpoint(tmp_path):
    """Issue 14 (local leaks), as for the status line: while a round is open a scrape
    shows what it showed when the round opened (no card counts, no seq or backlog that
    moved with the round's cards); the round's figures appear when it closes."""
    from shoe_controller.game.cards import parse_card
    from shoe_controller.game.inputs import CardSeen
    from shoe_controller.metrics import Metrics

    m = Metrics()
    m.on_events([{"type": "round_started"}])
    for _ in range(3):
        m.on_input(CardSeen(parse_card("QH"), source="scanner"), hold=True)
        m.on_events([{"type": "card_dealt"}], card_latency=0.003, hold=True)
    text = m.exposition().decode()
    assert 'type="card_dealt"' not in text and 'source=' not in text
    assert "shoe_card_to_publish_seconds_count 0.0" in text
    m.on_events([{"type": "result_confirmed"}])
    text = m.exposition().decode()
    assert 'shoe_events_total{type="card_dealt"} 3.0' in text
    assert "shoe_card_to_publish_seconds_count 3.0" in text
