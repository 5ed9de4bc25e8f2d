"""A tiny HTTP server for the table display page: the static files and ``/config.json``.

The page itself talks to the broker (MQTT over WebSockets); this server only hands it
the files and tells it where the broker is and which table to show. It serves a fixed
list of files from the package (no directory listing, no path from the request ever
touches the file system) and runs in a background thread, so the daemon's core loop
never waits on a browser.

>>> srv = serve(0, "ws://127.0.0.1:9001", "T1", bind="127.0.0.1")
>>> import json, urllib.request
>>> json.load(urllib.request.urlopen(srv.url + "config.json"))["table_id"]
'T1'
>>> srv.close()

Run it alone (for a screen test without the daemon)::

    python -m shoe_controller.display.server --port 8080 --table-id T1 \\
        --broker-ws-url ws://127.0.0.1:9001
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

__all__ = ["BUNDLE", "DisplayServer", "bundle_present", "page_config", "serve"]

log = logging.getLogger(__name__)

#: URL path -> (file under static/, content type). Nothing else is ever served.
FILES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/vendor/mqtt.min.js": ("vendor/mqtt.min.js", "text/javascript; charset=utf-8"),
}
#: The MQTT client bundle copied in by the build step.
BUNDLE = "vendor/mqtt.min.js"


def _static(name: str) -> Any:
    return resources.files("shoe_controller.display.static").joinpath(name)


def bundle_present() -> bool:
    """Whether ``python -m shoe_controller.display.build`` has put the MQTT bundle in place.

    >>> isinstance(bundle_present(), bool)
    True
    """
    return bool(_static(BUNDLE).is_file())


def page_config(broker_ws_url: str, table_id: str, *, topic_prefix: str = "shoe",
                ws_port: int = 9001, username: str | None = None,
                password: str | None = None, title: str = "") -> dict[str, Any]:
    """What ``/config.json`` tells the page.

    >>> page_config("", "T1")["topics"]
    {'state': 'shoe/T1/display/state', 'status': 'shoe/T1/status'}
    """
    base = f"{topic_prefix}/{table_id}"
    return {
        "table_id": table_id,
        "title": title or f"Table {table_id}",
        # empty: the page uses ws://<its own host>:<ws_port>
        "broker_ws_url": broker_ws_url,
        "ws_port": ws_port,
        "username": username,
        "password": password,
        "topics": {"state": f"{base}/display/state", "status": f"{base}/status"},
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        # the page must pick up a new version after an upgrade without a manual reload
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/config.json":
            body = json.dumps(self.server.config).encode()
            self._send(HTTPStatus.OK, body, "application/json")
            return
        entry = FILES.get(path)
        if entry is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
            return
        name, content_type = entry
        try:
            body = _static(name).read_bytes()
        except FileNotFoundError:
            msg = f"{name} is missing: run `python -m shoe_controller.display.build`\n"
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, msg.encode(),
                       "text/plain; charset=utf-8")
            return
        self._send(HTTPStatus.OK, body, content_type)

    do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("display http: " + format, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    config: dict[str, Any]


class DisplayServer:
    """A running display page server. ``stop()`` (or ``close()``) stops it."""

    def __init__(self, httpd: _Server) -> None:
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="display-http",
                                        daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        host = self._httpd.server_address[0]
        host = "127.0.0.1" if host in ("0.0.0.0", "") else host
        return f"http://{host}:{self.port}/"

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join(5)
        self._httpd.server_close()

    close = stop


def serve(port: int, broker_ws_url: str, table_id: str, *, bind: str = "0.0.0.0",
          topic_prefix: str = "shoe", ws_port: int = 9001, username: str | None = None,
          password: str | None = None, title: str = "") -> DisplayServer:
    """Serve the display page on ``bind:port`` (0: a free port) in a background thread.

    ``broker_ws_url`` is the broker's WebSocket URL as the browser sees it; empty means
    ``ws://<host the page came from>:<ws_port>``.
    """
    if not bundle_present():
        log.warning("display page: the MQTT client bundle is missing; run "
                    "`python -m shoe_controller.display.build` (the page will say so)")
    httpd = _Server((bind, port), _Handler)
    httpd.config = page_config(broker_ws_url, table_id, topic_prefix=topic_prefix,
                               ws_port=ws_port, username=username, password=password,
                               title=title)
    return DisplayServer(httpd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shoe_controller.display.server",
                                     description="Serve the table display page alone.")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--bind", default="0.0.0.0")
    parser.add_argument("--table-id", required=True)
    parser.add_argument("--broker-ws-url", default="",
                        help="broker WebSocket URL as the browser sees it "
                             "(default ws://<page host>:--ws-port)")
    parser.add_argument("--ws-port", type=int, default=9001)
    parser.add_argument("--topic-prefix", default="shoe")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    srv = serve(args.port, args.broker_ws_url, args.table_id, bind=args.bind,
                topic_prefix=args.topic_prefix, ws_port=args.ws_port)
    print(f"display page on {srv.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        srv.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
