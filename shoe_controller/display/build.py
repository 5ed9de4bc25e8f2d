"""Build step of the display page: bundle the npm package ``mqtt`` into the package.

    python -m shoe_controller.display.build          # npm ci + copy the bundle
    python -m shoe_controller.display.build --check  # exit 1 unless bundle and lock match

Runs ``npm ci`` against the committed package-lock.json (exact, reproducible versions;
install scripts disabled) in this folder, then copies ``node_modules/mqtt/dist/
mqtt.min.js`` (and its licence) to ``static/vendor/``, and records in
``static/vendor/mqtt.bundle.json`` the SHA-256 of the package-lock.json it was built from
and of the bundle. Needs node and npm at build time only; the page fetches nothing at
run time.

Packaging (setup.py's build hook, :func:`ensure_bundle`): ``python -m build`` makes the
sdist with the bundle, its licence and that record inside, and the wheel from the sdist:
where npm is installed and the record does not match the lock (or is missing), the bundle
is built again with ``npm ci``; where npm is not installed (a Pi), the bundle shipped in
the sdist is used if its record matches the lock and the bundle, else the build fails
saying why. So a wheel always carries a bundle built from the committed lock.
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
LICENCE = VENDOR / "mqtt.LICENSE.md"
RECORD = VENDOR / "mqtt.bundle.json"
LOCK = HERE / "package-lock.json"


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
    if not licence.is_file():
        raise BuildError(f"{licence} not found after npm ci: the bundle ships with its licence")
    shutil.copyfile(licence, LICENCE)
    write_record(here=HERE)
    return BUNDLE


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_record(here: Path = HERE) -> dict[str, str]:
    """Record which lock the bundle in ``here``/static/vendor was built from."""
    import json

    vendor = here / "static" / "vendor"
    lock = json.loads((here / "package-lock.json").read_text())
    record = {"package_lock_sha256": _sha256(here / "package-lock.json"),
              "bundle_sha256": _sha256(vendor / "mqtt.min.js"),
              "mqtt_version": lock["packages"]["node_modules/mqtt"]["version"]}
    (vendor / "mqtt.bundle.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def bundle_problem(here: Path = HERE) -> str | None:
    """Why the bundle in ``here`` cannot ship (missing, no licence, not built from the
    committed lock, changed since), or None when it matches the lock.

    >>> import tempfile; bundle_problem(Path(tempfile.mkdtemp()))
    'no MQTT client bundle (static/vendor/mqtt.min.js)'
    """
    import json

    vendor = here / "static" / "vendor"
    if not (vendor / "mqtt.min.js").is_file():
        return "no MQTT client bundle (static/vendor/mqtt.min.js)"
    if not (vendor / "mqtt.LICENSE.md").is_file():
        return "the bundle's licence (static/vendor/mqtt.LICENSE.md) is missing"
    try:
        record = json.loads((vendor / "mqtt.bundle.json").read_text())
    except (OSError, ValueError):
        return "no record of the lock the bundle was built from (mqtt.bundle.json)"
    if record.get("package_lock_sha256") != _sha256(here / "package-lock.json"):
        return "the bundle was built from another package-lock.json"
    if record.get("bundle_sha256") != _sha256(vendor / "mqtt.min.js"):
        return "the bundle changed since it was built"
    return None


def ensure_bundle(here: Path = HERE, quiet: bool = True) -> str:
    """The packaging hook: make sure ``here`` holds a bundle built from its lock (``npm
    ci`` when needed and possible). Returns what it did; BuildError when it cannot."""
    problem = bundle_problem(here)
    if problem is None:
        return "the MQTT client bundle matches package-lock.json"
    if shutil.which("npm") is None:
        raise BuildError(f"{problem}, and npm is not installed to build it: build the "
                         "wheel where npm is (apt-get install npm), or from the sdist")
    if here != HERE:
        raise BuildError(f"{problem} in {here}")
    build(quiet=quiet)
    return f"built the MQTT client bundle with npm ci ({problem})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shoe_controller.display.build",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that the bundle is in place")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.check:
        problem = bundle_problem()
        print(f"{BUNDLE}: {problem or 'present, built from package-lock.json'}")
        return 0 if problem is None else 1
    try:
        path = build(quiet=args.quiet)
    except BuildError as exc:
        print(f"display build: {exc}", file=sys.stderr)
        return 1
    print(f"display build: {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
