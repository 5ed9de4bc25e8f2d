"""The packages hold everything the daemon and the page need: `python -m build` makes an
sdist and a wheel (the page's MQTT client bundle built from package-lock.json, with its
licence), the wheel installs into a fresh venv with no npm on PATH, and the page it
serves loads in Chromium with its MQTT client.

The wheel itself is installed with ``--no-deps --no-index`` (only what is in it); its
dependencies come from this test run's own environment through a ``.pth`` line, so the
test needs no network and stays well under the time budget (CI could install them from
PyPI instead: ``SHOE_WHEEL_TEST_DEPS=pypi``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
VENDOR = "shoe_controller/display/static/vendor"

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _source_tree(dest: Path) -> None:
    """The worktree's files as git sees them (tracked and new), plus the bundle if it
    was built here (it is ignored by git), copied to ``dest``."""
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    names += [f"{VENDOR}/{n}" for n in ("mqtt.min.js", "mqtt.LICENSE.md", "mqtt.bundle.json")]
    for name in names:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def test_the_wheel_installs_without_npm_and_serves_the_page_with_its_mqtt_client(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    pytest.importorskip("build")
    src, dist, venv = tmp_path / "src", tmp_path / "dist", tmp_path / "venv"
    _source_tree(src)
    # Build: sdist, then the wheel from the sdist (npm may be used here, at build time).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheel = next(dist.glob("*.whl"))
    sdist = next(dist.glob("*.tar.gz"))
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        record = json.loads(z.read(f"{VENDOR}/mqtt.bundle.json"))
        lock = json.loads((src / "shoe_controller/display/package-lock.json").read_text())
        assert record["mqtt_version"] == lock["packages"]["node_modules/mqtt"]["version"]
    for needed in (f"{VENDOR}/mqtt.min.js", f"{VENDOR}/mqtt.LICENSE.md",
                   "shoe_controller/display/static/index.html",
                   "shoe_controller/display/static/app.js",
                   "shoe_controller/publish/schemas/casino_event.schema.json"):
        assert needed in names, needed
    listing = subprocess.run(["tar", "tzf", str(sdist)], capture_output=True, text=True,
                             check=True).stdout
    assert f"{VENDOR}/mqtt.min.js" in listing and "setup.py" in listing

    # A fresh venv; PATH holds only its bin/ (no npm, no node).
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bare = {"PATH": str(venv / "bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    assert shutil.which("npm", path=bare["PATH"]) is None
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
           "--disable-pip-version-check"]
    if os.environ.get("SHOE_WHEEL_TEST_DEPS") == "pypi":
        subprocess.run([*pip, str(wheel)], check=True, timeout=900, env=bare)
    else:
        subprocess.run([*pip, "--no-deps", "--no-index", str(wheel)], check=True, timeout=300,
                       env=bare)
        site = Path(subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; "
             "print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True,
            check=True, env=bare).stdout.strip())
        # the dependencies only (appended after the venv's own site-packages)
        (site / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    server = subprocess.Popen(
        [str(venv / "bin" / "python"), "-c",
         "import sys, shoe_controller.display.server as s\n"
         "print(s.__file__, flush=True)\n"
         "srv = s.serve(0, 'ws://127.0.0.1:9', 'WHEEL-1')\n"
         "print(srv.port, flush=True)\n"
         "sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=tmp_path, env=bare)
    try:
        assert server.stdout is not None
        where = server.stdout.readline().strip()
        assert where.startswith(str(venv)), f"the page came from {where}, not the wheel"
        port = int(server.stdout.readline())
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                response = page.goto(f"http://127.0.0.1:{port}/", wait_until="load",
                                     timeout=30_000)
                assert response is not None and response.status == 200
                assert page.evaluate("typeof mqtt !== 'undefined' && "
                                     "typeof mqtt.connect === 'function'")
                assert "bundle missing" not in page.content()
            finally:
                browser.close()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(10)
