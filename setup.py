"""Build hook (everything else is in pyproject.toml): the display page's MQTT client
bundle goes into the sdist and the wheel, built with ``npm ci`` from the committed
package-lock.json and checked against it (shoe_controller/display/build.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent


def _ensure_bundle() -> None:
    # loaded by path: the build environment need not import the package (and its deps)
    spec = importlib.util.spec_from_file_location(
        "_display_build", HERE / "shoe_controller" / "display" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        print("display bundle:", module.ensure_bundle())
    except module.BuildError as exc:
        raise SystemExit(f"display bundle: {exc}") from None


class BuildPy(build_py):
    def run(self) -> None:
        if not getattr(self, "editable_mode", False):  # `pip install -e`: the dev's tree
            _ensure_bundle()
        super().run()


class Sdist(sdist):
    def run(self) -> None:
        _ensure_bundle()
        super().run()


setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
