"""What `config check` and `run` look at beyond the file's syntax: the files a config
names (keys, passwords, certificates) and settings unsafe at a casino table.

Pure over a loaded :class:`~shoe_controller.config.Config` plus the file system; no
network. Key and password files are checked by :mod:`shoe_controller.keys` (the one
place key files are checked).

>>> from shoe_controller.config import load_config_text
>>> cfg = load_config_text('[mqtt]\\nhost = "broker.casino.lan"\\n')
>>> for w in casino_warnings(cfg): print(w[:60])
[rules] confirm = "auto": an extra fifth/sixth card cannot b
[mqtt] signing_key_file is not set: the casino feed goes out
[mqtt] plain MQTT (no TLS) to broker.casino.lan, which is no
>>> file_errors(load_config_text('[mqtt]\\nsigning_key_file = "/nonexistent/signing.key"\\n'))
['[mqtt] signing_key_file /nonexistent/signing.key: no such file']
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any

__all__ = ["casino_warnings", "file_errors", "is_loopback"]

#: (section, key, kind): every setting that names a file. ``secret``: only the service
#: may read it (checked for safe modes); ``public``: it only has to exist and be readable.
FILE_SETTINGS: tuple[tuple[str, str, str], ...] = (
    ("mqtt", "signing_key_file", "secret"),
    ("mqtt", "password_file", "secret"),
    ("mqtt", "key_file", "secret"),
    ("mqtt", "cert_file", "public"),
    ("mqtt", "ca_file", "public"),
)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine (no network crossed).

    >>> is_loopback("localhost"), is_loopback("127.0.0.2"), is_loopback("::1")
    (True, True, True)
    >>> is_loopback("10.0.0.5"), is_loopback("broker.casino.lan")
    (False, False)
    """
    if host.lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_secret(path: str, what: str) -> str | None:
    """The problem with a secret file, or None (:func:`shoe_controller.keys.check_secret_file`:
    exists, a regular file, not readable or writable by group or others)."""
    from shoe_controller.keys import check_secret_file

    problems = check_secret_file(path)
    return f"{what} {'; '.join(problems)}" if problems else None


def _check_readable(path: str, what: str) -> str | None:
    if not os.path.exists(path):
        return f"{what} {path!r}: no such file"
    if os.path.isdir(path):
        return f"{what} {path!r}: is a directory, not a file"
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        return f"{what} {path!r}: cannot read it ({exc.strerror})"
    return None


def file_errors(config: Any, state_dir: str | None = None) -> list[str]:
    """One line per file setting whose file is missing, unreadable or unsafe, and the
    device's signing key in ``state_dir`` if there is one there and it is unsafe."""
    out: list[str] = []
    if state_dir is not None:
        from shoe_controller.keys import PRIVATE_NAME, check_secret_file

        key = os.path.join(state_dir, PRIVATE_NAME)
        if os.path.lexists(key):
            out += [f"signing key {p}" for p in check_secret_file(key)]
    for section, key, kind in FILE_SETTINGS:
        path = getattr(getattr(config, section, None), key, None)
        if not path:
            continue
        what = f"[{section}] {key}"
        problem = _check_secret(path, what) if kind == "secret" else _check_readable(path, what)
        if problem:
            out.append(problem)
    return out


def casino_warnings(config: Any, state_dir: str | None = None) -> list[str]:
    """Settings a casino table should not run with (each one line). ``state_dir``: where
    the device's signing key should be (`shoe-controller keys init`)."""
    out: list[str] = []
    rules = getattr(config, "rules", None)
    if getattr(rules, "confirm", None) == "auto":
        out.append('[rules] confirm = "auto": an extra fifth/sixth card cannot be told from '
                   'the next round\'s first card; casino tables need confirm = "button"')
    mqtt = getattr(config, "mqtt", None)
    if mqtt is None or not getattr(mqtt, "enabled", True):
        return out
    if state_dir is not None:
        from shoe_controller.keys import PRIVATE_NAME

        if not os.path.lexists(os.path.join(state_dir, PRIVATE_NAME)):
            out.append(f"no signing key {os.path.join(state_dir, PRIVATE_NAME)}: the casino "
                       "feed cannot be signed (shoe-controller keys init --state-dir "
                       f"{state_dir})")
    elif not getattr(mqtt, "signing_key_file", None):
        out.append("[mqtt] signing_key_file is not set: the casino feed goes out unsigned")
    host, _port, tls = mqtt.endpoint()
    if not tls and not is_loopback(host):
        out.append(f"[mqtt] plain MQTT (no TLS) to {host}, which is not this machine: "
                   "credentials and events cross the network in clear; use mqtts:// or "
                   "tls = true")
    return out
