"""Frame sources on real files, the configured reader, and the whole path to game inputs."""

from __future__ import annotations

import itertools
from pathlib import Path

import cv2
import msgspec
import numpy as np
import pytest

from shoe_controller.game.cards import parse_card
from shoe_controller.game.inputs import CardSeen, CutCardSeen, ForeignCard, UnreadableCard
from shoe_controller.sim import barcode_render as br
from shoe_controller.sim.sources import SyntheticSource
from shoe_controller.vision.barcode import BarcodeReader
from shoe_controller.vision.config import BarcodeConfig, CameraConfig, VisionConfig
from shoe_controller.vision.passes import PassTracker
from shoe_controller.vision.reader import BothReaders, agree, build_reader
from shoe_controller.vision.reads import FrameRead
from shoe_controller.vision.sources import (
    CameraError,
    FolderSource,
    PiCamera,
    UsbCamera,
    VideoSource,
    open_source,
)


def marked_frames(n: int) -> list[np.ndarray]:
    """Frames whose grey level encodes their number (survives video compression)."""
    return [np.full((96, 128, 3), 20 + 20 * i, np.uint8) for i in range(n)]


def write_folder(path: Path, frames: list[np.ndarray], ext: str = ".png") -> None:
    path.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(frames):
        assert cv2.imwrite(str(path / f"f{i:04d}{ext}"), f)


# -- folder --------------------------------------------------------------------------


def test_folder_source_order_timestamps_roi_and_loop(tmp_path: Path) -> None:
    write_folder(tmp_path / "a", marked_frames(4))
    (tmp_path / "a" / "notes.txt").write_text("not an image")
    with FolderSource(tmp_path / "a", fps=50, roi=(10, 20, 30, 40)) as src:
        got = list(src)
    assert [int(f[0, 0, 0]) for _, f in got] == [20, 40, 60, 80]
    assert all(f.shape == (40, 30, 3) for _, f in got)
    steps = np.diff([t for t, _ in got])
    assert np.allclose(steps, 0.02)
    with FolderSource(tmp_path / "a", fps=0, loop=True) as src:
        it = iter(src)
        levels = [int(next(it)[1][0, 0, 0]) for _ in range(6)]
        times = [t for t, _ in [next(it) for _ in range(3)]]
    assert levels == [20, 40, 60, 80, 20, 40]
    assert times == sorted(times)  # the monotonic clock when no rate is given


def test_folder_source_real_time_pacing(tmp_path: Path) -> None:
    import time

    write_folder(tmp_path, marked_frames(3))
    begin = time.monotonic()
    with FolderSource(tmp_path, fps=20, realtime=True) as src:
        assert len(list(src)) == 3
    assert time.monotonic() - begin >= 0.09


def test_folder_source_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match="no such folder"):
        FolderSource(tmp_path / "missing").open()
    (tmp_path / "empty").mkdir()
    with pytest.raises(CameraError, match="no images"):
        FolderSource(tmp_path / "empty").open()
    write_folder(tmp_path / "bad", marked_frames(1))
    (tmp_path / "bad" / "f9999.png").write_bytes(b"\x89PNG not really")
    with FolderSource(tmp_path / "bad") as src, pytest.raises(CameraError, match=r"f9999\.png"):
        list(src)


# -- video ---------------------------------------------------------------------------


def test_video_source_reads_a_real_video_file(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (128, 96))
    assert writer.isOpened()
    for f in marked_frames(6):
        writer.write(f)
    writer.release()
    with VideoSource(path) as src:
        assert src.fps == pytest.approx(25.0)
        got = list(src)
    assert len(got) == 6
    levels = [int(f.mean()) for _, f in got]
    assert all(abs(a - b) <= 3 for a, b in zip(levels, [20, 40, 60, 80, 100, 120], strict=True))
    assert np.allclose(np.diff([t for t, _ in got]), 1 / 25)


def test_video_source_errors(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match="no such file"):
        VideoSource(tmp_path / "none.mp4").open()
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"this is not a video" * 10)
    with pytest.raises(CameraError, match="cannot decode"):
        VideoSource(junk).open()


# -- cameras (no camera here: the failures must be clear) -----------------------------


def test_usb_camera_missing_device_says_what_to_check() -> None:
    with pytest.raises(CameraError) as err:
        UsbCamera("/dev/video-nonexistent-42").open()
    assert "/dev/video-nonexistent-42" in str(err.value) and "ls /dev/video" in str(err.value)


def test_usb_camera_not_a_capture_device(tmp_path: Path) -> None:
    fake = tmp_path / "video9"
    fake.write_bytes(b"")
    with pytest.raises(CameraError, match="cannot open it"):
        UsbCamera(str(fake)).open()


def test_pi_camera_without_picamera2_says_how_to_install() -> None:
    pytest.importorskip("numpy")
    try:
        import picamera2  # type: ignore[import-not-found]  # noqa: F401

        pytest.skip("picamera2 is installed here: this test is for machines without it")
    except ImportError:
        pass
    with pytest.raises(CameraError, match="python3-picamera2"):
        PiCamera().open()


def test_open_source_from_config(tmp_path: Path) -> None:
    write_folder(tmp_path, marked_frames(2))
    cfg = msgspec.convert(
        {"source": "folder", "device": str(tmp_path), "fps": 0, "roi": [0, 0, 8, 8]}, CameraConfig
    )
    with open_source(cfg) as src:
        assert isinstance(src, FolderSource)
        assert [f.shape for _, f in src] == [(8, 8, 3)] * 2
    assert isinstance(open_source(CameraConfig(source="usb")), UsbCamera)
    assert isinstance(open_source(CameraConfig(source="picamera")), PiCamera)
    assert isinstance(open_source(CameraConfig(source="video", device="x.mp4")), VideoSource)
    assert isinstance(open_source(CameraConfig(source="synthetic"), script=["QH"]), SyntheticSource)


# -- the configured reader ------------------------------------------------------------


def test_agree_rules() -> None:
    qh = FrameRead.of_card(parse_card("QH"), "down", 0.8)
    assert agree(qh, FrameRead.of_card(parse_card("QH"), "up", 1.0)).orientation == "down"
    assert agree(FrameRead.empty(), FrameRead.empty()).kind == "empty"
    assert agree(qh, FrameRead.empty()).kind == "reject"
    assert agree(FrameRead.empty(), qh).kind == "reject"
    assert agree(qh, FrameRead.cut()).reason == (
        "readers disagree: index reads QH, barcode reads the cut card"
    )
    assert agree(FrameRead.rejected("blur"), qh).kind == "reject"
    assert agree(qh, FrameRead.foreign("ZZ")).payload == "ZZ"


class FixedReader:
    def __init__(self, read: FrameRead) -> None:
        self.verdict = read

    def read(self, frame: np.ndarray) -> FrameRead:
        return self.verdict


def test_both_readers_on_a_real_barcode_frame() -> None:
    rng = np.random.default_rng(2)
    frame = br.barcode_frame("D1-4C", rng, br.CLEAN)
    barcode = BarcodeReader()
    same = BothReaders(FixedReader(FrameRead.of_card(parse_card("4C"), "up", 0.9)), barcode)
    other = BothReaders(FixedReader(FrameRead.of_card(parse_card("4S"), "up", 0.9)), barcode)
    assert same.read(frame).card is parse_card("4C")
    assert other.read(frame).kind == "reject"


def test_build_reader_barcode_and_missing_profile(tmp_path: Path) -> None:
    reader = build_reader(VisionConfig(reader="barcode"), BarcodeConfig())
    assert isinstance(reader, BarcodeReader)
    profile = pytest.importorskip("shoe_controller.vision.profile")
    with pytest.raises(profile.ProfileError, match="no such profile"):
        build_reader(VisionConfig(reader="both", profile=str(tmp_path / "none.npz")))


def test_building_a_reader_holds_opencv_to_one_thread() -> None:
    """The daemon's reader runs OpenCV on one thread (its time per frame is one core's;
    the other cores stay the daemon's)."""
    before = cv2.getNumThreads()
    try:
        cv2.setNumThreads(4)
        assert cv2.getNumThreads() == 4
        build_reader(VisionConfig(reader="barcode"), BarcodeConfig())
        assert cv2.getNumThreads() == 1
    finally:
        cv2.setNumThreads(before)


# -- frames to game inputs, end to end ------------------------------------------------


def run_path(src: SyntheticSource, reader: object, tracker: PassTracker) -> list[object]:
    out: list[object] = []
    with src:
        for t, frame in src:
            out += tracker.frame(t, reader.read(frame))  # type: ignore[attr-defined]
    return out + tracker.flush()


def test_barcode_passes_become_game_inputs_presence_mode() -> None:
    script = ["D1-QH", "D2-9S", "NONE", "CUT", "ZZ-99", "PLAIN", "D3-AD"]
    src = SyntheticSource(script, barcode=True, frames_per_pass=6, gap=3, seed=4)
    out = run_path(src, BarcodeReader(), PassTracker(min_frames=2, source="barcode"))
    assert [type(o) for o in out] == [
        CardSeen,
        CardSeen,
        CutCardSeen,
        ForeignCard,
        UnreadableCard,
        CardSeen,
    ]
    assert [o.card.code for o in out if isinstance(o, CardSeen)] == ["QH", "9S", "AD"]
    assert out[3] == ForeignCard("ZZ-99")


def test_barcode_passes_with_exit_sensor_events() -> None:
    src = SyntheticSource(["D1-2H", "D1-3H", "D1-4H"], barcode=True, frames_per_pass=6, seed=5)
    tracker = PassTracker(sensor=True, min_frames=2, exit_grace_s=0.005, source="barcode")
    reader = BarcodeReader()
    out: list[object] = []
    with src:
        frames = list(src)
    exits = list(src.exits)
    for t, frame in frames:
        while exits and exits[0] < t:
            out += tracker.card_exit(exits.pop(0))
        out += tracker.frame(t, reader.read(frame))
    out += tracker.flush()
    assert [o.card.code for o in out] == ["2H", "3H", "4H"]  # type: ignore[attr-defined]


def test_index_synthetic_source_renders_passes_sliding_along_the_dealing_axis() -> None:
    pytest.importorskip("shoe_controller.sim.render")
    src = SyntheticSource(["KS", "CUT"], frames_per_pass=5, gap=2, seed=9, upside_down=0.0)
    with src:
        frames = [f for _, f in src]
    assert len(frames) == 14 and all(f.shape == (480, 640, 3) for f in frames)
    # The card moves: where its light face sits differs from frame to frame.
    centres = [np.argwhere(f.mean(axis=2) > 120)[:, 1].mean() for f in frames[:5]]
    assert all(b > a for a, b in itertools.pairwise(centres))
    assert all(f.mean() < 60 for f in frames[5:7])  # the empty gap frames are dark


def test_roi_outside_the_frames_is_a_clear_error(tmp_path: Path) -> None:
    write_folder(tmp_path, marked_frames(1))  # 128x96 frames
    with (
        FolderSource(tmp_path, roi=(100, 0, 64, 64)) as src,
        pytest.raises(CameraError, match=r"roi \[100, 0, 64, 64\] lies outside the 128x96 frames"),
    ):
        list(src)
