"""The calibration profile: what the index reader learned from the casino's own deck.

One file (a NumPy ``.npz`` archive) holding a JSON header and the template arrays:

- ``meta``: JSON text: ``format``, ``version``, ``created``, ``source`` (where the deck
  was learned from), ``geometry`` (index layout and glyph sizes at the calibrated scale,
  in frame pixels), ``colours`` (card face, ink per suit, cut card, shoe interior),
  ``thresholds`` (score and margin limits of the reader), ``camera`` (ROI, exposure,
  focus, ... as saved by ``shoe-calibrate camera``; free-form JSON values);
- ``rank_templates``: float32 (N, D): N learned rank glyphs (every card's rank, seen
  sharp, blurred, smaller, larger and slightly turned, see ``index_learn``), each a
  flattened ``index_glyphs.RANK_CANVAS`` image, zero-mean and unit-norm (ink positive);
  ``rank_labels``: int (N,), rank + 13 * blur: the rank 0..12 for A..K and which blur
  of ``index_learn.BLURS`` the view has;
- ``suit_templates`` (M, d) and ``suit_labels`` (M,), suit 0..3 for S H D C + 4 * blur,
  likewise.

Version 4 (this one) stores the deck's alike rank pairs (``geometry.alike_ranks``: two
ranks printed alike, such as a jack printed B and a small 8, each pair with the
discriminant the reader decides it by; a version-3 profile of such a deck would read it
without that check, so it is refused too); version 3 stored each cut card's lightness
beside its chromaticity (``colours.cut_lightness``: a plain card of the cut card's hue but
far lighter or darker is no cut card); version 2 stored many views per glyph and the
suit colours relative to the paper, but the cut card by its hue alone. Older profiles
are refused with a message to learn the deck again.

A profile may hold camera settings only (``shoe-calibrate camera`` runs before
``learn``); :meth:`Profile.require_deck` says so clearly when a reader needs the deck.

Errors are :class:`ProfileError` naming the file, the problem and what to do.

>>> import tempfile, os
>>> p = Profile(camera={"exposure": 120})
>>> path = os.path.join(tempfile.mkdtemp(), "deck.profile.npz")
>>> save_profile(p, path)
>>> load_profile(path).camera
{'exposure': 120}
>>> load_profile(path + ".missing")
Traceback (most recent call last):
...
shoe_controller.vision.profile.ProfileError: ...: no such profile; run `shoe-calibrate learn ...`...
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "FORMAT",
    "PROFILE_VERSION",
    "Profile",
    "ProfileError",
    "load_profile",
    "save_profile",
    "update_camera_settings",
]

FORMAT = "smart-shoe-vision-profile"
#: Bumped whenever the meaning of a stored field changes; older files are refused.
PROFILE_VERSION = 4

#: Reader thresholds: a read needs both glyphs' best match (normalized correlation
#: with the nearest learned view) above ``min_score``, and by what sets the glyph apart
#: from the deck's average glyph, above ``min_distinct``; against each close rival, by
#: what sets the two apart, ``pair_margin`` nearer its own views than the rival's
#: (``index_reader._Templates``).
DEFAULT_THRESHOLDS: dict[str, float] = {
    "rank_min_score": 0.75,
    "rank_min_distinct": 0.55,
    "rank_pair_margin": 0.3,
    "suit_min_score": 0.75,
    "suit_min_distinct": 0.55,
    "suit_pair_margin": 0.2,
}


class ProfileError(Exception):
    """A profile that is missing, of another version, corrupt, or without a learned deck."""


@dataclass(frozen=True)
class Profile:
    """A calibration profile. ``rank_templates``/``suit_templates`` are None until a deck
    has been learned."""

    rank_templates: np.ndarray | None = None
    suit_templates: np.ndarray | None = None
    rank_labels: np.ndarray | None = None
    suit_labels: np.ndarray | None = None
    geometry: dict[str, Any] = field(default_factory=dict)
    colours: dict[str, Any] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    camera: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    created: str = ""
    version: int = PROFILE_VERSION

    @property
    def has_deck(self) -> bool:
        return self.rank_templates is not None and self.suit_templates is not None

    def require_deck(self, where: str = "profile") -> None:
        """Raise a clear error unless a deck has been learned into this profile."""
        if not self.has_deck:
            raise ProfileError(
                f"{where}: no deck learned into this profile yet (it holds camera settings "
                "only); run `shoe-calibrate learn --images DIR --out PROFILE` first"
            )

    def with_camera(self, **settings: Any) -> Profile:
        """A copy with camera settings merged in (``None`` removes a setting)."""
        camera = dict(self.camera)
        for key, value in settings.items():
            if value is None:
                camera.pop(key, None)
            else:
                camera[key] = value
        return replace(self, camera=camera)


def save_profile(profile: Profile, path: str | os.PathLike[str]) -> None:
    """Write ``profile`` to ``path`` atomically (a crash never leaves half a profile)."""
    path = Path(path)
    meta = {
        "format": FORMAT,
        "version": PROFILE_VERSION,
        "created": profile.created or datetime.now(UTC).isoformat(timespec="seconds"),
        "source": profile.source,
        "geometry": profile.geometry,
        "colours": profile.colours,
        "thresholds": profile.thresholds,
        "camera": profile.camera,
        "has_deck": profile.has_deck,
    }
    arrays: dict[str, np.ndarray] = {
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    }
    if profile.has_deck:
        arrays["rank_templates"] = np.asarray(profile.rank_templates, np.float32)
        arrays["suit_templates"] = np.asarray(profile.suit_templates, np.float32)
        arrays["rank_labels"] = np.asarray(profile.rank_labels, np.int16)
        arrays["suit_labels"] = np.asarray(profile.suit_labels, np.int16)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read a profile; :class:`ProfileError` if it is missing, of another version or
    corrupt."""
    path = Path(path)
    if not path.is_file():
        raise ProfileError(
            f"{path}: no such profile; run `shoe-calibrate learn --images DIR --out {path}` "
            "to make one (or check the path)"
        )
    corrupt = f"{path}: corrupt profile"
    redo = "; learn it again with `shoe-calibrate learn`"
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise ProfileError(f"{corrupt} (not a profile archive: {e}){redo}") from e
    if "meta" not in arrays:
        raise ProfileError(f"{corrupt} (no header){redo}")
    try:
        meta = json.loads(arrays["meta"].tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProfileError(f"{corrupt} (unreadable header: {e}){redo}") from e
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ProfileError(f"{path}: not a vision profile (format {meta.get('format')!r})"
                           if isinstance(meta, dict) else f"{corrupt} (bad header){redo}")
    version = meta.get("version")
    if version != PROFILE_VERSION:
        old = isinstance(version, int) and version < PROFILE_VERSION
        raise ProfileError(
            f"{path}: profile version {version!r}, this software reads version "
            f"{PROFILE_VERSION}"
            + (" (the index reader learns more of the deck now: since version 3 also how "
               "light the cut card is, since version 4 which ranks it prints alike)"
               if old else "")
            + "; learn the deck again with `shoe-calibrate learn --images DIR --out "
            f"{path}`"
        )
    ranks = arrays.get("rank_templates")
    suits = arrays.get("suit_templates")
    rank_labels = arrays.get("rank_labels")
    suit_labels = arrays.get("suit_labels")
    if meta.get("has_deck"):
        if ranks is None or suits is None or rank_labels is None or suit_labels is None:
            raise ProfileError(f"{corrupt} (templates missing){redo}")
        for name, t, lab, n in (("rank", ranks, rank_labels, 13), ("suit", suits, suit_labels, 4)):
            if t.ndim != 2 or lab.shape != (t.shape[0],):
                raise ProfileError(f"{corrupt} ({name} templates {t.shape} with labels "
                                   f"{lab.shape}){redo}")
            if set(np.unique(lab % n).tolist()) != set(range(n)):
                raise ProfileError(f"{corrupt} ({name} labels do not cover the {n} "
                                   f"{name}s){redo}")
        if not (np.isfinite(ranks).all() and np.isfinite(suits).all()):
            raise ProfileError(f"{corrupt} (templates hold non-finite values){redo}")
        for key in ("geometry", "colours"):
            if not isinstance(meta.get(key), dict) or not meta[key]:
                raise ProfileError(f"{corrupt} ({key} missing){redo}")
    else:
        ranks = suits = rank_labels = suit_labels = None
    thresholds = dict(DEFAULT_THRESHOLDS)
    thresholds.update(meta.get("thresholds") or {})
    return Profile(
        rank_templates=ranks,
        suit_templates=suits,
        rank_labels=rank_labels,
        suit_labels=suit_labels,
        geometry=dict(meta.get("geometry") or {}),
        colours=dict(meta.get("colours") or {}),
        thresholds=thresholds,
        camera=dict(meta.get("camera") or {}),
        source=str(meta.get("source", "")),
        created=str(meta.get("created", "")),
    )


def update_camera_settings(path: str | os.PathLike[str], **settings: Any) -> Profile:
    """Merge camera settings (ROI, exposure, focus, ...) into the profile at ``path``,
    creating a camera-only profile if there is none yet. Returns the saved profile.

    Values must be JSON values (numbers, strings, lists, dicts); ``None`` removes a key.
    """
    try:
        json.dumps(settings)
    except TypeError as e:
        raise ProfileError(f"camera settings must be JSON values: {e}") from e
    profile = load_profile(path) if Path(path).exists() else Profile()
    profile = profile.with_camera(**settings)
    save_profile(profile, path)
    return profile
