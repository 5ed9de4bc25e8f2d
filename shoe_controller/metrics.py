"""Prometheus metrics of the daemon (``prometheus_client``), served over HTTP on loopback
by default (``[metrics]``; `simulate --metrics-port`).

Counted as they happen (a dictionary lookup and an add on the core loop's thread):
journaled events by type, card reads by source and rejections by reason, the card's
time from the edge's read to its message handed to the broker's socket (a histogram);
what happens while a round is open is added when the round closes, and the journal's
seq and the outbox backlog stay as they were when it opened, so the endpoint never
tells how many cards an unconfirmed round has had (issue 14, as the status line).
Read when scraped (nothing on the card's path): the outbox backlog, free space and the
reserve, whether play is stopped for a full disk, the shoe link and its draw lock, the
broker connection and its disconnects, the journal's last seq.

>>> from shoe_controller.game.inputs import UnreadableCard
>>> m = Metrics()
>>> m.on_input(UnreadableCard("blur"))
>>> m.on_events([{"type": "card_dealt"}, {"type": "card_dealt"}], card_latency=0.004)
>>> text = m.exposition().decode()
>>> 'shoe_events_total{type="card_dealt"} 2.0' in text
True
>>> 'shoe_card_rejections_total{reason="unreadable"} 1.0' in text
True
>>> 'shoe_card_to_publish_seconds_count 1.0' in text
True
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Annotated, Any

import msgspec

__all__ = ["Metrics", "MetricsConfig"]

log = logging.getLogger("shoe_controller.metrics")


class MetricsConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[metrics]``: the Prometheus endpoint (``GET /metrics``)."""

    #: HTTP port of the metrics endpoint; 0 = not served.
    port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 0
    #: Address it binds: loopback by default (let a local agent or an SSH tunnel scrape
    #: it; bind another address only behind a firewall: the figures are not public).
    bind: str = "127.0.0.1"


#: Seconds: the card-to-publish histogram's buckets (a card's budget is ~10 ms).
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0)


def _reason(inp: Any) -> tuple[str, str] | None:
    """("read", source) or ("reject", reason) for a card input, else None."""
    kind = type(inp).__name__
    if kind == "CardSeen":
        return "read", str(getattr(inp, "source", "") or "unknown")
    if kind == "ManualCard":
        return "read", "manual"
    if kind == "UnreadableCard":
        why = str(getattr(inp, "reason", "") or "")
        return "reject", "no_read" if "without a scanner read" in why else "unreadable"
    if kind == "ForeignCard":
        return "reject", "foreign"
    return None


class Metrics:
    """The daemon's metrics in a registry of their own (several daemons per process in
    tests). ``daemon``: read at scrape time for the gauges (may be set later)."""

    def __init__(self, daemon: Any = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.daemon = daemon
        self.registry = CollectorRegistry()
        self.events = Counter("shoe_events", "Domain events journaled, by type", ["type"],
                              registry=self.registry)
        self.reads = Counter("shoe_card_reads", "Cards read, by source", ["source"],
                             registry=self.registry)
        self.rejections = Counter("shoe_card_rejections", "Card passes not taken as a card, "
                                  "by reason", ["reason"], registry=self.registry)
        self.latency = Histogram("shoe_card_to_publish_seconds", "A card's time from the "
                                 "edge's read to its message handed to the broker's socket "
                                 "(journal fsync included)", buckets=LATENCY_BUCKETS,
                                 registry=self.registry)
        self._event_children: dict[str, Any] = {}
        #: counts of an open round, added when it closes (nothing of an unconfirmed
        #: round may be read off the endpoint, as off the status line)
        self._held: list[tuple[Any, tuple[Any, ...]]] = []
        self.registry.register(_Gauges(self))
        self.server: Any = None
        #: (port, address) to serve on when the daemon starts (None: not served)
        self.bind_to: tuple[int, str] | None = None
        #: the port served on (once serving)
        self.port: int | None = None

    def on_input(self, inp: Any, hold: bool = False) -> None:
        """Count a card input; ``hold`` (a round is open): only once the round closes,
        so a scrape never tells how many cards an unconfirmed round has had."""
        got = _reason(inp)
        if got is None:
            return
        if hold:
            self._held.append((self.on_input, (inp,)))
            return
        self.release()
        what, label = got
        (self.reads if what == "read" else self.rejections).labels(label).inc()

    def on_events(self, events: Sequence[Any], card_latency: float | None = None,
                  hold: bool = False) -> None:
        """Count journaled events (and a card's latency); ``hold`` as in
        :meth:`on_input`.

        >>> m = Metrics()
        >>> m.on_events([{"type": "card_dealt"}], card_latency=0.004, hold=True)
        >>> 'shoe_events_total{type="card_dealt"}' in m.exposition().decode()
        False
        >>> m.on_events([{"type": "result_confirmed"}])
        >>> 'shoe_events_total{type="card_dealt"} 1.0' in m.exposition().decode()
        True
        """
        if hold:
            self._held.append((self.on_events, (list(events), card_latency)))
            return
        self.release()
        from shoe_controller.dealer.lights import event_type

        children = self._event_children
        for ev in events:
            t = event_type(ev)
            child = children.get(t)
            if child is None:
                child = children[t] = self.events.labels(t)
            child.inc()
        if card_latency is not None:
            self.latency.observe(card_latency)

    def release(self) -> None:
        """Count what was held while a round was open (the round has closed)."""
        held, self._held = self._held, []
        for fn, args in held:
            fn(*args)

    def exposition(self) -> bytes:
        """The text format a scrape gets."""
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))

    def serve(self, port: int, bind: str = "127.0.0.1") -> int:
        """Serve ``/metrics`` on ``bind:port`` (0: a free port); returns the port."""
        from prometheus_client import start_http_server

        self.server, _thread = start_http_server(port, addr=bind, registry=self.registry)
        self.port = int(self.server.server_address[1])
        return self.port

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class _Gauges:
    """Figures read from the daemon when scraped."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Any]:
        return []  # collected on demand only (the registry must not call collect early)

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        daemon = self.metrics.daemon
        if daemon is None:
            return
        try:
            st = daemon.status()
        except Exception:  # a scrape must never disturb the daemon
            log.exception("metrics: cannot read the daemon's status")
            return
        def gauge(name: str, doc: str, value: float | None) -> Any:
            g = GaugeMetricFamily(name, doc)
            if value is not None:
                g.add_metric([], float(value))
            return g

        yield gauge("shoe_outbox_messages", "Messages in the outbox, not yet acknowledged",
                    st.get("outbox"))
        disk = st.get("disk") or {}
        yield gauge("shoe_disk_free_bytes", "Free space on the journal's filesystem",
                    disk.get("free_bytes"))
        yield gauge("shoe_disk_reserve_bytes", "The free-space reserve",
                    disk.get("reserve_bytes"))
        yield gauge("shoe_disk_full", "1 while play is stopped for a full disk",
                    1 if disk.get("full") else 0)
        link = st.get("link")
        yield gauge("shoe_link_up", "1 while the shoe's serial link is up",
                    None if link is None else (1 if link["up"] else 0))
        yield gauge("shoe_draw_lock_engaged", "1 while the shoe confirms its draw lock",
                    None if link is None else (1 if link["lock"] == "engaged" else 0))
        broker = st.get("broker") or {}
        yield gauge("shoe_broker_connected", "1 while connected to the MQTT broker",
                    1 if broker.get("connected") else 0)
        c = CounterMetricFamily("shoe_broker_disconnects", "Broker connections lost")
        c.add_metric([], float(broker.get("disconnects") or 0))
        yield c
        yield gauge("shoe_journal_last_seq", "The journal's last sequence number",
                    (st.get("journal") or {}).get("last_seq"))
