"""The device signing key (shoe_controller/keys.py, `shoe-controller keys`), checked
against independent references: openssl reads the private key file and derives the
public key we wrote, and RFC 8032's test vector 1 signs to the published bytes."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from shoe_controller import keys
from tests.support.run_daemon import run_then_stop


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shoe_controller.cli", *argv],
                          capture_output=True, text=True, env=os.environ.copy(), timeout=60)


def test_init_writes_private_0600_and_public_line_and_prints_fingerprint(tmp_path):
    r = _cli("keys", "init", "--state-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    priv, pub = tmp_path / "signing.key", tmp_path / "signing.pub"
    assert priv.stat().st_mode & 0o777 == 0o600
    line = pub.read_text()
    assert line.endswith("\n") and line.count("\n") == 1 and line.startswith("ed25519:")
    raw = base64.b64decode(line.strip()[len("ed25519:"):], validate=True)
    assert len(raw) == 32
    # the documented fingerprint: first 16 bytes of SHA-256 of the raw key, hex
    fp = hashlib.sha256(raw).hexdigest()[:32]
    assert fp in r.stdout and line.strip() in r.stdout
    # independent: the private key file is a key the cryptography package (and openssl)
    # read as Ed25519, and its public half is the one in signing.pub
    private = serialization.load_pem_private_key(priv.read_bytes(), password=None)
    assert isinstance(private, Ed25519PrivateKey)
    assert private.public_key().public_bytes(serialization.Encoding.Raw,
                                             serialization.PublicFormat.Raw) == raw
    if shutil.which("openssl"):
        der = subprocess.run(["openssl", "pkey", "-in", str(priv), "-pubout", "-outform",
                              "DER"], capture_output=True, check=True).stdout
        assert der[-32:] == raw


def test_init_refuses_to_overwrite(tmp_path):
    keys.init_keys(str(tmp_path))
    before = (tmp_path / "signing.key").read_bytes()
    r = _cli("keys", "init", "--state-dir", str(tmp_path))
    assert r.returncode == 2 and "refusing to overwrite" in r.stderr
    assert r.stderr.count("\n") == 1
    assert (tmp_path / "signing.key").read_bytes() == before


def test_rfc8032_vector_1_signs_to_the_published_signature():
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    private = Ed25519PrivateKey.from_private_bytes(seed)
    key = keys.SigningKey(private, keys.PublicKey(private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)))
    assert key.public.raw.hex() == ("d75a980182b10ab7d54bfed3c964073a"
                                    "0ee172f3daa62325af021a68f707511a")
    assert key.sign(b"").hex() == (
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o644])
def test_load_refuses_a_key_readable_by_group_or_others(tmp_path, mode):
    keys.init_keys(str(tmp_path))
    path = tmp_path / "signing.key"
    os.chmod(path, mode)
    with pytest.raises(keys.KeyFileError, match=f"mode {mode:04o} lets group or others"):
        keys.load_signing_key(str(path))


def test_load_refuses_missing_short_and_wrong_keys(tmp_path):
    path = tmp_path / "signing.key"
    with pytest.raises(keys.KeyFileError, match=r"no such file: make one with .*keys init"):
        keys.load_signing_key(str(path))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"k")
    os.close(fd)
    with pytest.raises(keys.KeyFileError, match=r"1 byte.*too short"):
        keys.load_signing_key(str(path))
    # a well-formed key of another algorithm
    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    path.write_bytes(other)
    with pytest.raises(keys.KeyFileError, match="not an Ed25519 key"):
        keys.load_signing_key(str(path))
    path.write_bytes(b"-----BEGIN PRIVATE KEY-----\n" + b"A" * 120 + b"\n")
    with pytest.raises(keys.KeyFileError, match="not an unencrypted PEM private key"):
        keys.load_signing_key(str(path))


def test_check_secret_file_lists_every_problem(tmp_path):
    p = tmp_path / "pw"
    assert keys.check_secret_file(str(tmp_path)) == [f"{tmp_path}: not a regular file"]
    fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"0123456789")
    os.close(fd)
    assert keys.check_secret_file(str(p), min_bytes=10) == []
    os.chmod(p, 0o604)
    problems = keys.check_secret_file(str(p), min_bytes=32)
    assert len(problems) == 2 and "mode 0604" in problems[0] and "too short" in problems[1]


def test_public_key_forms_agree(tmp_path):
    pub = keys.init_keys(str(tmp_path))
    pem = serialization.load_pem_private_key(
        (tmp_path / "signing.key").read_bytes(), None).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    for form in (pub.text, pub.raw.hex(), pem, str(tmp_path / "signing.pub")):
        assert keys.load_public_key(form).raw == pub.raw
    with pytest.raises(keys.KeyFileError, match="not a public key"):
        keys.load_public_key("hello")
    r = _cli("keys", "show", "--state-dir", str(tmp_path))
    assert r.returncode == 0 and pub.key_id in r.stdout


# -- the daemon and its key (issue 13 point 1: refuse without a safe key, unless
#    --unsigned, said loudly) ---------------------------------------------------------

_RUN_CONFIG = """[table]
id = "K-1"
[gpio]
pin_factory = "mock"
[serial]
port = "{tty}"
reconnect_initial = 0.05
reconnect_max = 0.2
[mqtt]
enabled = false
"""


def _run_daemon(tmp_path, *extra: str, seconds: float | None = None
                ) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "table.toml"
    cfg.write_text(_RUN_CONFIG.format(tty=tmp_path / "no-tty"))
    state = tmp_path / "state"
    cmd = [sys.executable, "-m", "shoe_controller.cli", "run", "--config", str(cfg),
           "--state-dir", str(state), "--cards", "scanner", *extra]
    if seconds is None:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return run_then_stop(cmd, state, seconds)


def test_run_refuses_to_start_without_a_signing_key(tmp_path):
    r = _run_daemon(tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") <= 1 and "Traceback" not in r.stderr
    assert f"{tmp_path / 'state' / 'signing.key'}: no such file" in r.stderr
    assert "keys init" in r.stderr  # says what to do


def test_run_refuses_a_signing_key_group_can_read(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o750)
    keys.init_keys(str(state))
    os.chmod(state / "signing.key", 0o640)
    r = _run_daemon(tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") <= 1 and "Traceback" not in r.stderr
    key = state / "signing.key"
    assert f"{key}: mode 0640 lets group or others read it: chmod 600 {key}" in r.stderr


def test_run_unsigned_starts_without_a_key_and_says_so_loudly(tmp_path):
    r = _run_daemon(tmp_path, "--unsigned", seconds=0.5)
    assert r.returncode == 0, r.stderr
    assert "*** UNSIGNED" in r.stderr and "Never on a casino table" in r.stderr
    assert not (tmp_path / "state" / "signing.key").exists()  # run never makes one
