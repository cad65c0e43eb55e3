"""Hold some of a GPU's SMs idle while a launch is timed, so that the launch runs on fewer SMs, each with a larger
share of the device's DRAM bandwidth.

Why: an H100 SXM5 gives each of its 132 SMs 22.4 B/ns of DRAM bandwidth, an H200 32.1; held to 92 SMs, the H100's
2,958 GB/s (its copy rate) come to 32.2 B/ns a SM, the H200's share. A row kernel's CTA then moves its bytes in the
H200's time while its compute and latencies stay the same SM's, which is what decides whether its chain shows above its
DRAM time (docs/analysis.md, "The later load rounds at every CTA count"). It is no H200: its DRAM latency and L2 are
the H100's, and 40 SMs' L2 ports sit idle.

How: ``blocked(n)`` launches n CTAs of one warp on a stream of their own, each holding the largest dynamic shared memory
a CTA may take (227 KB on sm_90; with the 1 KB the driver reserves a CTA, all 228 KB of an SM), so that no other CTA
fits beside it and each lands on an SM of its own; they spin on a flag in global memory until the block exits. The
launch (Triton's launcher of a compiled ``spin``, its shared memory raised before its module loads) is the only hack.

Inside the block nothing may wait for the whole device: no ``torch.cuda.synchronize()`` (nor
``triton.testing.do_bench``, which calls it), no first launch of a kernel (its module load), no allocation that frees.
Time with CUDA events on a stream of your own and ``Event.synchronize()``; compile and allocate before entering.
"""
import contextlib
import copy
import time

import torch
import triton
import triton.language as tl


@triton.jit
def spin(FLAG, COUNT):
    """One warp: count itself in, then wait for FLAG."""
    tl.atomic_add(COUNT, 1)
    while tl.load(FLAG, volatile=True) == 0:
        pass


def _spinner(flag, count, smem_bytes):
    """A copy of the compiled ``spin`` that launches with ``smem_bytes`` of dynamic shared memory."""
    k = spin.warmup(flag, count, grid=(1,), num_warps=1)
    if hasattr(k, "result"):        # an asynchronous compile hands back a future
        k = k.result()
    big = copy.copy(k)
    big.metadata = k.metadata._replace(shared=smem_bytes)
    big.packed_metadata = (big.metadata.num_warps, big.metadata.num_ctas, smem_bytes)
    big.module = big.function = big._run = None
    big._init_handles()
    return big


def max_dynamic_smem() -> int:
    """The largest dynamic shared memory one CTA may take on this device (opt-in)."""
    from triton.runtime import driver
    return driver.active.utils.get_device_properties(torch.cuda.current_device())["max_shared_mem"]


@contextlib.contextmanager
def blocked(n_sms: int, wait_s: float = 5.0):
    """Hold ``n_sms`` SMs with spinning CTAs for the body of the ``with``; yields the number that started (all n, or
    the block raises). The flag is set on the way out whatever happens. ``n_sms`` 0: nothing is held (the body runs
    on every SM, timed the same way)."""
    if n_sms <= 0:
        yield 0
        return
    flag = torch.zeros(1, device="cuda", dtype=torch.int32)
    count = torch.zeros(1, device="cuda", dtype=torch.int32)
    k = _spinner(flag, count, max_dynamic_smem())
    torch.cuda.synchronize()
    spin_stream, side = torch.cuda.Stream(), torch.cuda.Stream()
    host = torch.zeros(1, dtype=torch.int32).pin_memory()
    with torch.cuda.stream(spin_stream):
        k[(n_sms, 1, 1)](flag, count)
    try:
        t0 = time.time()
        started = 0
        while time.time() - t0 < wait_s:
            with torch.cuda.stream(side):
                host.copy_(count, non_blocking=True)
                done = torch.cuda.Event()
                done.record(side)
            done.synchronize()
            started = int(host[0])
            if started >= n_sms:
                break
            time.sleep(0.001)
        if started < n_sms:
            raise RuntimeError(f"{started} of {n_sms} blocking CTAs started within {wait_s} s")
        yield started
    finally:
        with torch.cuda.stream(side):
            flag.fill_(1)
        spin_stream.synchronize()
        torch.cuda.synchronize()


def event_ms(fn, stream, reps=5, warmups=1):
    """Median ms of ``reps`` calls of ``fn`` on ``stream``, each between two CUDA events (no device-wide sync)."""
    times = []
    with torch.cuda.stream(stream):
        for i in range(warmups + reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(stream)
            fn()
            e.record(stream)
            e.synchronize()
            if i >= warmups:
                times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def time_held(n_sms, fns, log=print):
    """ms of each of ``fns`` (callables that launch) with ``n_sms`` SMs held: each launched once on a stream of its
    own before any SM is held (no first launch, no module load inside the block), then timed there by ``event_ms``
    in turn."""
    stream = torch.cuda.Stream()
    for fn in fns:
        with torch.cuda.stream(stream):
            fn()
    torch.cuda.synchronize()
    with blocked(n_sms) as held:
        log("holding", held, "SMs idle")
        return [event_ms(fn, stream) for fn in fns]
