"""`feed follow` through a TCP proxy across a broker crash (issue 13).

The bug: `feed follow` connected through :class:`CuttableProxy` stalled after an early
broker restart (kill -9, restart on the same port) while connected directly it was
fine. The cause was the proxy: it closed both sockets of a connection when one side
ended, but ``close()`` does not end a TCP connection while another thread is blocked
reading it, so the follower's side stayed open and looked alive (it learnt nothing
until its own keep-alive, 15 s later); and the upstream socket kept the 2 s connect
timeout, so a broker silent for 2 s (no event, the head only every 5 s) ended the
connection the same half-open way. These tests pin each half, with real sockets and a
real mosquitto, and then the whole case end to end.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from shoe_controller.journal import Journal
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.consumer import Follower
from shoe_controller.publish.publisher import Publisher
from shoe_controller.sim.table import CuttableProxy
from tests.support.broker import Mosquitto
from tests.test_publish_helpers import fixed_key, shoe_batches

pytestmark = pytest.mark.e2e
KEY = fixed_key(33)


class _Server:
    """A plain TCP server on loopback: accepts one connection and hands it over."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.conn: socket.socket | None = None
        self.accepted = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.conn, _ = self.sock.accept()
        self.accepted.set()

    def close(self) -> None:
        for s in (self.conn, self.sock):
            if s is not None:
                s.close()


def test_the_proxy_keeps_a_connection_whose_server_is_silent_for_3_s():
    server = _Server()
    proxy = CuttableProxy("127.0.0.1", server.port)
    client = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    try:
        assert server.accepted.wait(5)
        time.sleep(3.0)  # longer than the connect timeout the upstream socket had
        server.conn.sendall(b"still here")
        assert client.recv(100) == b"still here"
        client.sendall(b"and you")
        server.conn.settimeout(5)
        assert server.conn.recv(100) == b"and you"
    finally:
        client.close()
        proxy.close()
        server.close()


def test_the_client_sees_at_once_that_the_server_went_away():
    server = _Server()
    proxy = CuttableProxy("127.0.0.1", server.port)
    client = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    try:
        assert server.accepted.wait(5)
        server.conn.sendall(b"x")
        assert client.recv(1) == b"x"
        server.conn.close()  # the broker dies; the client has nothing to send
        client.settimeout(2.0)
        t0 = time.monotonic()
        assert client.recv(100) == b""  # end of stream, not a timeout
        assert time.monotonic() - t0 < 1.0
    finally:
        client.close()
        proxy.close()
        server.close()


def test_follow_through_a_proxy_recovers_at_once_from_an_early_broker_restart(tmp_path):
    """As in the report: follow connects (through the proxy) before the daemon, the
    broker is SIGKILLed and restarted on the same port before the daemon's first
    event, then the daemon deals. follow must have every seq, once, in order, within
    seconds: well before its 15 s keep-alive would have noticed a dead connection."""
    broker = Mosquitto().start()
    proxy = CuttableProxy("127.0.0.1", broker.port)
    written: list[bytes] = []
    follower = Follower(MqttConfig(url=f"mqtt://127.0.0.1:{proxy.port}"), "T1",
                        [KEY.public], written.append)
    thread = threading.Thread(target=follower.run, args=(60,), daemon=True)
    thread.start()
    journal = Journal.open(tmp_path / "j.sqlite3", table_id="T1")
    pub = None
    try:
        deadline = time.monotonic() + 10
        while not (follower.client is not None and follower.client.is_connected()):
            assert time.monotonic() < deadline, "follow did not connect"
            time.sleep(0.02)
        broker._proc.kill()
        broker._proc.wait()
        t_kill = time.monotonic()
        while follower.client.is_connected():
            assert time.monotonic() - t_kill < 2.0, (
                "follow still thinks it is connected 2 s after its broker died")
            time.sleep(0.02)
        broker.start()
        pub = Publisher(journal, MqttConfig(url=broker.url, release="per_card",
                                            display_feed=False), "T1", key=KEY)
        pub.start()
        for batch in shoe_batches(5, max_rounds=6):
            pub.append(batch)
        assert pub.flush(20)
        last = journal.last_seq
        deadline = time.monotonic() + 10
        while follower.next_seq <= last and time.monotonic() < deadline:
            time.sleep(0.05)
        seqs = [json.loads(p)["seq"] for p in written]
        assert seqs == list(range(1, last + 1)), (
            f"follow has {len(seqs)} of {last} events {time.monotonic() - t_kill:.1f} s "
            f"after the broker was killed ({follower.requests} replay request(s))")
        assert follower.findings == []
    finally:
        follower.stop()
        thread.join(10)
        if pub is not None:
            pub.stop()
        journal.close()
        proxy.close()
        broker.stop()
