"""The k-loop measure_mlp.py times (and measure_kloop.py's addressing), importable without torch so that
bench/h200/mlp_load_rounds.py can compile it on the CPU: tl.load of an A [BM, BK] and a B [BK, BN] tile a trip,
tl.dot into f32; CTA j reads A rows j * a_rows_per_cta .. and B columns j * b_cols_per_cta .., K wrapping at KRES.
"""
import os

import triton
import triton.language as tl

from clock_stamps import smid

# MLP_CACHE=.cg: the loads skip L1 (a 1-stage loop's tl.load is an L1-allocating ld.global; with
# K wrapping, a CTA would re-read its own tiles from L1, which a GEMM never does)
CACHE_MOD = tl.constexpr(os.environ.get("MLP_CACHE", ""))


@triton.jit
def kloop_kernel(a_ptr, b_ptr, c_ptr, sm_ptr, K, KRES, a_rows_per_cta, b_cols_per_cta, lda, ldb,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, RECORD_SM: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_base = a_ptr + (pid * a_rows_per_cta + offs_m[:, None]).to(tl.int64) * lda + offs_k[None, :]
    b_base = b_ptr + offs_k[:, None].to(tl.int64) * ldb + pid.to(tl.int64) * b_cols_per_cta + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        # the hint keeps A 16-byte aligned for cp.async (measure_kloop.py: without it A's load
        # is not pipelined)
        kk = tl.multiple_of((k * BK) % KRES, BK)
        a = tl.load(a_base + kk, cache_modifier=CACHE_MOD)
        b = tl.load(b_base + kk.to(tl.int64) * ldb, cache_modifier=CACHE_MOD)
        acc = tl.dot(a, b, acc)
    offs_cm = pid.to(tl.int64) * BM + offs_m
    tl.store(c_ptr + offs_cm[:, None] * BN + offs_n[None, :], acc.to(c_ptr.dtype.element_ty))
    if RECORD_SM:
        tl.store(sm_ptr + pid, smid(pid))
