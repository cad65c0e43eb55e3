"""The cycle time of a closed queueing network by exact mean value analysis.

r customers each cycle through some queueing stations (a service demand D_s at each) and a
delay Z no station serves. With Q_s(0) = 0, for n = 1..r (Reiser and Lavenberg, "Mean-Value
Analysis of Closed Multichain Queuing Networks", JACM 27(2), 1980; Lazowska et al.,
"Quantitative System Performance", 1984, ch. 6):

    R_s(n) = D_s x (1 + Q_s(n-1))
    cycle(n) = sum_s R_s(n) + Z
    Q_s(n) = n x R_s(n) / cycle(n)

cycle(r) is the time in which each customer completes one cycle. Its asymptotes are
max(r x max_s D_s, sum_s D_s + Z). Used by the row kernels' memory pipe
(tfx.analysis.row_body: one station) and by the attention chains of co-resident CTAs
(tfx.analysis.chain_overlap: the tensor and SIMT stations).
"""

from __future__ import annotations

from typing import Any, Sequence

from tfx.analysis.numbers import emax, is_array, where


def cycle_ns(resident, services: Sequence[Any], delay, deterministic=False):
    """ns of cycle(resident) of ``resident`` customers over ``services`` (one demand per
    station) and ``delay``; arrays elementwise. Where ``resident`` < 1: one customer's cycle.
    ``deterministic``: the stations serve each customer in a fixed time, so the customer found
    in service holds a station for half its demand on average, not a whole one (the residual
    of a deterministic server: R_s(n) = D_s x (1 + Q_s(n-1) - U_s(n-1) / 2), U_s(n-1) =
    X(n-1) x D_s; Lazowska et al. 1984, ch. 7; Reiser 1981)."""
    if is_array(resident):
        import numpy as np
        n_max = int(np.max(resident))
    else:
        n_max = int(resident)
    queues = [0] * len(services)
    out = sum(services) + delay
    throughput = 0
    for n in range(1, max(n_max, 1) + 1):
        if deterministic:
            responses = [d * (1 + q - throughput * d / 2) for d, q in zip(services, queues)]
        else:
            responses = [d * (1 + q) for d, q in zip(services, queues)]
        cycle = sum(responses) + delay
        throughput = n / emax(cycle, 1e-30)
        queues = [throughput * rs for rs in responses]
        if is_array(resident, cycle):
            out = where(resident == n, cycle, out)
        elif resident == n:
            out = cycle
    return out
