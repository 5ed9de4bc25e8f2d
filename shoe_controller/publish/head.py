"""The signed head: how far the casino feed has got, and the checks that keep the daemon
from ever starting over (or going back) silently.

The head is ``{table, epoch, seq, hash, time, key_id, sig}``: the journal's epoch and the
seq and hash of the last *released* event (under ``on_result`` the events of an open
round are journaled but held back; the head never announces them, so a consumer never
asks for what it may not see yet). The publisher sends it retained on
``<prefix>/<table>/casino/head`` after every batch that released events and at least
every :data:`HEAD_EVERY` seconds, and writes it first, fsynced, to the **head file**
beside the journal (``<journal>.head``, e.g. ``journal.sqlite3.head``): the last head
this daemon announced, in the exact bytes it published.

At start (:func:`open_table_journal`) the daemon compares its journal with the head file
and with the head retained on the broker (:func:`fetch_retained_head`), and refuses to
start when the journal is behind or forked from either, or is of an epoch neither it nor
its ``journal_started`` knows (:func:`check_against_head`). A new journal is made only
where no journal file exists; its ``journal_started`` event names the head it follows.

>>> import tempfile, os
>>> from shoe_controller.journal import Journal
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "journal.sqlite3")
>>> j = open_table_journal(p, "T1", key=None)
>>> e = j.first_entry().data; e["type"], e["previous"], e["epoch"] == j.epoch
('journal_started', None, True)
>>> head = parse_head(head_payload("T1", j.epoch, 5, "ab" * 32, "t", None), [], unsigned=True)
>>> check_against_head(j, head, "the head file")
Traceback (most recent call last):
...
shoe_controller.journal.JournalError: journal ...: it ends at seq 1, but the head file says ...
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterable
from typing import Any

from shoe_controller.journal import GENESIS, Journal, JournalError
from shoe_controller.publish.payloads import SignatureError, head_payload, verify_signed

__all__ = [
    "HEAD_EVERY",
    "HeadFile",
    "check_against_head",
    "fetch_retained_head",
    "head_file_path",
    "head_payload",
    "open_table_journal",
    "parse_head",
]

log = logging.getLogger("shoe_controller.publish")

#: The head is re-sent (with a fresh time) at least this often, in seconds.
HEAD_EVERY = 5.0
_HEAD_KEYS = {"table", "epoch", "seq", "hash", "time", "key_id", "sig"}


def head_file_path(journal_path: str) -> str:
    """``<journal>.head``: the last head the daemon announced for that journal.

    >>> head_file_path("/var/lib/shoe-controller/journal.sqlite3")
    '/var/lib/shoe-controller/journal.sqlite3.head'
    """
    return journal_path + ".head"


def parse_head(payload: bytes | str, keys: Iterable[Any], *,
               unsigned: bool = False) -> dict[str, Any]:
    """A head message checked: its fields, and its signature by one of ``keys``
    (``unsigned``: also accept an unsigned head, for a daemon run ``--unsigned``).
    ValueError / :class:`SignatureError` saying what is wrong."""
    data = payload.encode() if isinstance(payload, str) else bytes(payload)
    try:
        head = verify_signed(data, list(keys))
    except SignatureError:
        if not unsigned:
            raise
        head = json.loads(data)
        if not isinstance(head, dict):
            raise ValueError("a head must be a JSON object") from None
    if not (set(head) >= _HEAD_KEYS and isinstance(head["seq"], int)
            and not isinstance(head["seq"], bool) and head["seq"] >= 0
            and isinstance(head["epoch"], str) and isinstance(head["hash"], str)
            and isinstance(head["table"], str)):
        raise ValueError("not a head: needs table, epoch, seq >= 0, hash, time, key_id, sig")
    return head


class HeadFile:
    """The head file: written atomically and fsynced before the head is published."""

    def __init__(self, path: str) -> None:
        self.path = path

    def read(self, keys: Iterable[Any], unsigned: bool = False) -> dict[str, Any] | None:
        """The last head written, checked; None when there is no file. A file that is
        not a head signed by ``keys`` is refused (JournalError): it is this daemon's own
        record, and a changed one is someone's attempt to make a rollback pass."""
        try:
            with open(self.path, "rb") as f:
                data = f.read(64 * 1024)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise JournalError(f"head file {self.path}: cannot read it ({exc.strerror})"
                               ) from None
        try:
            return parse_head(data, keys, unsigned=unsigned)
        except (ValueError, SignatureError) as exc:
            raise JournalError(
                f"head file {self.path}: {exc}; it records the last head this daemon "
                "published and was altered or belongs to another key. Find out why; "
                "remove it only if you know the journal beside it is the table's latest"
            ) from None

    def write(self, payload: bytes) -> None:
        tmp = self.path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
        try:
            os.write(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)


def check_against_head(journal: Journal, head: dict[str, Any], where: str) -> None:
    """Refuse (JournalError) a journal that is behind or forked from ``head`` (what
    ``where`` says was published), or of an epoch that does not follow it."""
    seq, epoch, hash_ = head["seq"], head["epoch"], head["hash"]
    what_to_do = ("Do not start on it: restore the journal's latest copy together with "
                  "its -wal file (docs/journal.md, \"Never started over\")")
    if epoch == journal.epoch:
        if seq > journal.last_seq:
            raise JournalError(
                f"journal {journal.path}: it ends at seq {journal.last_seq}, but {where} "
                f"says seq {seq} of this journal was published: the journal is behind "
                "what this table announced (restored from an older copy, or its -wal file "
                f"lost or shortened). {what_to_do}")
        entry = journal.entry(seq) if seq else None
        have = entry.hash if entry is not None else GENESIS
        if have != hash_:
            raise JournalError(
                f"journal {journal.path}: seq {seq} has hash {have[:16]}..., but {where} "
                f"says {hash_[:16]}... was published: the journal forked from what this "
                f"table announced. {what_to_do}")
        return
    first = journal.first_entry()
    previous = first.data.get("previous") if first is not None and \
        first.type == "journal_started" else None
    if isinstance(previous, dict) and previous.get("epoch") == epoch:
        if isinstance(previous.get("seq"), int) and previous["seq"] >= seq:
            return  # this journal follows the one the head is of
        raise JournalError(
            f"journal {journal.path} follows epoch {epoch} at seq {previous.get('seq')}, "
            f"but {where} says that epoch went on to seq {seq}: events were published "
            f"after this journal's predecessor ended. {what_to_do}")
    raise JournalError(
        f"journal {journal.path} is epoch {journal.epoch}, but {where} says this table "
        f"last published epoch {epoch} (seq {seq}), which this journal does not follow: "
        "it is an older or another table's journal, or the journal that was published "
        f"was replaced. {what_to_do}. To start a new journal deliberately, move the old "
        "one aside AND clear the broker's retained head (mosquitto_pub -r -n -t "
        "<prefix>/<table>/casino/head) so the new one says what it follows.")


def _newest(heads: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Of heads (file, broker), the one to name as previous: same epoch, the higher seq;
    else the file's (the daemon's own record)."""
    if not heads:
        return None
    if len(heads) == 2 and heads[0]["epoch"] == heads[1]["epoch"]:
        return max(heads, key=lambda h: h["seq"])
    return heads[0]


def open_table_journal(path: str, table_id: str, *, key: Any | None,
                       broker_head: dict[str, Any] | None = None,
                       keys: Iterable[Any] = ()) -> Journal:
    """The daemon's journal: opened where one exists (strictly: a file that holds no
    journal is refused), created with ``journal_started`` only where no journal file
    exists; then checked against the head file and ``broker_head``. JournalError (the
    daemon's exit 2) says what is wrong and what to do."""
    from shoe_controller.keys import trusted_public_keys

    pinned = list(keys) or (trusted_public_keys(key) if key is not None else [])
    head_file = HeadFile(head_file_path(path))
    file_head = head_file.read(pinned, unsigned=key is None)
    if not os.path.lexists(path):
        if os.path.exists(path + "-wal"):
            raise JournalError(
                f"journal {path}: missing, but its -wal file {path}-wal is there: the "
                "journal file was lost or moved. Put it back; do not start over")
        known = [h for h in (file_head, broker_head) if h is not None]
        prev = _newest(known)
        previous = None if prev is None else {k: prev[k] for k in ("epoch", "seq", "hash")}

        def first(epoch: str) -> list[dict[str, Any]]:
            return [{"type": "journal_started", "epoch": epoch, "table": table_id,
                     "previous": previous}]

        journal = Journal.create(path, table_id=table_id, first=first)
        log.warning("new journal %s, epoch %s (previous: %s)", path, journal.epoch,
                    "none known" if previous is None else
                    f"epoch {previous['epoch']} seq {previous['seq']}")
    else:
        journal = Journal.open(path, table_id=table_id, existing=True)
    try:
        for head, where in ((file_head, f"the head file {head_file.path}"),
                            (broker_head, "the head retained on the broker")):
            if head is not None:
                if head.get("table") != table_id:
                    raise JournalError(f"{where} is of table {head.get('table')!r}, not "
                                       f"{table_id!r}")
                check_against_head(journal, head, where)
    except BaseException:
        journal.close()
        raise
    return journal


def fetch_retained_head(config: Any, topics: Any, keys: Iterable[Any], *,
                        unsigned: bool = False, timeout: float = 3.0
                        ) -> tuple[dict[str, Any] | None, str]:
    """The head retained on the broker, checked (None when there is none, the broker
    cannot be reached, or the head does not verify), and a word on what happened (for
    the log).

    A short connection *as the daemon itself*: its own client id, its own persistent
    session resumed (``clean_start=False``, the same Session Expiry Interval), not a
    session of its own and not a clean one. A broker that binds client ids to users
    (mosquitto's ``use_username_as_clientid``, as systemd/mosquitto ships) gives every
    connection of the controller's user the same client id anyway; a clean start then
    threw away the daemon's session, and with it the replay requests queued for it
    while it was down. So it acknowledges only the head: whatever else the session
    delivers (a queued replay request) stays unacknowledged, and the broker delivers it
    again to the daemon's own connection, which answers it. It unsubscribes from the
    head before it leaves, so the daemon is not sent its own heads."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    from shoe_controller.publish.mqtt import configure_client

    topic = topics.casino_head
    got: list[bytes] = []
    subscribed = threading.Event()
    done = threading.Event()
    unsubscribed = threading.Event()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                         client_id=config.client_id_for(topics.table),
                         protocol=mqtt.MQTTv5)
    client.manual_ack_set(True)
    try:
        configure_client(client, config)
    except ValueError as exc:
        return None, str(exc)

    def on_connect(c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if getattr(reason, "is_failure", False):
            done.set()
            return
        c.subscribe(topic, qos=1)

    def on_subscribe(c: Any, _u: Any, _m: Any, _r: Any, _p: Any) -> None:
        subscribed.set()

    def on_unsubscribe(c: Any, *_a: Any) -> None:
        unsubscribed.set()

    def on_message(c: Any, _u: Any, msg: Any) -> None:
        if msg.topic == topic:
            c.ack(msg.mid, msg.qos)
            got.append(bytes(msg.payload))
            done.set()
        # anything else is the daemon's (a queued replay request): not acknowledged here

    client.on_connect, client.on_subscribe, client.on_message = (
        on_connect, on_subscribe, on_message)
    client.on_unsubscribe = on_unsubscribe
    host, port, _tls = config.endpoint()
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = config.session_expiry
    try:
        client.connect(host, port, keepalive=10, clean_start=False, properties=props)
    except (OSError, ValueError) as exc:
        return None, f"cannot reach the broker at {host}:{port} ({exc})"
    client.loop_start()
    try:
        if subscribed.wait(timeout):
            done.wait(0.5)  # a retained message follows the SUBACK at once
            client.unsubscribe(topic)
            unsubscribed.wait(1.0)
        else:
            return None, f"no answer from the broker at {host}:{port} within {timeout:.0f} s"
    finally:
        with contextlib.suppress(Exception):
            client.disconnect()
        client.loop_stop()
    if not got or not got[-1]:
        return None, "no head retained on the broker"
    try:
        return parse_head(got[-1], keys, unsigned=unsigned), "checked"
    except (ValueError, SignatureError) as exc:
        log.warning("the head retained on %s does not verify (%s): ignored", topic, exc)
        return None, f"a retained head that does not verify ({exc})"
