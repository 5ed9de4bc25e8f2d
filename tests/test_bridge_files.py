"""The bridge's documents and configuration: PROTOCOL.md examples, SerialConfig, the udev rule."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest

import firmware_bridge.protocol as protocol
from firmware_bridge.config import SerialConfig

ROOT = Path(__file__).resolve().parents[1]


def test_protocol_md_examples_are_what_the_encoder_writes() -> None:
    text = (ROOT / "firmware_bridge" / "PROTOCOL.md").read_text()
    block = text.split("<!-- examples -->", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    lines = [ln for ln in block.strip().splitlines() if ln.strip()]
    assert len(lines) >= 12 and len(lines) % 2 == 0
    for head, wire in zip(lines[::2], lines[1::2], strict=True):
        expr, seq = re.fullmatch(r"(.+) seq=(\d+)", head).groups()  # type: ignore[union-attr]
        msg = eval(expr, vars(protocol))  # the spec's own notation
        assert protocol.encode(msg, int(seq)).hex(" ") == wire.strip(), head


def test_protocol_md_names_every_message_type() -> None:
    text = (ROOT / "firmware_bridge" / "PROTOCOL.md").read_text()
    for t, cls in protocol.MESSAGE_TYPES.items():
        assert f"| 0x{t:02X} | `{cls.NAME}` |" in text, cls.NAME
    assert f"version {protocol.PROTOCOL_VERSION[0]}.{protocol.PROTOCOL_VERSION[1]}" in text


def test_serial_config_defaults_and_errors() -> None:
    cfg = SerialConfig()
    assert (cfg.port, cfg.baudrate, cfg.heartbeat_timeout, cfg.command_retries) == (
        "/dev/smart-shoe",
        115200,
        1.0,
        3,
    )
    toml = b'[serial]\nport = "loop://"\nack_timeout = 0.02\n'
    table = msgspec.toml.decode(toml)["serial"]
    assert msgspec.convert(table, SerialConfig).ack_timeout == 0.02
    with pytest.raises(msgspec.ValidationError, match="unknown field `heartbeat`"):
        msgspec.convert({"heartbeat": 1}, SerialConfig)
    ValidationError = msgspec.ValidationError
    with pytest.raises(ValidationError, match=r"`float` > 0.0 - at `\$.heartbeat_timeout`"):
        msgspec.convert({"heartbeat_timeout": 0}, SerialConfig)
    with pytest.raises(ValidationError, match=r"Expected `int`, got `str` - at `\$.baudrate`"):
        msgspec.convert({"baudrate": "fast"}, SerialConfig)


def test_serial_config_is_import_light() -> None:
    code = (
        "import sys, firmware_bridge.config; "
        "heavy = {'serial', 'numpy', 'cv2', 'firmware_bridge.link'} & set(sys.modules); "
        "print(sorted(heavy))"
    )
    out = subprocess.run(
        [__import__("sys").executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


RULES = ROOT / "systemd" / "99-smart-shoe.rules"
_ASSIGN = re.compile(r'\s*([A-Z_]+(?:\{[^}]+\})?)\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*')


def _rule_lines() -> list[str]:
    logical, cur = [], ""
    for raw in RULES.read_text().splitlines():
        if raw.lstrip().startswith("#") or not raw.strip():
            continue
        cur += raw.rstrip("\\").strip() + " "
        if not raw.endswith("\\"):
            logical.append(cur.strip())
            cur = ""
    return logical


def test_udev_rule_names_the_shoe_and_keeps_modemmanager_away() -> None:
    pairs = []
    for line in _rule_lines():
        for item in line.split(","):
            m = _ASSIGN.fullmatch(item)
            assert m, f"not a udev key/op/value: {item!r}"
            pairs.append(m.groups())
    assert ("SYMLINK", "+=", "smart-shoe") in pairs
    assert ("ENV{ID_MM_DEVICE_IGNORE}", "=", "1") in pairs
    assert ("SUBSYSTEM", "!=", "tty") in pairs
    assert any(k == "ATTRS{idVendor}" for k, _, _ in pairs)
    assert any(k == "ATTRS{idProduct}" for k, _, _ in pairs)
    assert "PLACEHOLDER" in RULES.read_text()
    assert SerialConfig().port == "/dev/smart-shoe"


def test_udev_rule_verifies() -> None:
    udevadm = shutil.which("udevadm")
    if udevadm is None:
        pytest.skip("udevadm is not installed")
    probe = subprocess.run([udevadm, "verify", "--help"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("this udevadm has no `verify` (systemd < 254)")
    out = subprocess.run([udevadm, "verify", str(RULES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
