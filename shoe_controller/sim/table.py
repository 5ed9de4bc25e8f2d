"""The whole virtual table of `shoe-controller simulate`: the real daemon put together
with its real adapters on virtual hardware, and the virtual dealer of
:mod:`shoe_controller.sim` dealing into it.

- the firmware bridge's device simulator on a pty stands in for the shoe (card exits
  and scanner reads through the real serial protocol and ``Link``);
- gpiozero's MockFactory pins for the dealer station (the dealer presses confirm on a
  mock pin, the supervisor turns a mock key);
- optionally the synthetic camera (:mod:`shoe_controller.sim.camera`);
- the real journal and MQTT publisher; for ``--inject broker-outage`` the publisher
  reaches the broker through a loopback forwarder that can be cut.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shoe_controller.game.cards import Card
from shoe_controller.game.inputs import ManualCard, Resume
from shoe_controller.sim import (
    INFO_ALERTS,
    Hands,
    Holds,
    Injection,
    VirtualDealer,
    payload_for,
)

__all__ = ["CuttableProxy", "SimOptions", "Simulation", "clean_stale_sim_dirs"]

log = logging.getLogger("shoe_controller.sim")


# -- a cuttable network path to the broker (--inject broker-outage) --------------------------


class CuttableProxy:
    """A loopback TCP forwarder to the broker that can be cut: a real network outage.

    Clients connect to ``127.0.0.1:port``; :meth:`outage` drops every connection (and
    whatever bytes are on their way through it) and refuses new ones for ``seconds``,
    then lets them through again. :meth:`hold` stops delivering the broker's bytes to
    the clients (they wait, as on a stalled path) until :meth:`release`.

    Like any proxy, when one side of a connection ends, the other is shut down at once,
    so a client sees its broker go away (a crashed broker is not a connection that only
    looks alive until the client's next keep-alive), and a broker that says nothing for
    a while keeps its connection.
    """

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.port = int(self._server.getsockname()[1])
        self._down = threading.Event()
        self._closed = threading.Event()
        self._flowing = threading.Event()
        self._flowing.set()
        self._lock = threading.Lock()
        self._socks: list[Any] = []
        self.outages = 0
        self._timer: threading.Timer | None = None
        threading.Thread(target=self._accept, name="broker-proxy", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if self._down.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=2)
            except OSError:
                client.close()
                continue
            # The connect timeout must not stay on the socket: a broker silent for 2 s
            # (between two keep-alives) would otherwise end the connection.
            upstream.settimeout(None)
            with self._lock:
                self._socks += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, False),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True),
                             daemon=True).start()

    def _pump(self, src: Any, dst: Any, downstream: bool = False) -> None:
        try:
            while True:
                if downstream:
                    self._flowing.wait()
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            # shutdown first: close() alone leaves the socket open while the other
            # direction's thread is blocked reading it, so the peer would never know.
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    s.close()
            with self._lock:
                self._socks = [s for s in self._socks if s not in (src, dst)]

    def hold(self) -> None:
        """Stop delivering the broker's bytes to the clients (until :meth:`release`)."""
        self._flowing.clear()

    def release(self) -> None:
        """Deliver again what :meth:`hold` kept back (unless an outage dropped it)."""
        self._flowing.set()

    def outage(self, seconds: float | None) -> None:
        """Cut the path now and restore it after ``seconds`` (in the background; None:
        only when :meth:`restore` is called)."""
        self.outages += 1
        self._down.set()
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if seconds is None:
            log.warning("injected broker outage (until restored)")
            return
        log.warning("injected broker outage for %.1f s", seconds)
        self._timer = threading.Timer(seconds, self._down.clear)
        self._timer.daemon = True
        self._timer.start()

    def restore(self) -> None:
        """End an outage now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._down.clear()

    def close(self) -> None:
        self._closed.set()
        self._down.set()
        if self._timer is not None:
            self._timer.cancel()
        self._flowing.set()
        with contextlib.suppress(OSError):
            self._server.close()
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()


def clean_stale_sim_dirs(tmp: str | None = None) -> list[str]:
    """Remove the device simulator's ``smart-shoe-sim-<pid>-*`` folders (its pty link)
    left in the temp folder by simulations that were killed (their pid is gone); returns
    what was removed. Folders of live processes, and names without a pid, are left.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(d, "smart-shoe-sim-999999999-x"))
    >>> os.mkdir(os.path.join(d, f"smart-shoe-sim-{os.getpid()}-y"))
    >>> [os.path.basename(p) for p in clean_stale_sim_dirs(d)], sorted(os.listdir(d))
    (['smart-shoe-sim-999999999-x'], ['smart-shoe-sim-...-y'])
    """
    import re
    import shutil
    import tempfile

    tmp = tmp or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(tmp)
    except OSError:
        return removed
    for name in names:
        m = re.match(r"^smart-shoe-sim-(\d+)-", name)
        if m is None:
            continue
        pid = int(m.group(1))
        try:
            os.kill(pid, 0)
            continue  # alive (or not ours to signal: leave it)
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            if pid < (1 << 22):
                continue
        path = os.path.join(tmp, name)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


# -- the whole virtual table -----------------------------------------------------------------


@dataclass
class SimOptions:
    """What `shoe-controller simulate` was asked for (see commands/simulate.py)."""

    shoes: int = 1
    pace: float = 0.0
    seed: int | str = 1
    broker: str | None = None
    table_id: str | None = None
    state_dir: str | None = None
    display_port: int | None = None
    broker_ws: str = ""
    inject: dict[str, Injection] = field(default_factory=dict)
    reader: str = "scanner"
    release: str | None = None
    config: Any = None
    leds: bool = False
    quiet: bool = False
    drain_timeout: float = 30.0
    outage_seconds: float = 3.0
    metrics_port: int | None = None
    holds: Holds = field(default_factory=Holds)
    unsigned: bool = False


class Simulation:
    """The real daemon, its real adapters on virtual hardware, and a virtual dealer."""

    def __init__(self, opts: SimOptions, out: Callable[[str], None] = print) -> None:
        self.opts = opts
        self.out = out
        self.proxy: CuttableProxy | None = None
        self.simulator: Any = None
        self.display: Any = None
        self.daemon: Any = None
        self.dealer: VirtualDealer | None = None
        self.publisher: Any = None
        self.state_dir = ""
        #: The broker answered at least once: at the end, wait for the outbox to empty.
        self.broker_seen = threading.Event()

    # The configuration: a table's file when given, else defaults fit for a simulation.
    def _configs(self) -> dict[str, Any]:
        import msgspec

        from shoe_controller.dealer.config import GpioConfig
        from shoe_controller.game.rules import Rules
        from shoe_controller.publish.config import JournalConfig, MqttConfig

        cfg = self.opts.config
        rules = getattr(cfg, "rules", None) or Rules(confirm="button")
        gpio = getattr(cfg, "gpio", None) or GpioConfig()
        mqtt = getattr(cfg, "mqtt", None) or MqttConfig()
        table_id = self.opts.table_id or _table_id(cfg) or "sim-1"
        # Simulation never touches real pins, and talks to the broker it was given.
        gpio = msgspec.structs.replace(gpio, pin_factory="mock", terminal_leds=self.opts.leds)
        changes: dict[str, Any] = {}
        if self.opts.broker:
            changes.update(url=self.opts.broker, host="localhost", port=None)
        if self.opts.release:
            changes["release"] = self.opts.release
        if changes:
            mqtt = msgspec.structs.replace(mqtt, **changes)
        return {"rules": rules, "gpio": gpio, "mqtt": mqtt, "table_id": table_id,
                "analytics": getattr(cfg, "analytics", None),
                "journal": getattr(cfg, "journal", None) or JournalConfig()}

    def _signing_key(self, state_dir: str, mqtt: Any) -> Any:
        """The simulated table's signing key: ``[mqtt] signing_key_file`` or
        ``state_dir/signing.key``, made when there is none (None with --unsigned)."""
        from shoe_controller.daemon import ConfigRefused, load_device_key
        from shoe_controller.keys import KeyFileError, ensure_keys

        if self.opts.unsigned or mqtt.signing_key_file is not None:
            return load_device_key(mqtt, state_dir, self.opts.unsigned)
        try:
            return ensure_keys(state_dir)
        except KeyFileError as exc:
            raise ConfigRefused(f"signing key: {exc}") from None

    def _metrics(self) -> Any:
        """Metrics served on 127.0.0.1 when --metrics-port (or [metrics] port) asks."""
        port = self.opts.metrics_port
        cfg = getattr(self.opts.config, "metrics", None)
        if port is None and cfg is not None and cfg.port:
            port = cfg.port
        if port is None:
            return None
        from shoe_controller.metrics import Metrics

        metrics = Metrics()
        metrics.bind_to = (port, "127.0.0.1")
        return metrics

    def run(self) -> int:
        import tempfile

        from shoe_controller.daemon import (
            Daemon,
            DaemonError,
            journal_path,
            open_daemon_journal,
            open_fingerprints,
        )
        from shoe_controller.dealer.station import Station
        from shoe_controller.publish.publisher import Publisher
        from shoe_controller.storage import BALLAST_BYTES, DiskGuard

        opts = self.opts
        for stale in clean_stale_sim_dirs():
            log.info("removed %s, left by a simulation that was killed", stale)
        c = self._configs()
        from shoe_controller.statedir import StateDirError, prepare

        state_dir = opts.state_dir or tempfile.mkdtemp(prefix="shoe-sim-")
        try:
            prepare(state_dir)  # 0750, files 0640, refuses wider ones (issue 14)
        except StateDirError as exc:
            raise DaemonError(str(exc)) from None
        self.state_dir = state_dir
        jpath = journal_path(state_dir)
        mqtt = c["mqtt"]
        key = self._signing_key(state_dir, mqtt)
        disk = DiskGuard(str(jpath), c["journal"].reserve_bytes, BALLAST_BYTES)
        journal = open_daemon_journal(str(jpath), c["table_id"], mqtt, key, disk)
        host, port, _tls = mqtt.endpoint()
        if "broker-outage" in opts.inject:
            import msgspec

            self.proxy = CuttableProxy(host, port)
            mqtt = msgspec.structs.replace(mqtt, url=f"mqtt://127.0.0.1:{self.proxy.port}")
        from shoe_controller.daemon import device_keyring

        try:
            keyring = device_keyring(journal, key, mqtt.signing_key_path(state_dir))
        except DaemonError:
            journal.close()
            raise
        self.publisher = Publisher(journal, mqtt, c["table_id"], key=keyring)
        hands_ref: dict[str, Any] = {}
        daemon = Daemon(rules=c["rules"], journal=journal, analytics=c["analytics"],
                        publisher=self.publisher,
                        fingerprints=open_fingerprints(state_dir, c["analytics"]),
                        disk=disk,
                        metrics=self._metrics())
        self.daemon = daemon
        station = Station(c["gpio"], daemon.submit)
        daemon.station = station
        sources, hands = self._inputs(daemon, station, opts)
        daemon.sources = sources
        hands_ref["hands"] = hands
        self.dealer = dealer = VirtualDealer(
            hands, shoes=opts.shoes, seed=opts.seed, rules=c["rules"], pace=opts.pace,
            inject=opts.inject,
            on_broker_outage=(lambda: self.proxy.outage(opts.outage_seconds))
            if self.proxy is not None else None,
            holds=opts.holds,
        )
        dealer.catch_up(e.data for e in journal.replay())
        daemon.observers.append(dealer.observe)
        if not opts.quiet:
            daemon.observers.append(self._print_rounds)
        self.out(f"simulate: table {c['table_id']}, state dir {state_dir}, journal {jpath}")
        self.out(f"simulate: broker mqtt://{host}:{port} (release {mqtt.release}), "
                 f"cards read by {opts.reader}, seed {opts.seed}")
        if dealer.view.events:
            v = dealer.view
            self.out(f"simulate: resuming from the journal: {v.events} events, shoe {v.shoe}"
                     f" round {v.round}, {v.shoes_ended} shoe(s) finished")
        if opts.display_port is not None:
            self._start_display(c["table_id"], mqtt, c["rules"], key)
        daemon.start()
        if daemon.metrics is not None and daemon.metrics.port is not None:
            self.out(f"simulate: metrics on http://127.0.0.1:{daemon.metrics.port}/metrics")
        daemon.install_signals()
        threading.Thread(target=self._watch_broker, args=(host, port), daemon=True).start()
        threading.Thread(target=self._finish_when_done, daemon=True).start()
        for source in daemon.sources:  # a real dealer waits for the shoe to say hello too
            up = getattr(source, "link_up", None)
            if up is not None and not up.wait(10):
                self.out("simulate: the shoe's serial link did not come up within 10 s")
        dealer_thread = threading.Thread(target=dealer.run, name="virtual-dealer", daemon=True)
        dealer_thread.start()
        try:
            with self._live_panel():
                daemon.run()
        finally:
            dealer.stop()
            pending = self.publisher.pending()
            daemon.close(flush_timeout=0)
            self._stop_extras()
        if dealer.error is not None:
            self.out(f"simulate: the virtual dealer failed: {dealer.error}")
            return 1
        v = dealer.view
        if v.shoes_ended < opts.shoes:
            self.out(f"simulate: stopped after {v.shoes_ended} of {opts.shoes} shoe(s) "
                     f"(shoe {v.shoe} round {v.round}); run again with --state-dir "
                     f"{state_dir} and the same seed to resume")
        self.out(f"simulate: done: {v.shoes_ended} shoe(s), {journal.last_seq} events "
                 f"journaled, {pending} message(s) left in the outbox"
                 + ("" if not pending else " (sent on the next start with this state dir)"))
        return 0

    def _inputs(self, daemon: Any, station: Any, opts: SimOptions) -> tuple[list[Any], Hands]:
        from firmware_bridge.config import SerialConfig
        from firmware_bridge.simulator import DeviceSimulator
        from shoe_controller.daemon_inputs import ControlSocketInput, SerialInput
        from shoe_controller.vision.barcode import BarcodeMapping
        from shoe_controller.vision.config import BarcodeConfig

        sim = DeviceSimulator("SIM-0001")
        self.simulator = sim
        path = sim.start()
        serial_cfg = SerialConfig(port=path, exclusive=False)
        camera = None
        if opts.reader in ("barcode", "index"):
            camera = self._camera(opts.reader)
        serial = SerialInput(serial_cfg, mapping=BarcodeMapping(BarcodeConfig()),
                             scanner=camera is None,
                             on_card_exit=camera.card_exit if camera is not None else None)
        # The supervisor's terminal, as under `run` (a human may play supervisor too).
        control = ControlSocketInput(os.path.join(self.state_dir, "control"),
                                     key_on=lambda: bool(station.key_on),
                                     handlers={**serial.handlers(),
                                               "status": daemon.status_reply})
        sources: list[Any] = [serial, control] + ([camera] if camera is not None else [])
        show = camera.show if camera is not None else None

        def passes(label: str, payload: str | None) -> None:
            """One thing leaves the shoe: seen by the camera (which then trips the exit
            sensor, as a card crosses the window before it leaves), or by the scanner."""
            if show is not None:
                show(label, sim.card_exit)
                return
            sim.card_exit()
            if payload is not None:
                sim.card_read(payload)

        def card(c: Card) -> None:
            passes(c.code, payload_for(c))

        def unreadable(c: Card) -> None:
            passes("UNREADABLE", None)  # the scanner reads nothing, the camera a blur

        def foreign(payload: str) -> None:
            passes("FOREIGN:" + payload, payload)

        def cut() -> None:
            passes("CUT", "CUT")

        hands = Hands(
            card=card, unreadable=unreadable, foreign=foreign, cut=cut,
            new_shoe=sim.shoe_loaded,
            press=station.press,
            key=station.turn_key,
            manual=lambda c: daemon.submit(ManualCard(c), "supervisor"),
            locked=lambda: bool(sim.locked),
            resume=lambda: daemon.submit(Resume(), "supervisor"),
        )
        return sources, hands

    def _camera(self, reader: str) -> Any:
        from shoe_controller.sim.camera import SyntheticCamera

        return SyntheticCamera.for_reader(reader)

    def _live_panel(self) -> contextlib.AbstractContextManager[Any]:
        """On a terminal: the dealer panel and the table's state, live at the bottom,
        the round lines scrolling above. Elsewhere (pipes, logs, --quiet, --leds):
        nothing."""
        import sys

        if self.opts.quiet or self.opts.leds or not sys.stdout.isatty():
            return contextlib.nullcontext()
        from rich.live import Live

        return Live(get_renderable=self._panel, refresh_per_second=8, transient=True,
                    redirect_stdout=True, redirect_stderr=True)

    def _panel(self) -> Any:
        from rich.text import Text

        from shoe_controller.dealer.station import render_lights

        daemon, pub = self.daemon, self.publisher
        if daemon is None or daemon.station is None:
            return Text("")
        line = render_lights(daemon.station.lights)
        status = daemon.describe()
        if pub is not None:
            status += ", broker " + ("connected" if pub.connected else "unreachable")
        return Text.assemble(line, "\n", (status, "dim"))

    def _start_display(self, table_id: str, mqtt: Any, rules: Any = None,
                       key: Any = None) -> None:
        try:
            from shoe_controller.display.server import serve_config
        except ImportError as exc:
            self.out(f"simulate: no display page ({exc})")
            return
        cfg = self.opts.config
        self.display = serve_config(getattr(cfg, "display", None), table_id,
                                    topic_prefix=mqtt.topic_prefix, rules=rules,
                                    port=self.opts.display_port or 0, bind="127.0.0.1",
                                    broker_ws_url=self.opts.broker_ws, device_key=key)
        port = getattr(self.display, "port", self.opts.display_port)
        self.out(f"simulate: display page on http://127.0.0.1:{port}/")

    def _watch_broker(self, host: str, port: int) -> None:
        """Say so when the broker cannot be reached; note when it answers."""
        pub, daemon = self.publisher, self.daemon
        if pub is None or daemon is None:
            return
        start, said = time.monotonic(), False
        while not daemon.stopping.is_set():
            if pub.connected:
                self.broker_seen.set()
                return
            if not said and time.monotonic() - start >= 2.0 and self.proxy is None:
                why = pub.last_error or "no connection"
                self.out(f"simulate: broker mqtt://{host}:{port} is unreachable ({why}); the "
                         "table keeps running, every event is journaled and queued in the "
                         "outbox until the broker is back")
                said = True
            time.sleep(0.05)

    def _finish_when_done(self) -> None:
        """Once the dealer is done: wait for the outbox to empty (if a broker is there),
        then stop the daemon."""
        assert self.dealer is not None and self.daemon is not None
        self.dealer.done.wait()
        # the projection's last alerts of the shoe come after its end (the whole-shoe
        # fit): wait for them to be in the outbox before waiting for it to empty
        if not self.daemon.projection_idle(self.opts.drain_timeout):
            self.out(f"simulate: the projection did not finish within "
                     f"{self.opts.drain_timeout:.0f} s")
        pub = self.publisher
        if pub is not None:
            if self.broker_seen.is_set() or self.proxy is not None:
                if not pub.flush(self.opts.drain_timeout):
                    self.out(f"simulate: the outbox did not empty within "
                             f"{self.opts.drain_timeout:.0f} s ({pub.pending()} left)")
            else:
                # One short chance, in case the broker just came up.
                pub.flush(1.0)
        self.daemon.stop()

    def _print_rounds(self, entries: Sequence[Any]) -> None:
        for e in entries:
            t = e.type
            if t == "round_result":
                d = e.data
                self.out(f"shoe {d['shoe']} round {d['round']:>2}  "
                         f"P {' '.join(d['player']):<9} = {d['player_total']}  "
                         f"B {' '.join(d['banker']):<9} = {d['banker_total']}  "
                         f"{d['winner'].upper()}")
            elif t in ("misdeal", "fault", "integrity_alert", "round_voided", "cut_card",
                       "shoe_started", "shoe_ended"):
                d = e.data
                if t == "integrity_alert" and d.get("kind") in INFO_ALERTS:
                    continue
                detail = {k: v for k, v in d.items() if k not in ("type", "shoe")}
                self.out(f"shoe {d['shoe']} {t}: {detail}")

    def _stop_extras(self) -> None:
        if self.simulator is not None:
            with contextlib.suppress(Exception):
                self.simulator.stop()
        if self.proxy is not None:
            self.proxy.close()
        if self.display is not None:
            with contextlib.suppress(Exception):
                self.display.stop()


def _table_id(cfg: Any) -> str | None:
    table = getattr(cfg, "table", None)
    return getattr(table, "id", None) if table is not None else None
