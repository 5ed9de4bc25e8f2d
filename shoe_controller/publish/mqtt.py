"""The broker connection: paho-mqtt 2.x, MQTT 5, QoS 1, persistent session, TLS, last will.

:class:`MqttLink` is the only module that imports paho. It connects in the background,
reconnects with exponential back-off, keeps a persistent session (``clean_start=False``
and a Session Expiry Interval), sets a retained ``offline`` last will on the status topic
and publishes a retained ``online`` on every connect. It reports acknowledgements and
connection changes through callbacks that must be quick: they run on the network thread
while paho holds its own locks, so they may not call back into the client (the publisher
only queues them).

Why its own network loop instead of paho's ``loop_start()``: with paho's thread, a
message handed over by ``publish`` waits for that thread to wake up and win the
interpreter before it is written, which was the largest share of a card's way to the
broker after the fsync (0.4 ms typical, several ms in the tail while the daemon's loop
computes). Here paho runs in its documented external-loop mode (``loop_read``,
``loop_write``, ``loop_misc``): ``publish`` writes the packet to the socket on the
caller's thread, and the network thread (``mqtt-network``) only reads acknowledgements,
keeps the connection alive, writes what a full socket left over, and reconnects. Every
call into paho holds one lock (paho's client is not thread-safe in this mode). The
socket has TCP_NODELAY: a card's message is a few hundred bytes and must not wait for
the acknowledgement of the one before.

>>> from shoe_controller.publish.config import MqttConfig
>>> from shoe_controller.publish.topics import Topics
>>> link = MqttLink(MqttConfig(url="mqtt://127.0.0.1:1"), Topics("shoe", "T1"),
...                 on_ack=lambda mid, ok, why: None)
>>> link.connected, link.client_id
(False, 'shoe-controller-T1')
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from shoe_controller.journal import utc_timestamp
from shoe_controller.publish.config import MqttConfig
from shoe_controller.publish.payloads import status_payload
from shoe_controller.publish.topics import Topics

__all__ = ["MqttLink", "PublishRefused"]

log = logging.getLogger("shoe_controller.publish")

#: (mid, acknowledged without failure, reason text)
AckCallback = Callable[[int, bool, str], None]
#: (connected, reason text)
ConnectionCallback = Callable[[bool, str], None]
#: (topic, payload, MQTT 5 properties) of a message received
MessageCallback = Callable[[str, bytes, object], None]


#: Every payload is UTF-8 JSON: say so (MQTT 5 Payload Format Indicator, Content Type).
_JSON_PROPERTIES = Properties(PacketTypes.PUBLISH)
_JSON_PROPERTIES.PayloadFormatIndicator = 1
_JSON_PROPERTIES.ContentType = "application/json"


def _will_properties() -> Properties:
    props = Properties(PacketTypes.WILLMESSAGE)
    props.PayloadFormatIndicator = 1
    props.ContentType = "application/json"
    return props


def configure_client(client: mqtt.Client, c: MqttConfig) -> None:
    """TLS and credentials of ``[mqtt]`` on a paho client (the link's, and the short
    connection that reads the retained head at start)."""
    if c.endpoint()[2]:
        try:
            client.tls_set(ca_certs=c.ca_file, certfile=c.cert_file, keyfile=c.key_file,
                           cert_reqs=ssl.CERT_REQUIRED,
                           tls_version=ssl.PROTOCOL_TLS_CLIENT)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(
                f"mqtt TLS: cannot load ca_file={c.ca_file!r} cert_file={c.cert_file!r} "
                f"key_file={c.key_file!r}: {exc}") from None
    if c.username is not None:
        client.username_pw_set(c.username, c.resolved_password())


class _DebugOnly(logging.LoggerAdapter):  # type: ignore[type-arg]
    """Everything paho logs, at DEBUG: its ERROR lines on every failed reconnect would
    otherwise flood the daemon's log during an outage."""

    def log(self, level: int, msg: object, *args: object, **kwargs: object) -> None:
        self.logger.log(logging.DEBUG, msg, *args, **kwargs)  # type: ignore[arg-type]


def _disconnect_reason(reason: object, how: str | None) -> str:
    """Why a connection ended: the broker's DISCONNECT reason when it sent one, else what
    the socket showed (paho says "Unspecified error" for both a clean close and a reset).

    >>> _disconnect_reason("Server shutting down", None)
    'Server shutting down'
    >>> _disconnect_reason("Unspecified error", "the broker closed the connection")
    'the broker closed the connection'
    >>> _disconnect_reason("Unspecified error", None)
    'connection lost (Unspecified error)'
    """
    text = str(reason)
    if text != "Unspecified error":
        return text
    return how if how else f"connection lost ({text})"


class PublishRefused(RuntimeError):
    """paho would not even queue the message (e.g. its queue is full)."""


class LinkBusy(RuntimeError):
    """``publish(..., wait=...)`` found the client busy (reconnecting) for longer than
    the caller may wait: hand the message over later (nothing was queued)."""


#: Seconds the network thread waits for traffic before its keep-alive bookkeeping.
_LOOP_TIMEOUT = 1.0


class MqttLink:
    """One MQTT 5 client for one table. Thread-safe: ``publish`` from any thread."""

    def __init__(self, config: MqttConfig, topics: Topics, *, on_ack: AckCallback,
                 on_connection: ConnectionCallback | None = None,
                 on_message: MessageCallback | None = None,
                 subscriptions: tuple[str, ...] = ()) -> None:
        self.config = config
        #: (topic, payload, properties) of messages on ``subscriptions`` (replay
        #: requests): called on the network thread; must only queue.
        self._on_message = on_message
        self._subscriptions = subscriptions
        self.topics = topics
        self.client_id = config.client_id_for(topics.table)
        self._on_ack = on_ack
        self._on_connection = on_connection
        self._connected = threading.Event()
        self._stopping = False
        #: The broker's MQTT 5 Receive Maximum (from CONNACK): how many QoS 1 messages it
        #: accepts unacknowledged. Sending more is a protocol error some brokers punish
        #: with a disconnect, so the publisher's window stays below it.
        self.receive_maximum = 65535
        self.last_error: str | None = None
        self._accepted = False  # the last connection got a successful CONNACK
        #: How the last connection ended as seen on the socket, when the broker sent no
        #: DISCONNECT saying why (paho then reports "Unspecified error").
        self._lost_how: str | None = None
        #: monotonic time the connection was lost (None: never connected, or connected)
        self._down_since: float | None = None
        self._ever_connected = False
        #: connections lost (and reported) since start, for status and metrics
        self.disconnects = 0
        self._client = self._make_client()
        #: Held for every call into paho (its client is not thread-safe without its own
        #: thread); never held while waiting on the network, except to (re)connect.
        self._io = threading.Lock()
        self._halt = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._thread: threading.Thread | None = None

    # -- set-up ----------------------------------------------------------------------

    def _make_client(self) -> mqtt.Client:
        c = self.config
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.client_id,
                             protocol=mqtt.MQTTv5)
        # paho's own log (packets, and its complaints while the broker is away, which
        # this module already reports once per outage), at debug level only (``-v``).
        client.enable_logger(_DebugOnly(logging.getLogger("shoe_controller.publish.paho"),
                                        {}))  # type: ignore[arg-type]
        client.max_inflight_messages_set(c.max_inflight)
        client.reconnect_delay_set(c.reconnect_min_delay, c.reconnect_max_delay)
        client.will_set(self.topics.status,
                        status_payload(self.topics.table, "offline", reason="connection lost"),
                        qos=1, retain=True, properties=_will_properties())
        configure_client(client, c)
        client.on_message = self._handle_message
        client.on_connect = self._handle_connect
        client.on_disconnect = self._handle_disconnect
        client.on_publish = self._handle_publish
        return client

    def start(self) -> None:
        """Connect in the background; returns at once (the broker may be down)."""
        host, port, _tls = self.config.endpoint()
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = self.config.session_expiry
        self._client.connect_async(host, port, keepalive=self.config.keepalive,
                                   clean_start=False, properties=props)
        self._thread = threading.Thread(target=self._network, name="mqtt-network",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Say ``offline`` (retained), disconnect cleanly, stop the network thread."""
        self._stopping = True
        if self._connected.is_set():
            info = self._publish(
                self.topics.status,
                status_payload(self.topics.table, "offline", time=utc_timestamp(),
                               reason="stopped"),
                retain=True)
            # Losing the connection meanwhile is fine: the last will says offline anyway.
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(timeout)
        self._halt.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        with self._io:
            self._client.disconnect()  # writes DISCONNECT and closes the socket
        self._connected.clear()
        self._wake_r.close()
        self._wake_w.close()

    # -- the network thread ----------------------------------------------------------

    def _network(self) -> None:
        """Connect, serve the socket, reconnect after a loss with back-off (from
        ``reconnect_min_delay``, doubling up to ``reconnect_max_delay``; back to the
        minimum once a connection was accepted), until :meth:`stop`."""
        delay = float(self.config.reconnect_min_delay)
        while not self._halt.is_set():
            try:
                if self._connect():
                    while not self._halt.is_set() and self._serve():
                        pass
                    if self._accepted:
                        delay = float(self.config.reconnect_min_delay)
            except Exception:  # never let the thread die: the outbox waits for it
                log.exception("MQTT network loop error; reconnecting")
            if self._halt.wait(delay):
                return
            delay = min(delay * 2, float(self.config.reconnect_max_delay))

    def _connect(self) -> bool:
        """One connection attempt (TCP, TLS, CONNECT); the CONNACK comes later."""
        self._accepted = False
        try:
            with self._io:
                self._client.reconnect()
                sock = self._client.socket()
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, ValueError) as exc:  # refused, unreachable, TLS failure
            self._connect_failed(exc)
            return False
        return True

    def _connect_failed(self, exc: BaseException) -> None:
        """A connection attempt failed: say so (once per outage) and tell the sender."""
        host, port, _ = self.config.endpoint()
        error = f"cannot reach the broker at {host}:{port}"
        if isinstance(exc, ssl.SSLError):  # not an outage: a certificate or TLS setting
            error += f" (TLS: {exc})"
        # Say it once per outage, not at every retry.
        level = logging.DEBUG if self.last_error == error else logging.WARNING
        self.last_error = error
        log.log(level, "MQTT %s; retrying, messages wait in the outbox", error)
        if self._on_connection is not None:
            self._on_connection(False, self.last_error)

    def _serve(self) -> bool:
        """Wait for traffic once and handle it; False when the connection is gone."""
        client = self._client
        sock = client.socket()
        if sock is None:
            return False
        pending = sock.pending() if hasattr(sock, "pending") else 0  # TLS: decrypted bytes
        try:
            readable, _, _ = select.select(
                [sock, self._wake_r], [sock] if client.want_write() else [], [],
                0.0 if pending else _LOOP_TIMEOUT)
        except (OSError, ValueError, TypeError):  # the socket was closed under us
            readable = [sock]  # loop_read finds out and reports the loss
        if self._wake_r in readable:
            with contextlib.suppress(OSError):
                self._wake_r.recv(4096)
        # paho writes a byte to its own wake-up socket pair on every publish, meant for
        # its own thread's select; nobody selects on it here (that would wake this thread
        # on every card), so empty it as we go (non-blocking; paho's attribute).
        paho_wake = getattr(client, "_sockpairR", None)
        if paho_wake is not None:
            with contextlib.suppress(OSError):
                paho_wake.recv(65536)
        if sock in readable and not pending:
            self._peek_end(sock)
        with self._io:
            rc = mqtt.MQTT_ERR_SUCCESS
            if sock in readable or pending:
                rc = client.loop_read()
            if not rc and client.want_write():
                rc = client.loop_write()
            if not rc:
                rc = client.loop_misc()
            return not rc and client.socket() is not None

    def _peek_end(self, sock: socket.socket) -> None:
        """Before paho reads: note whether the broker closed the connection (end of
        stream) or it was reset, which paho reports alike as "Unspecified error"."""
        if isinstance(sock, ssl.SSLSocket):
            return  # the raw stream holds TLS records; paho's error says enough
        try:
            data = sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except ConnectionResetError:
            self._lost_how = "the connection was reset (broker crashed or network cut?)"
            return
        except OSError as exc:
            self._lost_how = f"socket error: {exc.strerror or exc}"
            return
        if not data:
            self._lost_how = ("the broker closed the connection without saying why "
                              "(broker shut down or restarted?)")

    def _wake(self) -> None:
        """Make the network thread look again (a write is left over, or stop)."""
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    # -- use -------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    def publish(self, topic: str, payload: bytes, retain: bool,
                wait: float | None = None) -> int:
        """Hand a QoS 1 message to paho, which writes it to the socket at once when it
        can (on this thread); return its mid. paho keeps it (and re-sends it after a
        reconnect) until the PUBACK, reported through ``on_ack``. ``wait``: the longest
        to wait for the client (busy reconnecting) before :class:`LinkBusy`."""
        info = self._publish(topic, payload, retain, wait)
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            raise PublishRefused(mqtt.error_string(info.rc))
        return int(info.mid)

    def _publish(self, topic: str, payload: bytes, retain: bool,
                 wait: float | None = None) -> mqtt.MQTTMessageInfo:
        """paho's ``publish`` (QoS 1, JSON) under the client's lock; wakes the network
        thread when the socket could not take the whole packet."""
        if not self._io.acquire(timeout=-1 if wait is None else wait):
            raise LinkBusy("the MQTT client is busy (reconnecting)")
        try:
            info = self._client.publish(topic, payload, qos=1, retain=retain,
                                        properties=_JSON_PROPERTIES)
            left_over = self._client.want_write()
        finally:
            self._io.release()
        if left_over:  # the socket was full: the network thread writes the rest
            self._wake()
        return info

    # -- paho callbacks (network thread; keep them short) ----------------------------

    def _handle_connect(self, client: mqtt.Client, userdata: object,
                        flags: mqtt.ConnectFlags, reason: object,
                        properties: object) -> None:
        if getattr(reason, "is_failure", False):
            self.last_error = f"broker refused the connection: {reason}"
            log.error("MQTT %s (client id %s)", self.last_error, self.client_id)
            return
        self.last_error = None
        self._accepted = True
        self.receive_maximum = int(getattr(properties, "ReceiveMaximum", 65535))
        self._connected.set()
        host, port = self.config.endpoint()[:2]
        if self._down_since is not None:
            log.info("MQTT reconnected to %s:%s after %.1f s (session present: %s)", host,
                     port, time.monotonic() - self._down_since, flags.session_present)
        else:
            log.info("MQTT connected to %s:%s (session present: %s)", host, port,
                     flags.session_present)
        self._down_since = None
        self._ever_connected = True
        client.publish(self.topics.status,
                       status_payload(self.topics.table, "online", time=utc_timestamp()),
                       qos=1, retain=True, properties=_JSON_PROPERTIES)
        for topic in self._subscriptions:  # again on every connect (a broker may forget)
            client.subscribe(topic, qos=1)
        if self._on_connection is not None:
            self._on_connection(True, "connected")

    def _handle_disconnect(self, client: mqtt.Client, userdata: object,
                           flags: object, reason: object, properties: object) -> None:
        was = self._connected.is_set()
        self._connected.clear()
        how, self._lost_how = self._lost_how, None
        if was and not self._stopping:
            self.disconnects += 1
            self._down_since = time.monotonic()
            self.last_error = f"disconnected: {_disconnect_reason(reason, how)}"
            log.warning("MQTT %s; reconnecting, messages wait in the outbox", self.last_error)
        if self._on_connection is not None:
            self._on_connection(False, str(reason))

    def _handle_message(self, client: mqtt.Client, userdata: object,
                        msg: mqtt.MQTTMessage) -> None:
        if self._on_message is not None:
            try:
                self._on_message(msg.topic, bytes(msg.payload),
                                 getattr(msg, "properties", None))
            except Exception:  # a bad request must never break the network thread
                log.exception("MQTT message on %s could not be handled", msg.topic)

    def publish_response(self, topic: str, payload: bytes,
                         correlation: bytes | None) -> mqtt.MQTTMessageInfo:
        """Publish one reply (QoS 1, not retained) with MQTT 5 Correlation Data; the
        caller may ``wait_for_publish`` on the result to pace a long answer."""
        props = Properties(PacketTypes.PUBLISH)
        props.PayloadFormatIndicator = 1
        props.ContentType = "application/json"
        if correlation is not None:
            props.CorrelationData = correlation
        with self._io:
            info = self._client.publish(topic, payload, qos=1, retain=False,
                                        properties=props)
            left_over = self._client.want_write()
        if left_over:
            self._wake()
        return info

    def _handle_publish(self, client: mqtt.Client, userdata: object, mid: int,
                        reason: object, properties: object) -> None:
        failed = bool(getattr(reason, "is_failure", False))
        self._on_ack(mid, not failed, str(reason))
