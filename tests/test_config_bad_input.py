"""Hostile configuration files (issue 14, finding 6): `config check` died with a traceback
on deeply nested TOML (RecursionError) and on a 100,000-digit integer; a 191 MB file
took 27 s and 1.2 GB and echoed the whole value. Every error is now one line naming the
file (and the section and key where there is one), never a traceback, never more than
80 characters of a value; files over 1 MiB and nesting deeper than the schema are
refused unread."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoe_controller.config import MAX_CONFIG_BYTES, ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]


def check(path: Path) -> tuple[int, list[str], float]:
    """`shoe-controller config check FILE`: (exit status, stderr lines, peak RSS in MB)."""
    # VmHWM: this process's own peak (ru_maxrss would count the forking parent's too)
    code = ("import re, sys\n"
            "from shoe_controller.cli import main\n"
            "rc = main(['config', 'check', sys.argv[1]])\n"
            "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1])\n"
            "sys.exit(rc)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    return proc.returncode, proc.stderr.splitlines(), int(proc.stdout.split()[-1]) / 1024


def problem_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if not re.search(r": \d+ problems?$", line)]


def assert_one_clean_line(path: Path, rc: int, lines: list[str]) -> str:
    assert rc == 2
    assert not any("Traceback" in line for line in lines), lines
    problems = problem_lines(lines)
    assert len(problems) == 1, lines
    line = problems[0]
    assert line.startswith(f"config: {path}: ")
    # no run of more than 80 characters of one value (x, 1, k are the values below)
    assert not re.search(r"(x{81}|1{81}|k{81}|\[{81}|\{{81})", line), line[:300]
    assert len(line) < 600
    return line


HOSTILE = {
    "deep_array": "[rules]\ndecks = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "deep_inline_table": "[table]\nname = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n",
    "deep_header": "[table." + ".".join(["x"] * 100_000) + "]\nk = 1\n",
    "huge_integer": "[rules]\ndecks = " + "1" * 100_000 + "\n",
    "long_integer": "[rules]\ndecks = " + "1" * 4000 + "\n",
    "wide_integer": "[rules]\ndecks = " + "1" * 60 + "\n",
    "long_string": '[table]\nid = "' + "x" * 300_000 + '"\n',
    "long_key": "[table]\n" + "k" * 5000 + " = 1\n",
    "long_section": "[" + "k" * 5000 + "]\n",
    "deep_rows": "[insurance]\nrows = [{side = {a = {b = {c = 1}}}}]\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_config_is_one_clean_line(tmp_path, name):
    path = tmp_path / f"{name}.toml"
    path.write_text(HOSTILE[name])
    rc, lines, _ = check(path)
    line = assert_one_clean_line(path, rc, lines)
    if name.startswith("deep"):
        assert "nested more deeply than any setting" in line, line
    if name in ("deep_array", "huge_integer", "long_integer"):
        assert "[rules] decks" in line, line
    if name in ("huge_integer", "long_integer"):
        assert "a number of more than 100 digits" in line, line
    if name == "wide_integer":
        assert "[rules] decks: expected an integer 1-16, got an integer of 60 digits" in line
    if name == "deep_rows":
        assert "[insurance] rows" in line, line
    # the daemon's loader says the same, as a ConfigError (run prints it in one line)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert "\n" not in str(exc.value)


def test_a_file_over_1_mib_is_refused_unread(tmp_path):
    path = tmp_path / "huge.toml"
    with path.open("wb") as f:  # 200 MB, sparse: the checker must not read it
        f.write(b"[table]\nname = \"")
        f.truncate(200 * 1024 * 1024)
    t = time.monotonic()
    rc, lines, rss_mb = check(path)
    elapsed = time.monotonic() - t
    line = assert_one_clean_line(path, rc, lines)
    assert f"larger than the {MAX_CONFIG_BYTES} bytes (1 MiB)" in line
    assert rss_mb < 200, rss_mb  # the old checker held the whole file (and more)
    assert elapsed < 30
    just_over = tmp_path / "just_over.toml"
    just_over.write_text("# " + "x" * MAX_CONFIG_BYTES + "\n")
    assert_one_clean_line(just_over, *check(just_over)[:2])


def test_a_config_of_exactly_the_schema_depth_still_loads(tmp_path):
    path = tmp_path / "rows.toml"
    path.write_text('[rules]\nconfirm = "button"\n[insurance]\nenabled = true\n'
                    'rows = [{side = "banker", stage = "2/2", player = "unrevealed", '
                    'banker = "7", insures = "player", odds = 2.0}]\n'
                    '[camera]\nroi = [0, 0, 640, 480]\n')
    cfg = load_config(path)
    assert cfg.rules.insurance.rows[0].odds == 2.0

