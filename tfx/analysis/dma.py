"""DMA descriptors: how many contiguous runs a window of a row-major tensor is.

A DMA engine with `dma.channels` moves a tile as one descriptor per contiguous run of
its global window: a block of whole rows is one run (trailing whole axes coalesce), a
tile narrower than its rows is one run per row. The analysis charges each descriptor a
channel for its transfer (and, with ``dma.hold_channel_for_round_trip``, the memory
round trip); the simulator queues them on the channels one by one. Both count here.

Works on ints and on numpy arrays of parameter values (sweeps).
"""

from __future__ import annotations

from typing import Any

from tfx.analysis.numbers import if_else, is_array


def contiguous_run_bytes(window, dims, env, bits) -> Any:
    """Bytes of one contiguous run of ``window`` (its elements of ``bits`` over
    ``contiguous_runs``); None when an extent cannot be evaluated."""
    total = 1
    for ax, full in zip(window.axes, dims):
        if ax.kind == "full":
            total = total * full
        else:
            try:
                total = total * ax.size.evaluate(env)
            except Exception:  # an extent that depends on an index
                return None
    return total * bits / 8 / contiguous_runs(window, dims, env)


def contiguous_runs(window, dims, env) -> Any:
    """Runs of ``window`` (a ``tfx.ir.nodes.Window``) over a tensor of shape ``dims``
    (evaluated extents), parameters ``env``: the product of the window's extents before
    its innermost axis that does not span its whole tensor axis. 1 for a gather (one
    indexed transfer) or when an extent cannot be evaluated."""
    sizes, whole = [], []
    for ax, full in zip(window.axes, dims):
        if ax.kind == "full":
            sizes.append(full)
            whole.append(True)
        elif ax.kind == "gather":
            return 1
        else:
            try:
                size = ax.size.evaluate(env)
            except Exception:  # an extent that depends on an index: no run count from it
                return 1
            sizes.append(size)
            whole.append(False if ax.stride is not None else size >= full)
    # Axis i is the run's axis when it is not whole (or is the first) and every later one is.
    runs = 0
    later_whole = True
    prefix = [1]                  # product of the extents before axis i
    for s in sizes[:-1]:
        prefix.append(prefix[-1] * s)
    for i in range(len(sizes) - 1, -1, -1):
        if is_array(later_whole, whole[i]):
            import numpy as np
            here = later_whole if i == 0 else np.logical_and(later_whole, np.logical_not(whole[i]))
            later_whole = np.logical_and(later_whole, whole[i])
        else:
            here = later_whole if i == 0 else (later_whole and not whole[i])
            later_whole = later_whole and whole[i]
        runs = runs + if_else(here, prefix[i], 0)
    return runs if is_array(runs) else max(int(runs), 1)
