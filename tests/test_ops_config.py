"""Operations: `config check` on broken and unsafe files, `run`'s refusal of a missing
key file, log lines with timestamps or JSON, link faults and broker events logged once."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from shoe_controller.cli import main
from tests.support.run_daemon import run_then_stop

ROOT = Path(__file__).resolve().parents[1]
SAFE = """
[table]
id = "vip-1"
[rules]
confirm = "button"
[mqtt]
url = "mqtts://broker.casino.lan"
signing_key_file = "{key}"
"""


def _key(tmp_path: Path, mode: int = 0o600) -> Path:
    key = tmp_path / "signing.key"
    key.write_text("00" * 32 + "\n")
    key.chmod(mode)
    return key


def check(capsys, path: Path, *extra: str) -> tuple[int, str, str]:
    rc = main(["config", "check", *extra, str(path)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_every_error_is_reported_not_just_the_first(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[rules]\ndecks = 0\nburn = "often"\n[tabel]\nid = 1\n'
                   '[mqtt]\nkeepalive = 1\nsigning_key_file = "/nonexistent/k"\n')
    rc, out, err = check(capsys, bad)
    assert rc == 2 and "OK" not in out
    lines = [ln for ln in err.splitlines() if ln.startswith("config: ")]
    expected = [f"config: {bad}: [tabel]: unknown section",
                f"config: {bad}: [rules] decks: expected an integer 1-16, got 0",
                f"config: {bad}: [rules] burn: expected one of",
                f"config: {bad}: [mqtt] keepalive: expected an integer 5-3600, got 1",
                f"config: {bad}: [mqtt] signing_key_file /nonexistent/k: no such file",
                f"config: {bad}: 5 problems"]
    assert len(lines) == len(expected), err
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(start), (line, start)


def test_an_empty_file_is_not_a_table_config(tmp_path, capsys):
    for text in ("", "# only a comment\n"):
        empty = tmp_path / "empty.toml"
        empty.write_text(text)
        rc, out, err = check(capsys, empty)
        assert rc == 2 and "OK" not in out
        assert "no settings at all: this is not a table's configuration" in err


def test_a_safe_casino_config_has_no_warnings(tmp_path, capsys):
    cfg = tmp_path / "safe.toml"
    cfg.write_text(SAFE.format(key=_key(tmp_path)))
    rc, out, err = check(capsys, cfg, "--strict")
    assert (rc, err) == (0, ""), out + err
    assert out.startswith(f"{cfg}: OK\n") and "warning" not in out


@pytest.mark.parametrize(("change", "warning"), [
    (('confirm = "button"', 'confirm = "auto"'), '[rules] confirm = "auto"'),
    (('signing_key_file = "{key}"', ""), "[mqtt] signing_key_file is not set"),
    (('url = "mqtts://broker.casino.lan"', 'url = "mqtt://10.0.0.5"'),
     "[mqtt] plain MQTT (no TLS) to 10.0.0.5"),
    (('url = "mqtts://broker.casino.lan"', 'host = "broker.casino.lan"'),
     "[mqtt] plain MQTT (no TLS) to broker.casino.lan"),
])
def test_unsafe_settings_are_warned_about(tmp_path, capsys, change, warning):
    cfg = tmp_path / "unsafe.toml"
    cfg.write_text(SAFE.replace(*change).format(key=_key(tmp_path)))
    rc, out, _ = check(capsys, cfg)
    assert rc == 0 and "OK (1 warning)" in out, out
    assert f"  warning: {warning}" in out
    assert check(capsys, cfg, "--strict")[0] == 1


def test_plain_mqtt_to_this_machine_is_fine(tmp_path, capsys):
    for url in ("mqtt://localhost", "mqtt://127.0.0.1:1884", "mqtt://[::1]"):
        cfg = tmp_path / "local.toml"
        cfg.write_text(SAFE.replace("mqtts://broker.casino.lan", url).format(key=_key(tmp_path)))
        rc, out, _ = check(capsys, cfg, "--strict")
        assert rc == 0 and "warning" not in out, (url, out)


def test_a_key_file_others_may_read_is_refused(tmp_path, capsys):
    cfg = tmp_path / "loose.toml"
    key = _key(tmp_path, 0o644)
    cfg.write_text(SAFE.format(key=key))
    rc, _, err = check(capsys, cfg)
    assert rc == 2
    assert f"[mqtt] signing_key_file {key}: mode 0644 lets group or others read it" in err
    pw = tmp_path / "pw"
    pw.write_text("secret\n")
    pw.chmod(0o640)
    cfg.write_text(SAFE.format(key=_key(tmp_path)) + f'password_file = "{pw}"\nusername = "t"\n')
    rc, _, err = check(capsys, cfg)
    assert rc == 2 and f"[mqtt] password_file {pw}: mode 0640" in err


def test_the_signing_key_in_the_state_dir(tmp_path, capsys):
    from shoe_controller.keys import init_keys

    cfg = tmp_path / "safe.toml"
    cfg.write_text(SAFE.format(key=_key(tmp_path)))
    state = tmp_path / "state"
    state.mkdir()
    rc, out, _ = check(capsys, cfg, "--state-dir", str(state))
    assert rc == 0 and f"warning: no signing key {state}/signing.key" in out
    init_keys(str(state))
    rc, out, _ = check(capsys, cfg, "--state-dir", str(state), "--strict")
    assert rc == 0 and "warning" not in out, out
    (state / "signing.key").chmod(0o644)
    rc, _, err = check(capsys, cfg, "--state-dir", str(state))
    assert rc == 2 and f"signing key {state}/signing.key: mode 0644" in err


def test_config_example_ships_the_confirm_button_and_checks_ok(tmp_path, capsys):
    assert main(["config", "example"]) == 0
    text = capsys.readouterr().out
    assert tomllib.loads(text)["rules"]["confirm"] == "button"
    path = tmp_path / "example.toml"
    path.write_text(text)
    rc, out, _ = check(capsys, path)
    assert rc == 0 and '[rules] confirm = "auto"' not in out
    # the example's one remaining warning is the signing key only the operator can make
    assert [ln for ln in out.splitlines() if "warning:" in ln] == [
        "  warning: [mqtt] signing_key_file is not set: the casino feed goes out unsigned"]


def _signing_key(state: Path) -> None:
    """`shoe-controller keys init` (run refuses to start without a key)."""
    from shoe_controller.keys import init_keys

    state.mkdir(exist_ok=True)
    state.chmod(0o750)  # run refuses a wider state dir (issue 14)
    if not (state / "signing.key").exists():
        init_keys(str(state))


def _run(tmp_path: Path, config: str, *args: str, env: dict | None = None,
         seconds: float | None = None) -> subprocess.CompletedProcess:
    cfg = tmp_path / "table.toml"
    cfg.write_text(config)
    _signing_key(tmp_path / "state")
    cmd = [sys.executable, "-m", "shoe_controller.cli", "run", "--config", str(cfg),
           "--state-dir", str(tmp_path / "state"), "--cards", "scanner", *args]
    full_env = {**os.environ, **(env or {})}
    full_env.pop("JOURNAL_STREAM", None) if env is None or "JOURNAL_STREAM" not in env \
        else None
    if seconds is None:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=ROOT,
                              env=full_env)
    return run_then_stop(cmd, tmp_path / "state", seconds, cwd=ROOT, env=full_env)


RUN_CONFIG = """
[table]
id = "OPS-1"
[gpio]
pin_factory = "mock"
[serial]
port = "{port}"
reconnect_initial = 0.05
reconnect_max = 0.2
[mqtt]
enabled = false
{extra}
"""


def test_run_refuses_a_missing_key_file_in_one_line_with_exit_2(tmp_path):
    missing = tmp_path / "nope.key"
    proc = _run(tmp_path, RUN_CONFIG.format(port=tmp_path / "tty",
                                            extra=f'signing_key_file = "{missing}"'))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("shoe-controller run: refusing to start: ")
    assert f"[mqtt] signing_key_file {missing}: no such file" in proc.stderr


_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")


def test_run_logs_with_timestamps_and_a_missing_serial_port_once(tmp_path):
    proc = _run(tmp_path, RUN_CONFIG.format(port=tmp_path / "no-such-tty", extra=""),
                seconds=1.5)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines and all(_STAMP.match(ln) for ln in lines if not ln.startswith(" ")), lines
    faults = [ln for ln in lines if "fault from serial" in ln]
    # retried every 0.05-0.2 s for 1.5 s, reported once
    assert len(faults) == 1 and "no-such-tty" in faults[0], lines


def test_run_under_journald_has_no_second_timestamp(tmp_path):
    # journald is recognised by $JOURNAL_STREAM naming stderr: here, a file
    log = tmp_path / "stderr.log"
    cfg = tmp_path / "table.toml"
    cfg.write_text(RUN_CONFIG.format(port=tmp_path / "no-such-tty", extra=""))
    _signing_key(tmp_path / "state")
    with open(log, "w") as f:
        st = os.fstat(f.fileno())
        env = {**os.environ, "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "shoe_controller.cli", "run", "--config", str(cfg),
             "--state-dir", str(tmp_path / "state"), "--cards", "scanner"],
            stdout=subprocess.DEVNULL, stderr=f, cwd=ROOT, env=env)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and "ready:" not in log.read_text():
                time.sleep(0.05)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    lines = log.read_text().splitlines()
    assert any(ln.startswith("shoe_controller.daemon INFO: ready:") for ln in lines), lines


def test_run_log_format_json(tmp_path):
    proc = _run(tmp_path, RUN_CONFIG.format(port=tmp_path / "no-such-tty", extra=""),
                "--log-format", "json", seconds=0.5)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(ln) for ln in proc.stderr.splitlines()]
    assert records and all(set(r) >= {"time", "level", "logger", "message"} for r in records)
    assert any(r["message"].startswith("ready:") for r in records)
    assert any(r["level"] == "WARNING" and r["message"].startswith("fault from serial")
               for r in records)


def test_broker_shutdown_and_return_are_logged_once_with_the_real_reason(caplog):
    from shoe_controller.publish.config import MqttConfig
    from shoe_controller.publish.mqtt import MqttLink
    from shoe_controller.publish.topics import Topics
    from tests.support.broker import Mosquitto

    broker = Mosquitto().start()
    link = MqttLink(MqttConfig(url=broker.url, reconnect_min_delay=1, reconnect_max_delay=1),
                    Topics("shoe", "T1"), on_ack=lambda *a: None)
    caplog.set_level(logging.INFO, logger="shoe_controller.publish")
    try:
        link.start()
        assert link.wait_connected(10)
        broker.stop()  # a clean shutdown (SIGTERM)
        deadline = time.monotonic() + 10
        while link.connected and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(2.5)  # a few reconnect attempts meanwhile
        broker.start()
        assert link.wait_connected(10)
    finally:
        link.stop()
        broker.stop()
    msgs = [r.getMessage() for r in caplog.records if r.name == "shoe_controller.publish"]
    down = [m for m in msgs if m.startswith("MQTT disconnected")]
    assert len(down) == 1 and "broker closed the connection" in down[0], msgs
    assert "Unspecified error" not in down[0]
    assert len([m for m in msgs if m.startswith("MQTT cannot reach")]) <= 1, msgs  # once
    assert len([m for m in msgs if m.startswith("MQTT reconnected")]) == 1, msgs
    assert link.disconnects == 1
