"""The supervisor's control socket (the edge): ``shoe-controller ctl`` talks to it.

``<state_dir>/control`` is a unix **stream** socket, mode 0660 inside the 0750 state
directory: whoever may connect acts as the supervisor, and the kernel says who they are
(``SO_PEERCRED``: uid, gid, pid), which goes into the journaled event.

Protocol (one request per connection; simple enough for ``socat`` or ``nc -U``)::

    client: one UTF-8 line, at most 1024 bytes, ending in "\\n"
            <verb> [arguments]        e.g. "card QH", "pause dropped card", "void", "resume"
    server: the reply, one or more lines, then it closes the connection.
            The first line is "ok", "ok: <detail>", "refused: <reason>" or "error: <what>".

Game verbs (``pause [reason]``, ``resume``, ``void [reason]``, ``card CODE``) become game
inputs stamped ``source = "socket"`` and the operator; the reply comes after the core
has decided and the events are journaled: ``ok`` when it acted, ``refused: <reason>``
when it did not (the rules are pure: :mod:`shoe_controller.game.supervisor`). A void
takes the supervisor key's position at the moment of the request (``key_on``). Other
verbs (``status``, ...) are plain request handlers: ``handlers={"status": fn}`` where
``fn(args, operator) -> str`` returns the reply text (its first line as above).

Nothing about the cards of an open round goes to the log: a manual entry is logged as
"card" and its outcome, never its code.

>>> control_input("card qh").card, control_input("void wrong shoe")
(Card('QH'), Void(reason='wrong shoe'))
>>> control_input("deal 4")
Traceback (most recent call last):
...
ValueError: unknown command 'deal': expected card CODE, pause, resume or void
"""

from __future__ import annotations

import contextlib
import logging
import os
import pwd
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

from shoe_controller.game.events import Operator
from shoe_controller.game.inputs import Input

__all__ = [
    "MAX_REQUEST",
    "ControlSocketInput",
    "Handler",
    "control_input",
    "peer_operator",
    "reply_for",
    "request",
]

log = logging.getLogger("shoe_controller.daemon.control")

#: The longest request line accepted (bytes, newline included).
MAX_REQUEST = 1024
#: How long a client may take to send its line, and the core to decide (seconds).
CLIENT_TIMEOUT = 2.0
DECIDE_TIMEOUT = 5.0
#: A plain request handler: ``fn(arguments, operator) -> reply text``.
Handler = Callable[[list[str], Operator], str]
_GAME_VERBS = ("card", "pause", "resume", "void")
#: Fault kinds that mean the core refused a supervisor action.
_REFUSALS = frozenset({"input_refused", "manual_card_required", "resume_refused"})


def control_input(line: str, operator: Operator | None = None, *,
                  key: bool = False) -> Input:
    """The game input one supervisor command line stands for, stamped as coming from the
    socket (``operator``: who; ``key``: the supervisor key's position, for a void).
    Raises ValueError saying what is wrong."""
    from shoe_controller.game.cards import CardParseError, parse_card
    from shoe_controller.game.inputs import ManualCard, Pause, Resume, Void

    words = line.split()
    if not words:
        raise ValueError("empty command")
    verb, rest = words[0].lower(), " ".join(words[1:])[:200]
    who: dict[str, Any] = {"source": "socket", "operator": operator}
    if verb == "card":
        if len(words) != 2:
            raise ValueError("card needs one card code, e.g. card QH")
        try:
            return ManualCard(parse_card(words[1]), **who)
        except CardParseError as exc:
            raise ValueError(str(exc)) from None
    if verb == "pause":
        return Pause(rest or "supervisor", **who)
    if verb == "resume":
        if rest:
            raise ValueError("resume takes no arguments")
        return Resume(**who)
    if verb == "void":
        return Void(rest or "supervisor", key=key, **who)
    raise ValueError(f"unknown command {verb!r}: expected card CODE, pause, resume or void")


def peer_operator(conn: socket.socket) -> Operator:
    """Who is at the other end of a unix stream socket (``SO_PEERCRED``), with the
    uid's login name when it has one.

    >>> a, b = socket.socketpair()
    >>> op = peer_operator(a); (op.uid, op.pid) == (os.getuid(), os.getpid())
    True
    >>> a.close(); b.close()
    """
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", creds)
    try:
        user: str | None = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = None
    return Operator(uid=uid, gid=gid, pid=pid, user=user)


def reply_for(events: list[Any], refusal: str | None) -> str:
    """The reply's first line once the core decided: ``refused: <reason>`` when it
    journaled a refusal or did nothing (``refusal`` then says why), else ``ok``.

    >>> from shoe_controller.game.events import Fault, RoundPaused
    >>> reply_for([RoundPaused(1, 2, "check")], None)
    'ok'
    >>> reply_for([Fault(1, 2, "input_refused", "no card is awaited")], None)
    'refused: no card is awaited'
    >>> reply_for([], "nothing is paused")
    'refused: nothing is paused'
    """
    for ev in events:
        if getattr(ev, "type", None) == "fault" and ev.kind in _REFUSALS:
            return f"refused: {ev.detail}"
    if not events:
        return f"refused: {refusal or 'nothing to do'}"
    return "ok"


class ControlSocketInput:
    """The control socket as one of the daemon's input sources.

    ``start(submit)`` needs the daemon's ``submit`` (it takes ``done=``: the socket
    waits for the core's decision to reply). ``key_on()`` says whether the supervisor
    key is turned (the station's key switch; False without one). ``handlers``: extra
    verbs answered directly (see the module docstring).
    """

    name = "control"

    def __init__(self, path: str, *, key_on: Callable[[], bool] | None = None,
                 handlers: dict[str, Handler] | None = None) -> None:
        self.path = path
        self.key_on = key_on or (lambda: False)
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, submit: Callable[..., None]) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o117)  # 0660: the daemon's user and group only
        try:
            sock.bind(self.path)
        finally:
            os.umask(old)
        sock.listen(8)
        sock.settimeout(0.2)
        self._sock = sock
        self._submit = submit
        self._thread = threading.Thread(target=self._run, name="control", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                try:
                    self._serve(conn)
                    _drain(conn)
                except Exception:  # one odd client must not end the socket
                    log.exception("control socket: request failed")

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(CLIENT_TIMEOUT)
        operator = peer_operator(conn)
        try:
            line = _read_line(conn)
        except ValueError as exc:
            _send(conn, f"error: {exc}")
            return
        except OSError:
            return
        words = line.split()
        verb = words[0].lower() if words else ""
        if verb in self.handlers:
            reply = self.handlers[verb](words[1:], operator)
        elif verb in _GAME_VERBS or not verb:
            reply = self._game(line, operator)
        else:
            known = ", ".join([*_GAME_VERBS, *sorted(self.handlers)])
            reply = f"error: unknown command {verb[:40]!r}: expected one of {known}"
        log.info("supervisor %s from uid %d pid %d%s: %s", verb[:16] or "(empty)",
                 operator.uid, operator.pid, f" ({operator.user})" if operator.user else "",
                 reply.splitlines()[0] if reply else "")
        _send(conn, reply)

    def _game(self, line: str, operator: Operator) -> str:
        try:
            inp = control_input(line, operator, key=bool(self.key_on()))
        except ValueError as exc:
            return f"error: {exc}"
        decided = threading.Event()
        result: dict[str, Any] = {}

        def done(events: list[Any], before: Any) -> None:
            from shoe_controller.game.supervisor import refusal

            result["reply"] = reply_for(list(events), None if events or before is None
                                        else refusal(before, inp))
            decided.set()

        self._submit(inp, "socket", done=done)
        if not decided.wait(DECIDE_TIMEOUT):
            return "error: the daemon did not decide in time (is it stopping?)"
        return str(result["reply"])

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        if self._sock is not None:
            self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


def _read_line(conn: socket.socket) -> str:
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(MAX_REQUEST + 1 - len(data))
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError(f"request longer than {MAX_REQUEST} bytes")
    try:
        return data.split(b"\n", 1)[0].decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the request is not UTF-8") from None


def _drain(conn: socket.socket, limit: int = 64 * 1024) -> None:
    """Read what the client still sends (a refused overlong line) before closing, so
    it gets the reply rather than a connection reset; bounded in bytes and time."""
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(0.2)
        while limit > 0:
            chunk = conn.recv(min(limit, 16384))
            if not chunk:
                return
            limit -= len(chunk)


def _send(conn: socket.socket, reply: str) -> None:
    with contextlib.suppress(OSError):  # the client did not wait for it
        conn.sendall(reply.rstrip("\n").encode() + b"\n")


def request(path: str, line: str, timeout: float = DECIDE_TIMEOUT + 2) -> str:
    """Send one request line to the control socket at ``path``; the reply text.
    OSError when nothing listens there (or it cannot be reached)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(line.encode() + b"\n")
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace").rstrip("\n")
