"""Build step of the display page: bundle the npm package ``mqtt`` into the package.

    python -m shoe_controller.display.build          # npm ci + copy the bundle
    python -m shoe_controller.display.build --check  # exit 1 if the bundle is missing

Runs ``npm ci`` against the committed package-lock.json (exact, reproducible versions;
install scripts disabled) in this folder, then copies ``node_modules/mqtt/dist/
mqtt.min.js`` (and its licence) to ``static/vendor/``. Needs node and npm at build time
only; the page fetches nothing at run time.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENDOR = HERE / "static" / "vendor"
BUNDLE = VENDOR / "mqtt.min.js"


class BuildError(RuntimeError):
    """The build step could not complete; the message says what to do."""


def build(quiet: bool = False) -> Path:
    """Install the locked npm dependencies and copy the MQTT bundle; returns its path."""
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("npm is not installed: apt-get install npm (build time only)")
    cmd = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"]
    if quiet:
        cmd.append("--silent")
    proc = subprocess.run(cmd, cwd=HERE, capture_output=quiet, text=True, check=False)
    if proc.returncode != 0:
        detail = (proc.stderr or "").strip() if quiet else ""
        raise BuildError(f"`npm ci` failed in {HERE} (exit {proc.returncode}) {detail}")
    dist = HERE / "node_modules" / "mqtt" / "dist" / "mqtt.min.js"
    if not dist.is_file():
        raise BuildError(f"{dist} not found after npm ci: has the mqtt package changed?")
    VENDOR.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(dist, BUNDLE)
    licence = HERE / "node_modules" / "mqtt" / "LICENSE.md"
    if licence.is_file():
        shutil.copyfile(licence, VENDOR / "mqtt.LICENSE.md")
    return BUNDLE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shoe_controller.display.build",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that the bundle is in place")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.check:
        ok = BUNDLE.is_file()
        print(f"{BUNDLE}: {'present' if ok else 'MISSING'}")
        return 0 if ok else 1
    try:
        path = build(quiet=args.quiet)
    except BuildError as exc:
        print(f"display build: {exc}", file=sys.stderr)
        return 1
    print(f"display build: {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
