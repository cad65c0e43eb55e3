"""The end of a ``tfx`` process without freeing what a command leaves behind.

``tfx simulate --full --json`` on gemm 4096^3 ends holding 199,680 event tuples and their
~400,000 numbers; freeing them one by one by reference counting, then the interpreter's
teardown, cost ~25-35 ms of CPU (~4% of the command) for memory the operating system
takes back at once when the process exits. A command hands such a result to
:func:`keep_until_exit`; :func:`entry` (the ``tfx`` console script and ``python -m
tfx.cli.main``) then flushes stdout and stderr and ends the process with ``os._exit``.
Called in-process (``tfx.cli.main.main``: tests, benches), nothing is kept and nothing
changes: :func:`keep_until_exit` keeps only in a process that :func:`entry` started.
"""

from __future__ import annotations

import os
import sys

_kept: list | None = None          # a list only in a process that entry() runs


def keep_until_exit(obj) -> None:
    """Leave ``obj`` alive to the end of the process (see the module doc). The objects
    alive now are moved out of the cyclic collector's sight (``gc.freeze``, O(1)): it
    would otherwise scan them all again at its next collection before the process ends."""
    if _kept is not None:
        import gc
        _kept.append(obj)
        gc.freeze()


def entry() -> None:
    """``main()`` as the process: its exit status, without freeing a kept result."""
    global _kept
    from tfx.cli.main import main

    _kept = []
    rc = main()
    if not _kept:
        sys.exit(rc)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:        # `tfx ... | head`: as main(), not an error
        pass
    os._exit(rc)
