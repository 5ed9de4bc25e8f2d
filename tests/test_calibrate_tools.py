"""`shoe-calibrate camera`, `deck-check` and `selftest`, end to end on small inputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import PreviewServer, annotate, measure
from calibration.cli import COMMANDS
from calibration.cli import main as calibrate
from calibration.deck_check import check_decks
from calibration.selftest import run_checks
from shoe_controller.game.cards import ALL_CARDS, parse_card
from shoe_controller.game.inputs import CardSeen, CutCardSeen, ForeignCard, UnreadableCard
from shoe_controller.sim import barcode_render as br

REPO = Path(__file__).resolve().parents[1]


def test_commands_registered() -> None:
    for name in ("camera", "deck-check", "selftest"):
        assert name in COMMANDS


# -- camera ---------------------------------------------------------------------------


def read_multipart_jpegs(stream: object, count: int) -> list[np.ndarray]:
    """Parse ``count`` JPEG parts out of a multipart/x-mixed-replace HTTP body."""
    images = []
    while len(images) < count:
        line = stream.readline()  # type: ignore[attr-defined]
        if not line.lower().startswith(b"content-length:"):
            continue
        length = int(line.split(b":")[1])
        assert stream.readline() == b"\r\n"  # type: ignore[attr-defined]
        data = stream.read(length)  # type: ignore[attr-defined]
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        assert img is not None
        images.append(img)
    return images


def test_preview_server_serves_page_stream_snapshot_and_status() -> None:
    server = PreviewServer("127.0.0.1", 0)
    try:
        host, port = server.address
        assert host == "127.0.0.1" and port > 0
        frame = np.zeros((120, 160, 3), np.uint8)
        frame[:, 80:] = 200
        server.publish(frame, {"figures": {"sharpness": 1.5}})
        page = urllib.request.urlopen(server.url, timeout=5).read().decode()
        assert "stream.mjpg" in page
        status = json.loads(urllib.request.urlopen(server.url + "status.json", timeout=30).read())
        assert status == {"figures": {"sharpness": 1.5}}
        snap = urllib.request.urlopen(server.url + "snapshot.jpg", timeout=5).read()
        img = cv2.imdecode(np.frombuffer(snap, np.uint8), cv2.IMREAD_COLOR)
        assert img.shape == (120, 160, 3) and img[:, :70].mean() < 20 and img[:, 90:].mean() > 180
        with urllib.request.urlopen(server.url + "stream.mjpg", timeout=5) as resp:
            assert resp.headers["Content-Type"].startswith("multipart/x-mixed-replace")
            server.publish(np.full((120, 160, 3), 99, np.uint8), {})
            got = read_multipart_jpegs(resp, 1)
            assert got[0].shape == (120, 160, 3)
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.url + "nothing", timeout=5)
    finally:
        server.close()


def test_measure_and_annotate() -> None:
    sharp = np.zeros((100, 100), np.uint8)
    sharp[:, ::4] = 255
    blurred = cv2.GaussianBlur(sharp, (0, 0), 2)
    assert measure(sharp, None)["sharpness"] > measure(blurred, None)["sharpness"] * 5
    assert measure(sharp, (0, 0, 10, 10))["clipped"] == pytest.approx(0.3)
    out = annotate(np.zeros((100, 100), np.uint8), (10, 10, 50, 50), {"sharpness": 1})
    assert out.shape == (100, 100, 3) and out[10, 30, 1] == 255  # the ROI drawn in green


def test_camera_command_serves_the_live_preview_on_loopback(tmp_path: Path) -> None:
    """The real command in its own process, a folder replayed in a loop, fetched over HTTP;
    Ctrl-C ends it and the settings are saved to the profile."""
    profile = pytest.importorskip("shoe_controller.vision.profile")
    frames = tmp_path / "frames"
    frames.mkdir()
    rng = np.random.default_rng(1)
    for i in range(3):
        cv2.imwrite(str(frames / f"{i}.png"), br.barcode_frame("D1-QH", rng, br.CLEAN))
    cmd = [
        sys.executable,
        "-m",
        "calibration.cli",
        "camera",
        "--source",
        "folder",
        "--device",
        str(frames),
        "--fps",
        "20",
        "--loop",
        "--realtime",
        "--serve",
        "127.0.0.1:0",
        "--duration",
        "600",  # far past the waits below: only Ctrl-C can end it within them
        "--roi",
        "100,50,400,300",
        "--profile",
        str(tmp_path / "p.npz"),
        "--save",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("preview: http://127.0.0.1:"), line
        url = line.split()[1]
        # generous timeouts: a loaded 2-core machine delays the child's first frames
        with urllib.request.urlopen(url + "stream.mjpg", timeout=30) as resp:
            images = read_multipart_jpegs(resp, 2)
        assert all(img.shape == (480, 640, 3) for img in images)
        status = json.loads(urllib.request.urlopen(url + "status.json", timeout=30).read())
        assert status["roi"] == [100, 50, 400, 300] and status["figures"]["sharpness"] > 0
        # Ctrl-C ends the preview and still saves the settings.
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert f"saved camera settings to {tmp_path / 'p.npz'}" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert profile.load_profile(tmp_path / "p.npz").camera["roi"] == [100, 50, 400, 300]


def test_camera_snapshots_focus_sweep_and_save_to_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("shoe_controller.vision.profile")
    from shoe_controller.vision.profile import load_profile

    profile = tmp_path / "table.profile.npz"
    rc = calibrate(
        [
            "camera",
            "--source",
            "synthetic",
            "--script",
            "QH 7D KS",
            "--pass-frames",
            "4",
            "--fps",
            "0",
            "--focus-sweep",
            "3:7:1",
            "--sweep-frames",
            "1",
            "--frames",
            "3",
            "--snapshots",
            str(tmp_path / "snaps"),
            "--every",
            "1",
            "--roi",
            "0,0,640,480",
            "--exposure",
            "120",
            "--profile",
            str(profile),
            "--save",
            "--json",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    report = json.loads(out.strip().splitlines()[-1])
    assert report["focus"] == 5.0  # the synthetic lens is sharp at 5
    assert [v for v, _ in report["sweep"]] == [3.0, 4.0, 5.0, 6.0, 7.0]
    assert len(list((tmp_path / "snaps").glob("snapshot-*.jpg"))) == 3
    camera = load_profile(profile).camera
    assert camera["roi"] == [0, 0, 640, 480] and camera["exposure"] == 120
    assert camera["focus"] == 5.0 and camera["sharpness"] > 0


def test_camera_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert calibrate(["camera", "--source", "folder", "--device", str(tmp_path / "x")]) == 1
    assert "no such folder" in capsys.readouterr().err
    assert calibrate(["camera", "--save"]) == 2
    bad = tmp_path / "table.toml"
    bad.write_text('[camera]\nsource = "webcam"\n')
    assert calibrate(["camera", "--config", str(bad)]) == 2
    assert "[camera] source" in capsys.readouterr().err
    assert calibrate(["camera", "--source", "synthetic", "--script", "QX"]) == 2
    assert "'QX' is not a card" in capsys.readouterr().err


# -- deck-check -----------------------------------------------------------------------


def test_check_decks_pure() -> None:
    two = [CardSeen(c) for c in ALL_CARDS] * 2
    assert check_decks(two, decks=2).ok
    assert check_decks(two, decks=1).duplicated == {c.code: 1 for c in ALL_CARDS}
    report = check_decks(
        [CutCardSeen(), ForeignCard("X"), *[CardSeen(c, "down") for c in ALL_CARDS]], 1
    )
    assert report.foreign == ["X"] and report.cut == 1 and report.upside_down == 52
    assert not report.ok and not report.missing
    report = check_decks([UnreadableCard("blur"), CardSeen(parse_card("AS"))], 1)
    assert report.missing["KC"] == 1 and "AS" not in report.missing and report.cards_read == 1


def test_deck_check_end_to_end_on_real_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A deck of barcode cards as camera frames on disk: QH missing, 2C twice, one card
    with no code (unreadable), a foreign code and the cut card."""
    frames = tmp_path / "frames"
    frames.mkdir()
    rng = np.random.default_rng(3)
    deck = [f"D1-{c.code}" for c in ALL_CARDS if c.code != "QH"] + ["D1-2C", "PLAIN", "ZZ-9"]
    deck.insert(20, "CUT")
    n = 0
    empty = br.empty_frame(rng)
    for payload in deck:
        face = br.plain_face((230, 230, 230)) if payload == "PLAIN" else br.barcode_face(payload)
        for frame in [*br.pass_frames(face, rng, 2, br.CLEAN), empty, empty]:
            cv2.imwrite(str(frames / f"{n:05d}.jpg"), frame)
            n += 1
    rc = calibrate(
        [
            "deck-check",
            "--source",
            "folder",
            "--device",
            str(frames),
            "--fps",
            "60",
            "--reader",
            "barcode",
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert report["missing"] == {"QH": 1} and report["duplicated"] == {"2C": 1}
    assert report["foreign"] == ["ZZ-9"] and report["cut"] == 1
    assert len(report["unreadable"]) == 1 and "no Code128 code" in report["unreadable"][0]
    assert report["cards_read"] == 52 and report["ok"] is False


def test_deck_check_perfect_synthetic_deck(capsys: pytest.CaptureFixture[str]) -> None:
    script = " ".join(f"D2-{c.code}" for c in ALL_CARDS)
    rc = calibrate(
        [
            "deck-check",
            "--source",
            "synthetic",
            "--reader",
            "barcode",
            "--script",
            script,
            "--pass-frames",
            "3",
            "--fps",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "52 cards read" in out and "OK: every card read exactly once" in out


def test_deck_check_config_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "t.toml"
    bad.write_text("[vision]\nmin_frames = 0\n")
    assert calibrate(["deck-check", "--config", str(bad)]) == 2
    assert "[vision] min_frames" in capsys.readouterr().err
    assert calibrate(["deck-check", "--profile", str(tmp_path / "none.npz")]) == 2
    assert "no such profile" in capsys.readouterr().err


# -- selftest -------------------------------------------------------------------------


def test_selftest_simulated_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    rc = calibrate(["selftest", "--simulate", "--timeout", "5", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["ok"]
    names = {(c["part"], c["name"]) for c in report["checks"]}
    assert {
        ("leds", "fault"),
        ("leds", "buzzer"),
        ("buttons", "confirm"),
        ("buttons", "key"),
        ("serial", "ping"),
        ("serial", "draw lock"),
        ("sensors", "card exit"),
        ("sensors", "lid close"),
        ("sensors", "shoe button"),
        ("sensors", "scanner"),
    } <= names


def test_selftest_sensors_fail_when_nothing_happens() -> None:
    """A real link to the device simulator, but nobody deals, opens the lid or scans."""
    from firmware_bridge.config import SerialConfig
    from firmware_bridge.simulator import DeviceSimulator
    from shoe_controller.dealer.config import GpioConfig

    with DeviceSimulator(heartbeat_interval=0.05) as sim:
        checks = run_checks(
            GpioConfig(pin_factory="mock"),
            SerialConfig(port=sim.path),
            {"serial", "sensors"},
            timeout=0.2,
            simulate=False,
            say=lambda _text: None,
        )
    by_name = {(c.part, c.name): c for c in checks}
    assert by_name["serial", "ping"].ok and by_name["serial", "status"].ok
    assert not by_name["sensors", "card exit"].ok
    assert "no card exit" in by_name["sensors", "card exit"].detail
    assert not by_name["sensors", "lid open"].ok and not by_name["sensors", "scanner"].ok


def test_selftest_reports_failures() -> None:
    """Nobody presses the (mock) buttons and no shoe is attached: those checks fail."""
    from firmware_bridge.config import SerialConfig
    from shoe_controller.dealer.config import GpioConfig

    said: list[str] = []
    checks = run_checks(
        GpioConfig(pin_factory="mock", bounce_time=0),
        SerialConfig(port="/dev/nonexistent-shoe"),
        {"leds", "buttons", "serial"},
        timeout=0.2,
        simulate=False,
        say=said.append,
        dwell=0.01,
    )
    by_name = {(c.part, c.name): c for c in checks}
    assert by_name["leds", "tie"].ok
    assert (
        not by_name["buttons", "confirm"].ok and "no press" in by_name["buttons", "confirm"].detail
    )
    assert not by_name["serial", "handshake"].ok
    assert any("press confirm" in s for s in said)


def test_selftest_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert calibrate(["selftest", "--only", "lasers"]) == 2
    assert "lasers" in capsys.readouterr().err


def test_camera_suggests_the_roi_where_cards_passed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    for i, x in enumerate([200, 220, 240, None, 260]):
        frame = np.full((480, 640, 3), 25, np.uint8)
        if x is not None:
            frame[150:350, x : x + 150] = 225  # a card face sliding along x
        cv2.imwrite(str(frames / f"{i}.png"), frame)
    rc = calibrate(
        [
            "camera",
            "--source",
            "folder",
            "--device",
            str(frames),
            "--fps",
            "0",
            "--frames",
            "5",
            "--suggest-roi",
            "--json",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "suggested ROI: 179,130,252,240" in out  # 200..410 x 150..350, grown by 10 %
    assert json.loads(out.strip().splitlines()[-1])["roi"] == [179, 130, 252, 240]


def test_exposure_sweep_keeps_the_brightest_unclipped_exposure() -> None:
    render = pytest.importorskip("shoe_controller.sim.render")
    from calibration.camera import _sweep_control, best_exposure
    from shoe_controller.sim.sources import SyntheticSource

    # Steady light (the calibration range): the card face sits near grey 225-235.
    src = SyntheticSource(
        ["QH", "7D", "KS", "2C", "9H", "AS"],
        frames_per_pass=6,
        gap=0,
        fps=0,
        seed=2,
        degradation=render.CALIBRATION,
    )
    with src:
        swept = _sweep_control(src, "exposure", [60.0, 90.0, 120.0, 150.0], 3, None)
    clipped = {v: f["clipped"] for v, f in swept}
    levels = {v: f["level"] for v, f in swept}
    assert clipped[60.0] == 0 and clipped[90.0] <= 0.002 and clipped[120.0] > 0.01
    assert levels[60.0] < levels[90.0]
    assert best_exposure(swept) == 90.0


def test_preview_server_on_ipv6_loopback() -> None:
    import socket

    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        server = PreviewServer("::1", 0)
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    try:
        server.publish(np.zeros((10, 10, 3), np.uint8), {"figures": {}})
        assert server.url.startswith("http://[::1]:")
        assert urllib.request.urlopen(server.url + "status.json", timeout=5).status == 200
    finally:
        server.close()


def test_deck_check_passes_bounded_by_the_shoe_exit_sensor() -> None:
    """The shoe's exit gate (device simulator on a pty, real serial link) bounds each pass.

    Two KD in a row are two cards (the gate fired twice); a card the gate saw but no frame
    showed is unreadable, never skipped."""
    import queue

    from calibration.deck_check import collect
    from firmware_bridge.config import SerialConfig
    from firmware_bridge.link import Link
    from firmware_bridge.simulator import DeviceSimulator
    from shoe_controller.sim.sources import SyntheticSource
    from shoe_controller.vision.barcode import BarcodeReader
    from shoe_controller.vision.passes import PassTracker

    with DeviceSimulator(heartbeat_interval=0.05) as sim:
        events: queue.Queue[object] = queue.Queue()
        link = Link(SerialConfig(port=sim.path), events).start()
        try:
            link.wait_up(timeout=10)

            def exit_gate(item: str) -> None:
                sim.card_exit(duration_us=35_000)
                if item == "D1-3C":  # a card slips out unseen right behind this one
                    sim.card_exit(duration_us=30_000)
                time.sleep(0.02)  # the event crosses the pty before the next frames

            src = SyntheticSource(
                ["D1-KD", "D1-KD", "D1-3C", "D1-QS"],
                barcode=True,
                frames_per_pass=3,
                gap=2,
                fps=0,
                seed=7,
                on_pass_end=exit_gate,
            )
            tracker = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.001, source="barcode")
            with src:
                inputs = collect(src, BarcodeReader(), tracker, exits=events)
        finally:
            link.stop()
    assert [getattr(i, "card", None) for i in inputs] == [
        parse_card("KD"),
        parse_card("KD"),
        parse_card("3C"),
        None,
        parse_card("QS"),
    ]
    assert isinstance(inputs[3], UnreadableCard)
    assert inputs[3].reason == "a card left the shoe but no frame showed it"


def test_deck_check_without_the_shoe_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    rc = calibrate(
        [
            "deck-check",
            "--source",
            "synthetic",
            "--reader",
            "barcode",
            "--script",
            "D1-QH",
            "--serial",
            "/dev/nonexistent-shoe",
            "--link-timeout",
            "0.3",
        ]
    )
    assert rc == 1
    err = capsys.readouterr().err
    assert "serial link" in err and "/dev/nonexistent-shoe" in err


def test_camera_roi_outside_the_frame(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "0.png"), np.zeros((480, 640, 3), np.uint8))
    rc = calibrate(
        ["camera", "--source", "folder", "--device", str(frames), "--roi", "600,0,100,50"]
    )
    assert rc == 1
    assert "ROI [600, 0, 100, 50] lies outside the 640x480 frame" in capsys.readouterr().err


def test_camera_records_raw_frames_that_replay_identically(tmp_path: Path) -> None:
    from shoe_controller.sim.sources import SyntheticSource
    from shoe_controller.vision.sources import FolderSource

    script = "D1-QH D1-9C"
    rc = calibrate(
        [
            "camera",
            "--source",
            "synthetic",
            "--barcode-cards",
            "--script",
            script,
            "--pass-frames",
            "3",
            "--fps",
            "0",
            "--frames",
            "8",
            "--record",
            str(tmp_path / "rec"),
        ]
    )
    assert rc == 0
    with FolderSource(tmp_path / "rec") as replay:
        replayed = [f for _, f in replay]
    with SyntheticSource(script.split(), barcode=True, frames_per_pass=3, fps=0) as src:
        original = [f for _, f in src][:8]
    assert len(replayed) == 8
    assert all(np.array_equal(a, b) for a, b in zip(replayed, original, strict=True))


def test_deck_check_collect_ends_on_ctrl_c_between_frames(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Ctrl-C while deck-check collects ends the loop before the next frame (not a
    KeyboardInterrupt at an arbitrary point), the tracker is still flushed, and the
    frames after it are never read."""
    import queue as queue_mod

    from calibration.deck_check import collect

    class Reader:
        def __init__(self) -> None:
            self.read_frames: list[int] = []

        def read(self, frame: int) -> int:
            self.read_frames.append(frame)
            if frame == 2:
                os.kill(os.getpid(), signal.SIGINT)
            return frame

    class Tracker:
        flushed = False

        def frame(self, t: float, read: int) -> list[object]:
            return [read]

        def card_exit(self, t: float) -> list[object]:
            return []

        def flush(self) -> list[object]:
            self.flushed = True
            return ["flushed"]

    reader, tracker = Reader(), Tracker()
    got = collect(((float(i), i) for i in range(10)), reader, tracker, exits=queue_mod.Queue())
    assert reader.read_frames == [0, 1, 2]
    assert got == [0, 1, 2, "flushed"] and tracker.flushed
    assert "deck-check: stopped; the report covers what was seen so far" in capsys.readouterr().err
