"""The deployment lock (issue 14, finding 7): requirements.lock pins every runtime
dependency with hashes (installed with `pip install --require-hashes`, docs/deploy.md)
and matches pyproject.toml. Checked offline: pyproject's dependencies against the lock's
direct pins, each pin against its specifier, and the lock closed under the installed
distributions' own requirements. `make lock` regenerates it."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
DIRECT = "smart-shoe-controller (pyproject.toml)"


def parse_lock(text: str) -> dict[str, dict]:
    """name -> {"version", "hashes", "via"} from pip-compile's format."""
    out: dict[str, dict] = {}
    current: dict | None = None
    in_via = False
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)\s*\\?$", line)
        if m:
            current = {"version": m.group(2), "hashes": [], "via": set()}
            out[canonicalize_name(m.group(1))] = current
            in_via = False
            continue
        if current is None:
            continue
        h = re.match(r"^\s+--hash=sha256:([0-9a-f]{64})\s*\\?$", line)
        if h:
            current["hashes"].append(h.group(1))
            continue
        via = re.match(r"^\s+#\s+via(?:\s+(.*))?$", line)
        if via:
            in_via = via.group(1) is None
            if via.group(1):
                current["via"].add(via.group(1).strip())
            continue
        if in_via and re.match(r"^\s+#\s+(\S.*)$", line):
            current["via"].add(line.strip()[1:].strip())
            continue
        in_via = False
    return out


def runtime_requirements() -> list[Requirement]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [Requirement(r) for r in data["project"]["dependencies"]]


def test_the_lock_is_hashed_and_generated_the_documented_way():
    text = LOCK.read_text()
    assert "--generate-hashes" in text.split("\n\n")[0]
    assert "pyproject.toml" in text.split("\n\n")[0]
    assert "--index-url" not in text and "--find-links" not in text
    lock = parse_lock(text)
    assert lock
    for name, entry in lock.items():
        assert entry["hashes"], f"{name} has no --hash"
        Version(entry["version"])  # an exact, valid version


def test_the_lock_matches_pyproject():
    lock = parse_lock(LOCK.read_text())
    reqs = {canonicalize_name(r.name): r for r in runtime_requirements()}
    direct = {name for name, e in lock.items() if DIRECT in e["via"]}
    assert direct == set(reqs), (
        f"run `make lock`: in pyproject only {sorted(set(reqs) - direct)}, "
        f"in the lock only {sorted(direct - set(reqs))}")
    for name, req in reqs.items():
        assert req.specifier.contains(lock[name]["version"], prereleases=True), (
            f"{name}=={lock[name]['version']} does not satisfy {req}: run `make lock`")


def test_the_lock_is_closed_under_the_locked_packages_requirements():
    """Every requirement of a locked package (as its installed metadata says, for this
    platform, without extras) is locked too."""
    lock = parse_lock(LOCK.read_text())
    env = {**default_environment(), "extra": ""}
    checked = 0
    for name, entry in lock.items():
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        if canonicalize_name(dist.version) != canonicalize_name(entry["version"]):
            continue  # another version installed here: its metadata says nothing
        checked += 1
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            dep = canonicalize_name(req.name)
            assert dep in lock, f"{name} needs {req}, which is not in requirements.lock"
            assert req.specifier.contains(lock[dep]["version"], prereleases=True), (
                f"{name} needs {req}, the lock has {lock[dep]['version']}")
    assert checked >= len(runtime_requirements())  # the check ran on the real packages


def test_the_parser_reads_pip_compiles_format():
    sample = (
        "#\n# pip-compile --generate-hashes pyproject.toml\n#\n"
        "numpy==2.0.0 \\\n    --hash=sha256:" + "a" * 64 + " \\\n"
        "    --hash=sha256:" + "b" * 64 + "\n"
        "    # via\n    #   opencv-python-headless\n    #   " + DIRECT + "\n"
        "rich==13.0 \\\n    --hash=sha256:" + "c" * 64 + "\n    # via " + DIRECT + "\n")
    lock = parse_lock(sample)
    assert lock["numpy"] == {"version": "2.0.0", "hashes": ["a" * 64, "b" * 64],
                             "via": {"opencv-python-headless", DIRECT}}
    assert lock["rich"]["via"] == {DIRECT}
