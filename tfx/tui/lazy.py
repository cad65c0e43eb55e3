"""Modules loaded at their first use, not when the explorer starts.

The kernel explorer's first frame needs Textual and its own widgets; its headless core
(the job and outcome types: a dozen dataclasses, each compiling generated methods as it
is defined) and the presentation layer are first used by the first analysis, which runs
after that frame. ``importlib.util.LazyLoader`` runs a module when one of its attributes
is first read, so ``core.run_job(...)`` in a method imports ``tfx.tui.core`` then.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, executed when an attribute of it is first read (at once if it
    was imported already). It is in ``sys.modules`` and on its package as an import puts
    it, so ``import``, ``from ... import`` and pickle find this same module."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module
