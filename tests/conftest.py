"""Shared test set-up: every test sees an empty folder of user-saved profiles.

``tfx hw list`` and ``--hw NAME`` also read the profiles a user saved from the
explorer (``$TFX_USER_PROFILES``, else ``~/.config/tfx/hw_profiles``); a test must
not depend on what the person running it has saved, nor write there.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_user_profiles(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("TFX_USER_PROFILES", str(tmp_path_factory.mktemp("user_profiles")))
