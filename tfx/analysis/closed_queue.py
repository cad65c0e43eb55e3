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

from tfx.analysis.numbers import emax, emin, is_array, where


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


def cycle_ns_servers(resident, services: Sequence[Any], servers: Sequence[Any], delay):
    """``cycle_ns`` where station s has ``servers[s]`` = c identical servers, each serving one
    customer at 1 / c of the station's rate: a customer alone takes c x D_s, c or more share the
    whole station at one completion per D_s (a load-dependent station, mu(j) = min(j, c) / (c x
    D_s)), solved by exact mean value analysis with the stations' marginal queue-length
    probabilities (Reiser and Lavenberg 1980, section 4; Lazowska et al. 1984, ch. 20.3):

        R_s(n) = sum_{j=1..n} j / mu_s(j) x p_s(j-1 | n-1)
        X(n) = n / (sum_s R_s(n) + delay)
        p_s(j | n) = X(n) / mu_s(j) x p_s(j-1 | n-1) (j >= 1),   p_s(0 | n) = 1 - sum_j p_s(j | n)

    Arrays elementwise (resident, demands and servers); c = 1 everywhere is ``cycle_ns``."""
    def per(s, j):
        # 1 / mu_s(j): the time per completion with j customers present
        c = servers[s]
        return services[s] * c / emin(j, c)

    if is_array(resident):
        import numpy as np
        n_max = int(np.max(resident))
    else:
        n_max = int(resident)
    k = len(services)
    probs = [[1] for _ in range(k)]      # p_s(j | n-1), j = 0..n-1
    out = sum(services) + delay
    for n in range(1, max(n_max, 1) + 1):
        responses = []
        for s in range(k):
            r = 0
            for j in range(1, n + 1):
                r = r + j * per(s, j) * probs[s][j - 1]
            responses.append(r)
        cycle = sum(responses) + delay
        x = n / emax(cycle, 1e-30)
        for s in range(k):
            new = [0] * (n + 1)
            for j in range(1, n + 1):
                new[j] = x * per(s, j) * probs[s][j - 1]
            new[0] = emax(1 - sum(new[1:]), 0)
            probs[s] = new
        if is_array(resident, cycle):
            out = where(resident == n, cycle, out)
        elif resident == n:
            out = cycle
    return out
