"""`shoe-calibrate camera`: set up the region of interest, exposure and focus.

The Pi has no screen, so the live view is an MJPEG page served over HTTP (on loopback
by default: reach it with ``ssh -L 8080:127.0.0.1:8080 pi@shoe`` and open
http://127.0.0.1:8080/), or snapshots written to a folder. Each frame is annotated
with the region of interest and three figures that guide the set-up:

- **sharpness**: variance of the Laplacian inside the ROI (higher is sharper; turn the
  focus for the maximum; ``--focus-sweep`` tries a range and reports the best);
- **level**: mean grey level of the ROI (0-255) with a card in view;
- **clipped**: share of ROI pixels at 250 or above (over-exposure loses the glyphs).

``--save`` writes ROI, exposure, focus and the measured sharpness into the calibration
profile (``--profile``), where ``learn`` and the daemon find them.

>>> import numpy as np
>>> flat = np.full((60, 80), 128, np.uint8)
>>> sharpness(flat)
0.0
>>> edges = flat.copy(); edges[:, ::2] = 0
>>> sharpness(edges) > 1000
True
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from shoe_controller.vision.config import CameraConfig, load_vision_sections
from shoe_controller.vision.sources import CameraError, FrameSource, crop, open_source

__all__ = [
    "PreviewServer",
    "RoiFinder",
    "add_arguments",
    "annotate",
    "measure",
    "run",
    "sharpness",
]


def sharpness(grey: np.ndarray) -> float:
    """Focus score: variance of the Laplacian (edges are strong when in focus)."""
    if grey.ndim == 3:
        grey = cv2.cvtColor(grey, cv2.COLOR_BGR2GRAY)
    return round(float(cv2.Laplacian(grey, cv2.CV_32F).var()), 2)


def measure(frame: np.ndarray, roi: Sequence[int] | None) -> dict[str, float]:
    """Sharpness, mean level and clipped share of the ROI of one frame.

    >>> measure(np.full((10, 10), 255, np.uint8), None)
    {'sharpness': 0.0, 'level': 255.0, 'clipped': 1.0}
    """
    region = crop(frame, roi)
    grey = region if region.ndim == 2 else cv2.cvtColor(region, cv2.COLOR_BGR2GRAY)
    return {
        "sharpness": sharpness(grey),
        "level": round(float(grey.mean()), 1),
        "clipped": round(float(np.count_nonzero(grey >= 250)) / grey.size, 4),
    }


def annotate(frame: np.ndarray, roi: Sequence[int] | None, figures: dict[str, float]) -> np.ndarray:
    """A copy of ``frame`` with the ROI drawn and the figures written on it."""
    out = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    if roi is not None:
        x, y, w, h = roi
        cv2.rectangle(out, (x, y), (x + w - 1, y + h - 1), (0, 255, 0), 2)
    text = "  ".join(f"{k} {v:g}" for k, v in figures.items())
    cv2.putText(out, text, (8, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 3)
    cv2.putText(out, text, (8, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1)
    return out


class RoiFinder:
    """Where card faces appear over many frames: the ROI to propose.

    A pixel counts as card where it is lighter than the dark shoe interior; the proposal
    is the box of pixels that were card in at least ``share`` of the frames that showed
    a card, grown by ``margin`` (cards drift a little from pass to pass).

    >>> f = RoiFinder()
    >>> frame = np.zeros((100, 200), np.uint8)
    >>> frame[20:60, 50:120] = 220
    >>> f.add(frame); f.add(np.zeros((100, 200), np.uint8))
    >>> f.suggest(margin=0.1)
    (43, 16, 84, 48)
    """

    def __init__(self, level: int = 90, share: float = 0.05) -> None:
        self.level, self.share = level, share
        self.count: np.ndarray | None = None
        self.frames_with_card = 0

    def add(self, frame: np.ndarray) -> None:
        grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        light = grey > self.level
        if light.mean() < 0.01:
            return  # the empty window tells nothing about where cards pass
        if self.count is None:
            self.count = np.zeros(grey.shape, np.int32)
        self.count += light
        self.frames_with_card += 1

    def suggest(self, margin: float = 0.1) -> tuple[int, int, int, int] | None:
        if self.count is None or not self.frames_with_card:
            return None
        ys, xs = np.nonzero(self.count >= max(1.0, self.share * self.frames_with_card))
        if not len(xs):
            return None
        h, w = self.count.shape
        x0, x1, y0, y1 = int(xs.min()), int(xs.max()) + 1, int(ys.min()), int(ys.max()) + 1
        mx, my = round((x1 - x0) * margin), round((y1 - y0) * margin)
        x0, y0 = max(0, x0 - mx), max(0, y0 - my)
        x1, y1 = min(w, x1 + mx), min(h, y1 + my)
        return x0, y0, x1 - x0, y1 - y0


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Shoe camera set-up</title>
<style>body{background:#111;color:#eee;font-family:sans-serif;margin:1em}
img{max-width:100%;border:1px solid #444}</style></head>
<body><h1>Shoe camera set-up</h1>
<p id="figures">waiting for frames...</p>
<img src="stream.mjpg" alt="live camera preview">
<p>Turn the focus for the highest sharpness with a card in view; keep clipped near 0.
<a href="snapshot.jpg">snapshot</a> &middot; <a href="status.json">status</a></p>
<script>
async function poll(){try{const r=await fetch('status.json');const s=await r.json();
document.getElementById('figures').textContent=JSON.stringify(s.figures);}catch(e){}
setTimeout(poll,500);}poll();
</script></body></html>
"""


class PreviewServer:
    """An MJPEG preview over HTTP: ``/`` page, ``/stream.mjpg``, ``/snapshot.jpg``,
    ``/status.json``. Frames are pushed with :meth:`publish`."""

    boundary = "shoeframe"

    def __init__(self, host: str = "127.0.0.1", port: int = 8080) -> None:
        self._cond = threading.Condition()
        self._jpeg: bytes | None = None
        self._seq = 0
        self._status: dict[str, Any] = {}
        self._closed = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet by default
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                if path in ("/", "/index.html"):
                    self._send(HTTPStatus.OK, "text/html; charset=utf-8", _PAGE.encode())
                elif path == "/status.json":
                    body = json.dumps(server.status()).encode()
                    self._send(HTTPStatus.OK, "application/json", body)
                elif path == "/snapshot.jpg":
                    jpeg = server.wait_frame(0, timeout=5.0)[1]
                    if jpeg is None:
                        self._send(HTTPStatus.SERVICE_UNAVAILABLE, "text/plain", b"no frame yet")
                    else:
                        self._send(HTTPStatus.OK, "image/jpeg", jpeg)
                elif path == "/stream.mjpg":
                    self._stream()
                else:
                    self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")

            def _send(self, status: int, ctype: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def _stream(self) -> None:
                self.send_response(HTTPStatus.OK)
                self.send_header(
                    "Content-Type", f"multipart/x-mixed-replace; boundary={server.boundary}"
                )
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                seq = 0
                try:
                    while True:
                        seq, jpeg = server.wait_frame(seq, timeout=1.0)
                        if jpeg is None:
                            if server.closed:
                                return
                            continue
                        head = (
                            f"--{server.boundary}\r\nContent-Type: image/jpeg\r\n"
                            f"Content-Length: {len(jpeg)}\r\n\r\n"
                        ).encode()
                        self.wfile.write(head + jpeg + b"\r\n")
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the viewer went away

        server_class = ThreadingHTTPServer
        if ":" in host:  # an IPv6 address such as ::1

            class Server6(ThreadingHTTPServer):
                address_family = socket.AF_INET6

            server_class = Server6
        self._httpd = server_class((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host if ':' not in host else f'[{host}]'}:{port}/"

    @property
    def closed(self) -> bool:
        return self._closed

    def publish(self, frame: np.ndarray, status: dict[str, Any], quality: int = 80) -> None:
        """Make ``frame`` the current preview image and ``status`` the current figures."""
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if not ok:
            return
        with self._cond:
            self._jpeg = buf.tobytes()
            self._status = status
            self._seq += 1
            self._cond.notify_all()

    def status(self) -> dict[str, Any]:
        with self._cond:
            return dict(self._status)

    def wait_frame(self, after: int, timeout: float) -> tuple[int, bytes | None]:
        """The newest frame once its number exceeds ``after`` (or None on timeout)."""
        with self._cond:
            self._cond.wait_for(lambda: self._seq > after or self._closed, timeout)
            if self._seq > after:
                return self._seq, self._jpeg
            return after, None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


# --------------------------------------------------------------------------- command


def _rect(text: str) -> tuple[int, int, int, int]:
    try:
        x, y, w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected x,y,width,height") from None
    if min(x, y) < 0 or min(w, h) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: x, y >= 0 and width, height >= 1")
    return x, y, w, h


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    try:
        return (host.strip("[]") or "127.0.0.1", int(port))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected [HOST:]PORT") from None


def _sweep(text: str) -> list[float]:
    try:
        start, stop, step = (float(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected START:STOP:STEP") from None
    if step <= 0 or stop < start:
        raise argparse.ArgumentTypeError(f"{text!r}: need STOP >= START and STEP > 0")
    return [round(start + i * step, 6) for i in range(int((stop - start) / step + 1e-9) + 1)]


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """Options choosing a frame source (shared with ``deck-check``)."""
    g = parser.add_argument_group("frame source (default: the [camera] table of --config)")
    g.add_argument("--config", type=Path, help="the table's TOML file ([camera], [vision] ...)")
    g.add_argument(
        "--source",
        choices=["usb", "picamera", "folder", "video", "synthetic"],
        help="override [camera] source",
    )
    g.add_argument("--device", help="camera device, or folder / video path")
    g.add_argument("--width", type=int)
    g.add_argument("--height", type=int)
    g.add_argument("--fps", type=float)
    g.add_argument("--loop", action="store_true", default=None, help="replay: start again at end")
    g.add_argument(
        "--realtime", action="store_true", default=None, help="replay: pace frames at --fps"
    )
    g.add_argument(
        "--barcode-cards",
        action="store_true",
        help="synthetic source: draw barcode cards (script items are payloads)",
    )
    g.add_argument(
        "--pass-frames", type=int, default=8, help="synthetic source: frames per card pass (8)"
    )
    g.add_argument(
        "--script",
        default="",
        help="synthetic source: space-separated card codes / CUT / NONE, or @FILE",
    )


def camera_config(args: argparse.Namespace, **extra: Any) -> CameraConfig:
    """``[camera]`` from --config, with the command-line overrides applied."""
    base = load_vision_sections(args.config)[1] if args.config else CameraConfig()
    changes = {
        k: getattr(args, k)
        for k in ("source", "device", "width", "height", "fps", "loop", "realtime")
        if getattr(args, k, None) is not None
    }
    changes.update({k: v for k, v in extra.items() if v is not None})
    import msgspec

    return msgspec.structs.replace(base, **changes)


def script_items(text: str) -> list[str]:
    """The synthetic source's script: words, or the words of a file after ``@``."""
    if text.startswith("@"):
        text = Path(text[1:]).read_text()
    return [w for w in text.split() if not w.startswith("#")]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_source_arguments(parser)
    parser.add_argument("--roi", type=_rect, help="region of interest x,y,width,height")
    parser.add_argument(
        "--suggest-roi",
        action="store_true",
        help="pass cards through the window: propose the ROI where card faces appeared",
    )
    parser.add_argument("--exposure", type=float, help="manual exposure (camera units)")
    parser.add_argument("--focus", type=float, help="manual focus (camera units)")
    parser.add_argument(
        "--serve",
        type=_address,
        metavar="[HOST:]PORT",
        help="serve the live MJPEG preview (default host 127.0.0.1; port 0 picks a free one)",
    )
    parser.add_argument("--snapshots", type=Path, metavar="DIR", help="write annotated frames")
    parser.add_argument("--every", type=int, default=30, help="write every Nth frame (30)")
    parser.add_argument(
        "--record",
        type=Path,
        metavar="DIR",
        help='write every raw frame as PNG (replay later with [camera] source = "folder")',
    )
    parser.add_argument("--frames", type=int, help="stop after this many frames")
    parser.add_argument("--duration", type=float, help="stop after this many seconds")
    parser.add_argument(
        "--focus-sweep",
        type=_sweep,
        metavar="START:STOP:STEP",
        help="try each focus value, report the sharpest (needs a camera with focus control)",
    )
    parser.add_argument(
        "--exposure-sweep",
        type=_sweep,
        metavar="START:STOP:STEP",
        help="try each exposure, keep the brightest with at most 0.2 %% of the ROI clipped",
    )
    parser.add_argument("--sweep-frames", type=int, default=5, help="frames per swept value")
    parser.add_argument("--profile", type=Path, help="calibration profile to save settings to")
    parser.add_argument("--save", action="store_true", help="save ROI/exposure/focus to --profile")
    parser.add_argument("--json", action="store_true", help="print the final figures as JSON")


def _limited(src: FrameSource, frames: int | None, duration: float | None) -> Iterator[Any]:
    end = None if duration is None else time.monotonic() + duration
    for n, item in enumerate(src, 1):
        yield item
        if (frames is not None and n >= frames) or (end is not None and time.monotonic() >= end):
            return


def _sweep_control(
    src: FrameSource, control: str, values: list[float], per_value: int, roi: Sequence[int] | None
) -> list[tuple[float, dict[str, float]]]:
    """Set ``control`` (focus or exposure) to each value and measure a few frames."""
    results = []
    it = iter(src)
    for value in values:
        if not src.set_controls(**{control: value}):
            raise CameraError(f"{src.name} source: this camera has no {control} control to sweep")
        figures = []
        for _ in range(per_value):
            try:
                _t, frame = next(it)
            except StopIteration:
                raise CameraError(f"{src.name} source ended during the {control} sweep") from None
            figures.append(measure(frame, roi))
        # The strongest edges and the worst clipping of the frames (a card passing may be
        # in view in only some of them); the typical level.
        results.append(
            (
                value,
                {
                    "sharpness": max(f["sharpness"] for f in figures),
                    "level": float(np.median([f["level"] for f in figures])),
                    "clipped": max(f["clipped"] for f in figures),
                },
            )
        )
    return results


def best_exposure(swept: list[tuple[float, dict[str, float]]], max_clipped: float = 0.002) -> float:
    """The brightest exposure that clips at most ``max_clipped`` of the ROI (else the least).

    >>> best_exposure([(50, {"clipped": 0.0}), (100, {"clipped": 0.001}), (200, {"clipped": 0.2})])
    100
    """
    fine = [v for v, f in swept if f["clipped"] <= max_clipped]
    return max(fine) if fine else min(v for v, _ in swept)


@contextlib.contextmanager
def ctrl_c_sets(stop: threading.Event) -> Iterator[threading.Event]:
    """While inside, the first Ctrl-C (SIGINT) only sets ``stop``; a second one raises
    KeyboardInterrupt as usual. A KeyboardInterrupt raised wherever the main thread
    happens to be can land between a lock's acquire and its ``with`` block (inside
    ``Condition.__enter__``): the preview server's lock then stays held and closing the
    server hangs for ever, so the preview loop asks ``stop`` between frames instead.

    >>> import os
    >>> with ctrl_c_sets(threading.Event()) as stop:
    ...     os.kill(os.getpid(), signal.SIGINT)
    ...     time.sleep(0.01)
    ...     stop.is_set()
    True
    """
    if threading.current_thread() is not threading.main_thread():
        yield stop  # signal handlers can only be set from the main thread
        return

    def handler(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def _preview(
    source: FrameSource,
    frames: int | None,
    args: argparse.Namespace,
    roi: Sequence[int] | None,
    seen: RoiFinder | None,
    server: PreviewServer | None,
    last: dict[str, float],
    stop: threading.Event | None = None,
) -> None:
    """The live loop: measure, annotate, serve / snapshot; ``last`` gets the last figures.
    It ends after the frame in hand once ``stop`` is set (Ctrl-C, :func:`ctrl_c_sets`)."""
    for n, (_t, frame) in enumerate(_limited(source, frames, args.duration)):
        if stop is not None and stop.is_set():
            print("stopped")  # Ctrl-C ends the preview; the settings are still saved
            return
        if roi is not None and (
            roi[0] + roi[2] > frame.shape[1] or roi[1] + roi[3] > frame.shape[0]
        ):
            raise CameraError(
                f"ROI {list(roi)} lies outside the {frame.shape[1]}x{frame.shape[0]} frame"
            )
        if seen is not None:
            seen.add(frame)
        last.clear()
        last.update(measure(frame, roi))
        shown = annotate(frame, roi, last)
        if server is not None:
            server.publish(shown, {"frame": n, "roi": roi, "figures": dict(last)})
        if args.snapshots and n % max(1, args.every) == 0:
            cv2.imwrite(str(args.snapshots / f"snapshot-{n:05d}.jpg"), shown)
        if args.record and not cv2.imwrite(str(args.record / f"frame-{n:06d}.png"), frame):
            raise CameraError(f"cannot write frames to {args.record} (disk full? permissions?)")
        if not args.json and (n % 30 == 0):
            print(f"frame {n}: " + "  ".join(f"{k} {v:g}" for k, v in last.items()), flush=True)


def run(args: argparse.Namespace) -> int:
    if args.save and not args.profile:
        print("camera: --save needs --profile PATH", file=sys.stderr)
        return 2
    try:
        cfg = camera_config(args, exposure=args.exposure, focus=args.focus)
    except (ValueError, OSError) as exc:
        print(f"camera: {exc}", file=sys.stderr)
        return 2
    roi = args.roi or cfg.roi
    # The preview shows the whole frame with the ROI drawn: the source does not crop.
    import msgspec

    try:
        source = open_source(
            msgspec.structs.replace(cfg, roi=None),
            script=script_items(args.script),
            barcode=args.barcode_cards,
            frames_per_pass=args.pass_frames,
        )
    except ValueError as exc:
        print(f"camera: --script: {exc}", file=sys.stderr)
        return 2
    frames = args.frames
    if frames is None and args.duration is None and args.serve is None:
        # a quick look unless told otherwise
        frames = 100 if (args.snapshots or args.record) else 1
    server = None
    seen: RoiFinder | None = None
    last: dict[str, float] = {}
    swept: list[tuple[float, float]] = []
    exposed: list[tuple[float, dict[str, float]]] = []
    best_focus = cfg.focus
    best_exp = cfg.exposure
    try:
        with source:
            if args.exposure_sweep:
                exposed = _sweep_control(
                    source, "exposure", args.exposure_sweep, args.sweep_frames, roi
                )
                best_exp = best_exposure(exposed)
                source.set_controls(exposure=best_exp)
                for value, fig in exposed:
                    print(f"exposure {value:g}: level {fig['level']:g} clipped {fig['clipped']:g}")
                print(f"chosen exposure {best_exp:g}")
            if args.focus_sweep:
                focused = _sweep_control(source, "focus", args.focus_sweep, args.sweep_frames, roi)
                swept = [(v, f["sharpness"]) for v, f in focused]
                best_focus = max(swept, key=lambda vs: vs[1])[0]
                source.set_controls(focus=best_focus)
                for value, score in swept:
                    print(f"focus {value:g}: sharpness {score:g}")
                print(f"sharpest at focus {best_focus:g}")
            if args.serve:
                server = PreviewServer(*args.serve)
                print(f"preview: {server.url}", flush=True)
            for folder in (args.snapshots, args.record):
                if folder:
                    folder.mkdir(parents=True, exist_ok=True)
            seen = RoiFinder() if args.suggest_roi else None
            try:
                with ctrl_c_sets(threading.Event()) as stop:
                    _preview(source, frames, args, roi, seen, server, last, stop)
            except KeyboardInterrupt:  # a second Ctrl-C (a source that delivers no frame)
                print("stopped")  # Ctrl-C ends the preview; the settings are still saved
    except CameraError as exc:
        print(f"camera: {exc}", file=sys.stderr)
        return 1
    finally:
        if server is not None:
            server.close()
    if seen is not None:
        suggested = seen.suggest()
        if suggested is None:
            print("no card face was seen: cannot suggest a ROI (pass cards through the window)")
        else:
            print("suggested ROI: " + ",".join(map(str, suggested)))
            roi = roi if args.roi else suggested
    settings: dict[str, Any] = {
        "roi": list(roi) if roi else None,
        "exposure": best_exp,
        "focus": best_focus,
        "sharpness": last.get("sharpness"),
        "level": last.get("level"),
    }
    if args.save:
        from shoe_controller.vision.profile import ProfileError, update_camera_settings

        try:
            update_camera_settings(args.profile, **settings)
        except ProfileError as exc:
            print(f"camera: {exc}", file=sys.stderr)
            return 1
        print(f"saved camera settings to {args.profile}")
    if args.json:
        print(
            json.dumps(
                {
                    **settings,
                    "figures": last,
                    "sweep": swept,
                    "exposure_sweep": [[v, f] for v, f in exposed],
                }
            )
        )
    return 0
