"""The device's Ed25519 signing key: create it, load it, check key files. THE one place
key files are checked (the daemon, ``config check`` and the hardening checks call it).

Files (``shoe-controller keys init --state-dir DIR``):

``DIR/signing.key``  the private key, PKCS#8 PEM (``-----BEGIN PRIVATE KEY-----``, what
                     ``openssl genpkey -algorithm ed25519`` writes), mode 0600, never
                     overwritten.
``DIR/signing.pub``  the public key, one line: ``ed25519:`` + standard base64 (with
                     padding) of the 32 raw public-key bytes (RFC 8032), e.g.
                     ``ed25519:11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=``.

The key's *fingerprint* (``key_id`` in every signed message) is the lowercase hex of the
first 16 bytes of SHA-256 over the 32 raw public-key bytes: 32 hex digits. The casino
pins it (or the whole ``signing.pub`` line) out of band.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> pub = init_keys(d)
>>> oct(os.stat(os.path.join(d, "signing.key")).st_mode & 0o777)
'0o600'
>>> key = load_signing_key(os.path.join(d, "signing.key"))
>>> key.key_id == pub.key_id == fingerprint(pub.raw)
True
>>> pub.verify(key.sign(b"hello"), b"hello"), pub.verify(key.sign(b"hello"), b"hellO")
(True, False)
>>> init_keys(d)
Traceback (most recent call last):
...
shoe_controller.keys.KeyFileError: .../signing.key already exists: refusing to overwrite ...
>>> os.chmod(os.path.join(d, "signing.key"), 0o640)
>>> load_signing_key(os.path.join(d, "signing.key"))
Traceback (most recent call last):
...
shoe_controller.keys.KeyFileError: .../signing.key: mode 0640 lets group or others ...
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import stat
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

__all__ = [
    "PRIVATE_NAME",
    "PUBLIC_NAME",
    "KeyFileError",
    "Keyring",
    "PublicKey",
    "SigningKey",
    "check_rotation",
    "check_secret_file",
    "ensure_keys",
    "fingerprint",
    "init_keys",
    "load_public_key",
    "load_signing_key",
    "parse_public_key",
    "retired_name",
    "rotation_body",
    "trusted_public_keys",
]

PRIVATE_NAME = "signing.key"
PUBLIC_NAME = "signing.pub"
#: Raw sizes (RFC 8032): public key and private seed 32 bytes, signature 64 bytes.
RAW_KEY_BYTES = 32
SIGNATURE_BYTES = 64
_PUB_PREFIX = "ed25519:"
#: A PKCS#8 PEM Ed25519 private key is 119 bytes; anything much shorter is no key.
_MIN_PEM_BYTES = 100
#: Key files larger than this are not key files (never read a huge file into memory).
_MAX_KEY_FILE = 64 * 1024


class KeyFileError(ValueError):
    """A key file that cannot be used; the message names the file, what and what to do."""


def fingerprint(raw_public: bytes) -> str:
    """The key id: lowercase hex of the first 16 bytes of SHA-256(raw public key).

    >>> fingerprint(bytes(32))
    '66687aadf862bd776c8fc18b8e9f8e20'
    """
    return hashlib.sha256(raw_public).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class PublicKey:
    """A device's public key: verify signatures, show it, pin it."""

    raw: bytes

    def __post_init__(self) -> None:
        if len(self.raw) != RAW_KEY_BYTES:
            raise KeyFileError(f"an Ed25519 public key is {RAW_KEY_BYTES} bytes, "
                            f"got {len(self.raw)}")

    @property
    def key_id(self) -> str:
        return fingerprint(self.raw)

    @property
    def text(self) -> str:
        """The one-line text form of ``signing.pub``."""
        return _PUB_PREFIX + base64.b64encode(self.raw).decode()

    def verify(self, signature: bytes, data: bytes) -> bool:
        """True when ``signature`` is this key's Ed25519 signature of ``data``."""
        if len(signature) != SIGNATURE_BYTES:
            return False
        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, data)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True, slots=True)
class SigningKey:
    """The device's private key (loaded once; signing is deterministic, RFC 8032)."""

    private: Ed25519PrivateKey
    public: PublicKey
    path: str = ""

    @property
    def key_id(self) -> str:
        return self.public.key_id

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``data``."""
        return self.private.sign(data)

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh key in memory (tests, benchmarks)."""
        private = Ed25519PrivateKey.generate()
        return cls(private, PublicKey(_raw_public(private)))


def _raw_public(private: Ed25519PrivateKey) -> bytes:
    return private.public_key().public_bytes(serialization.Encoding.Raw,
                                             serialization.PublicFormat.Raw)


def check_secret_file(path: str, *, min_bytes: int = 1) -> list[str]:
    """What is wrong with a secret file (private key, password file), as one-line
    problems; an empty list when it is fine: it exists, is a regular file, is not
    readable or writable by group or others, and holds at least ``min_bytes``.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "pw")
    >>> check_secret_file(p)
    ['.../pw: no such file']
    >>> fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644); _ = os.write(fd, b"x"); os.close(fd)
    >>> check_secret_file(p, min_bytes=8)  # doctest: +NORMALIZE_WHITESPACE
    ['.../pw: mode 0644 lets group or others read it: chmod 600 .../pw',
     '.../pw: 1 byte(s), too short for this secret (at least 8)']
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [f"{path}: no such file"]
    except OSError as exc:
        return [f"{path}: cannot stat it ({exc.strerror})"]
    if not stat.S_ISREG(st.st_mode):
        return [f"{path}: not a regular file"]
    problems = []
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        problems.append(f"{path}: mode {mode:04o} lets group or others read it: "
                        f"chmod 600 {path}")
    if st.st_size < min_bytes:
        problems.append(f"{path}: {st.st_size} byte(s), too short for this secret "
                        f"(at least {min_bytes})")
    elif st.st_size > _MAX_KEY_FILE:
        problems.append(f"{path}: {st.st_size} bytes, too large for a key file")
    return problems


def load_signing_key(path: str) -> SigningKey:
    """Load and check ``signing.key``; :class:`KeyFileError` (one line) if it is missing,
    readable by group or others, or not an Ed25519 private key of the right size."""
    problems = check_secret_file(path, min_bytes=_MIN_PEM_BYTES)
    if problems:
        hint = ""
        if problems[0].endswith("no such file"):
            hint = (": make one with `shoe-controller keys init --state-dir "
                    f"{os.path.dirname(path) or '.'}` (or run with --unsigned, not for a "
                    "casino table)")
        raise KeyFileError(problems[0] + hint)
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_KEY_FILE + 1)
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read it ({exc.strerror})") from None
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise KeyFileError(f"{path}: not an unencrypted PEM private key ({why[:80]})") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 key ({type(private).__name__[1:]})")
    return SigningKey(private, PublicKey(_raw_public(private)), path)


def parse_public_key(text: str) -> PublicKey:
    """A public key from its text: the ``signing.pub`` line (``ed25519:<base64>``), 64 hex
    digits, or a PEM ``PUBLIC KEY`` block (``openssl pkey -pubout``).

    >>> parse_public_key("ed25519:" + "A" * 43 + "=").raw == bytes(32)
    True
    >>> parse_public_key("ed25519:AAAA")
    Traceback (most recent call last):
    ...
    shoe_controller.keys.KeyFileError: an Ed25519 public key is 32 bytes, got 3
    """
    text = text.strip()
    if text.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_public_key(text.encode())
        except ValueError as exc:
            raise KeyFileError(f"not a PEM public key ({str(exc)[:80]})") from None
        if not isinstance(key, Ed25519PublicKey):
            raise KeyFileError("not an Ed25519 public key")
        return PublicKey(key.public_bytes(serialization.Encoding.Raw,
                                          serialization.PublicFormat.Raw))
    if text.startswith(_PUB_PREFIX):
        try:
            return PublicKey(base64.b64decode(text[len(_PUB_PREFIX):], validate=True))
        except binascii.Error:
            raise KeyFileError("the public key after 'ed25519:' is not base64") from None
    if len(text) == 2 * RAW_KEY_BYTES:
        try:
            return PublicKey(bytes.fromhex(text))
        except ValueError:
            pass
    raise KeyFileError(f"not a public key: expected 'ed25519:<base64>' (signing.pub), "
                    f"64 hex digits or a PEM block, got {text[:40]!r}")


def load_public_key(spec: str) -> PublicKey:
    """``--pubkey``: a file holding a public key (see :func:`parse_public_key`), or the
    key's text itself."""
    if os.path.exists(spec):
        try:
            with open(spec, encoding="utf-8") as f:
                text = f.read(_MAX_KEY_FILE)
        except (OSError, UnicodeDecodeError) as exc:
            raise KeyFileError(f"{spec}: cannot read it ({exc})") from None
        try:
            return parse_public_key(text)
        except KeyFileError as exc:
            raise KeyFileError(f"{spec}: {exc}") from None
    return parse_public_key(spec)


def _write_new(path: str, data: bytes, mode: int) -> None:
    """Create ``path`` (never replacing a file) with ``mode``, fsynced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)  # whatever the umask
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def init_keys(state_dir: str, key: SigningKey | None = None) -> PublicKey:
    """Write ``signing.key`` (0600) and ``signing.pub`` (0644) into ``state_dir``; refuse
    if a private key is there already. Returns the public key."""
    priv_path = os.path.join(state_dir, PRIVATE_NAME)
    pub_path = os.path.join(state_dir, PUBLIC_NAME)
    if os.path.lexists(priv_path):
        raise KeyFileError(f"{priv_path} already exists: refusing to overwrite a signing key "
                        "(rotate it with `shoe-controller keys rotate`)")
    key = key or SigningKey.generate()
    pem = key.private.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    try:
        _write_new(priv_path, pem, 0o600)
    except FileExistsError:
        raise KeyFileError(f"{priv_path} already exists: refusing to overwrite it") from None
    tmp = pub_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(key.public.text + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, pub_path)
    return key.public


def ensure_keys(state_dir: str) -> SigningKey:
    """The key in ``state_dir``, made first if there is none (``simulate``)."""
    path = os.path.join(state_dir, PRIVATE_NAME)
    if not os.path.lexists(path):
        init_keys(state_dir)
    return load_signing_key(path)


#: A retired key, kept so that replays of the seqs it signed stay byte-identical:
#: ``signing.key.<key_id>.old`` (0600) beside ``signing.key``.
def retired_name(key_id: str) -> str:
    """>>> retired_name("ab" * 16)
    'signing.key.abababababababababababababababab.old'
    """
    return f"{PRIVATE_NAME}.{key_id}.old"


class Keyring:
    """Which key signs which seq of a journal: ``(first_seq, key)`` pairs, oldest first
    (a ``key_rotated`` event at seq R is the last seq of the old key; R + 1 is the new
    key's first). ``current`` signs heads and display states.

    >>> a, b = SigningKey.generate(), SigningKey.generate()
    >>> ring = Keyring([(1, a), (8, b)])
    >>> ring.for_seq(7) is a, ring.for_seq(8) is b, ring.current is b
    (True, True, True)
    """

    def __init__(self, entries: list[tuple[int, SigningKey]]) -> None:
        if not entries:
            raise ValueError("a keyring needs at least one key")
        self.entries = sorted(entries, key=lambda e: e[0])

    @property
    def current(self) -> SigningKey:
        return self.entries[-1][1]

    def for_seq(self, seq: int) -> SigningKey:
        key = self.entries[0][1]
        for first, k in self.entries:
            if first <= seq:
                key = k
        return key


def rotation_body(old: SigningKey, new: PublicKey, epoch: str, table: str) -> dict[str, object]:
    """The ``key_rotated`` event: the old key endorses the new one. ``endorsement`` is the
    old key's Ed25519 signature (hex) over the canonical JSON of the event without
    ``endorsement``; the envelope carrying it is signed by the old key too.

    >>> k, n = SigningKey.generate(), SigningKey.generate()
    >>> body = rotation_body(k, n.public, "ab" * 16, "T1")
    >>> check_rotation(body, k.public) == n.public
    True
    """
    import json

    body: dict[str, object] = {"type": "key_rotated", "epoch": epoch, "table": table,
                               "old_key_id": old.key_id, "new_key_id": new.key_id,
                               "new_public_key": new.text}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    body["endorsement"] = old.sign(text.encode()).hex()
    return body


def check_rotation(body: dict[str, object], old: PublicKey) -> PublicKey | None:
    """The new key a ``key_rotated`` event introduces, if ``old`` endorsed it; else None."""
    import json

    try:
        new = parse_public_key(str(body["new_public_key"]))
        rest = {k: v for k, v in body.items() if k != "endorsement"}
        text = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        sig = bytes.fromhex(str(body["endorsement"]))
    except (KeyError, ValueError, KeyFileError):
        return None
    if body.get("old_key_id") != old.key_id or body.get("new_key_id") != new.key_id:
        return None
    return new if old.verify(sig, text.encode()) else None


def trusted_public_keys(key: SigningKey) -> list[PublicKey]:
    """The device's own public keys: ``key``'s and those of its retired keys beside it
    (what signed this device's earlier heads)."""
    out = [key.public]
    folder = os.path.dirname(key.path) if key.path else ""
    if not folder or not os.path.isdir(folder):
        return out
    for name in sorted(os.listdir(folder)):
        if name.startswith(PRIVATE_NAME + ".") and name.endswith(".old"):
            try:
                out.append(load_signing_key(os.path.join(folder, name)).public)
            except KeyFileError:
                continue
    return out
