"""Headless Chromium for the display page tests: where it is, its flags, artifacts."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: Screenshots are copied here when the folder exists (`mkdir test-output` to keep them).
ARTIFACTS = Path("test-output")


def save_artifact(path: Path, subdir: str = "") -> None:
    """Copy a screenshot into test-output/ (when that folder exists) to be looked at."""
    if ARTIFACTS.is_dir():
        dest = ARTIFACTS / subdir if subdir else ARTIFACTS
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest / path.name)
