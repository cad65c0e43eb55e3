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


@pytest.fixture(autouse=True)
def _text_as_a_pipe_gets_it(monkeypatch):
    """Text outputs as a pipe gets them, every line whole (tfx.cli.common.text_width is None),
    unless a test sets COLUMNS itself (tests/test_text_width.py, the tutorial's 80 columns):
    pytest-xdist's workers set COLUMNS=80, so a report's lines differed between -n 0 and -n 2.
    Set, then deleted: the process environment may hold a COLUMNS that os.environ does not list
    (put there by os.putenv; a subprocess inherits it), and deleting what os.environ lists
    unsets it there too."""
    monkeypatch.setenv("COLUMNS", "0")
    monkeypatch.delenv("COLUMNS")
