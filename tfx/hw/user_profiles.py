"""Profiles a user saved (the explorer's Hardware pane, ``w``): where they live, saving one.

A saved profile is a standalone TOML file (bases merged in, knobs applied) in the
user's profile folder: ``$TFX_USER_PROFILES`` when set, else
``$XDG_CONFIG_HOME/tfx/hw_profiles`` (``~/.config/tfx/hw_profiles``). ``tfx hw
list`` lists them after the shipped ones and ``--hw NAME`` loads them by name
(``tfx.hw.profile`` looks here after the shipped folder), so a name may not shadow a
shipped profile. Files are written through ``tfx.files`` (atomic: a failed write
leaves an earlier file as it was).
"""

from __future__ import annotations

import os
from pathlib import Path

from tfx.errors import TfxError

PROFILE_SUFFIX = ".toml"


def user_profiles_dir() -> Path:
    base = os.environ.get("TFX_USER_PROFILES")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "tfx" / "hw_profiles"


def list_user_profiles() -> list[str]:
    """Names of the saved profiles, sorted ([] when the folder does not exist)."""
    try:
        return sorted(p.stem for p in user_profiles_dir().glob(f"*{PROFILE_SUFFIX}") if p.is_file())
    except OSError:
        return []


def user_profile_path(name: str) -> Path | None:
    """The saved profile file called ``name``, or None."""
    path = user_profiles_dir() / f"{name}{PROFILE_SUFFIX}"
    return path if path.is_file() else None


def check_profile_name(name: str) -> None:
    from tfx.hw.profile import list_profiles
    if not name or not all(c.isalnum() or c in "-_" for c in name):
        raise TfxError(f"profile name {name!r}: use letters, digits, - and _")
    if name in list_profiles():
        raise TfxError(f"profile name {name!r} is a shipped profile; choose another name")


def save_user_profile(profile, name: str, directory: Path | None = None) -> Path:
    """Write ``profile`` (knobs applied) as ``<dir>/<name>.toml`` (the user's profile folder
    by default) and return the path. Refuses a name that would shadow a shipped profile and
    never writes inside the shipped ``hw_profiles/``."""
    from tfx.files import write_text_atomic
    from tfx.hw.profile import profiles_dir
    check_profile_name(name)
    directory = Path(directory) if directory is not None else user_profiles_dir()
    try:
        if directory.resolve() == profiles_dir().resolve():
            raise TfxError("refusing to write into the shipped hw_profiles/ folder")
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TfxError(f"cannot save profile: {exc.strerror or exc}", where=str(directory)) from None
    text = profile.to_toml(name=name, description=f"{profile.description} (edited in tfx open)")
    target = directory / f"{name}{PROFILE_SUFFIX}"
    write_text_atomic(target, text, what="the profile")
    return target
