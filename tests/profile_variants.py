"""Profiles equal to a bundled one less some facts, for the tests of what the model does
without a fact ("a Hopper part that states no launch.cta_interval").

``without("h100_sxm", "launch.cta_interval")`` writes the merged profile
(``Profile.to_toml``: bases merged in) with the named facts' lines removed to a file of its
own and loads it with ``load_profile``: the same loader, schema check and completeness check as
a bundled profile, every other fact and setting as the bundled one states it. A named path the
profile does not state is refused (a test of "without X" on a profile already without X could
not fail when X comes back), and the result is checked to differ from the bundled profile by
exactly the named facts.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Mapping

from tfx.hw import load_profile
from tfx.hw.profile import Profile


def _remove_facts(text: str, paths: tuple[str, ...]) -> str:
    """``to_toml``'s text less the lines of ``paths`` (each ``table.key``: the ``key = ...`` line
    under the ``[table]`` header, or at the top for a key without a table)."""
    wanted = {}
    for path in paths:
        table, _, key = path.rpartition(".")
        wanted.setdefault(table, set()).add(key)
    kept, removed, table = [], set(), ""
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            table = line[1:-1]
        else:
            key = line.split(" = ", 1)[0]
            if " = " in line and key in wanted.get(table, ()):
                removed.add(f"{table}.{key}" if table else key)
                continue
        kept.append(line)
    missing = sorted(set(paths) - removed)
    if missing:
        raise AssertionError(f"no line states {', '.join(missing)}")
    return "\n".join(kept) + "\n"


@functools.lru_cache(maxsize=None)
def _variant_file(name: str, paths: tuple[str, ...]) -> Path:
    """The file of ``name`` less ``paths``, written once a process (a folder of its own that
    outlives the test: a loaded Profile may read its file again, ``Profile.source_files``)."""
    text = _remove_facts(load_profile(name).to_toml(), paths)
    folder = Path(tempfile.mkdtemp(prefix=f"tfx_{name}_without_"))
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def without(name: str, *paths: str, knobs: Mapping[str, str | float | int] | None = None) -> Profile:
    """The bundled profile ``name`` (named as it is, ``name``) less the facts at ``paths``
    (canonical spellings: ``memory.gmem.read_efficiency``, not ``memory.hbm...``), then
    ``knobs`` applied as ``load_profile`` applies them."""
    if not paths:
        raise ValueError("name the facts to remove")
    bundled = load_profile(name)
    for path in paths:
        if not bundled.has(path) or bundled.canonical_path(path) != path:
            raise AssertionError(f"{name} states no {path} (as spelled): nothing to remove")
    profile = load_profile(_variant_file(name, tuple(sorted(paths))))
    # every other entry as the bundled profile states it, the named ones gone
    assert profile.name == name
    assert not any(profile.has(p) for p in paths)
    assert dict(profile.entries()) == {p: e for p, e in bundled.entries() if p not in paths}
    return profile.with_knobs(knobs) if knobs else profile
