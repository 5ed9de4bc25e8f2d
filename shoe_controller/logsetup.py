"""Logging of the daemon (`run`, `simulate`): plain lines for journald, timestamped
lines elsewhere, or one JSON object per line (``--log-format json``).

Under systemd with stderr connected to the journal (``$JOURNAL_STREAM`` names stderr's
device and inode), journald stamps every line itself: a second timestamp is noise.
Anywhere else (a terminal, a file, a container's log) each line starts with the UTC time.

>>> import json, logging
>>> rec = logging.LogRecord("shoe_controller.daemon", logging.WARNING, __file__, 1,
...                         "MQTT %s", ("disconnected",), None)
>>> rec.created = 1764561600.25
>>> json.loads(JsonFormatter().format(rec))  # doctest: +NORMALIZE_WHITESPACE
{'time': '2025-12-01T04:00:00.250Z', 'level': 'WARNING', 'logger': 'shoe_controller.daemon',
 'message': 'MQTT disconnected'}
>>> TextFormatter(timestamps=True).format(rec)
'2025-12-01T04:00:00.250Z shoe_controller.daemon WARNING: MQTT disconnected'
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any, TextIO

__all__ = ["LOG_FORMATS", "JsonFormatter", "TextFormatter", "setup_logging", "under_journald"]

LOG_FORMATS = ("text", "json")


def _utc(created: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + \
        f".{int(created * 1000) % 1000:03d}Z"


def under_journald(stream: Any = None) -> bool:
    """Whether ``stream`` (default stderr) is systemd's journal stream."""
    value = os.environ.get("JOURNAL_STREAM", "")
    if not value:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        st = os.fstat(stream.fileno())
        dev, ino = value.split(":")
        return (st.st_dev, st.st_ino) == (int(dev), int(ino))
    except (OSError, ValueError, AttributeError):
        return False


class TextFormatter(logging.Formatter):
    """``[TIME ]logger LEVEL: message`` (+ the traceback, if any)."""

    def __init__(self, timestamps: bool) -> None:
        super().__init__("%(name)s %(levelname)s: %(message)s")
        self.timestamps = timestamps

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return f"{_utc(record.created)} {text}" if self.timestamps else text


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, message (+ exception)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": _utc(record.created), "level": record.levelname,
                               "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, separators=(",", ":"), ensure_ascii=False)


def setup_logging(level: int = logging.INFO, fmt: str = "text",
                  stream: TextIO | None = None) -> logging.Handler:
    """Configure the root logger once for the daemon; returns the handler installed."""
    stream = sys.stderr if stream is None else stream
    handler = logging.StreamHandler(stream)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter(timestamps=not under_journald(stream)))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler
