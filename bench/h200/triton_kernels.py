"""Triton kernels that more than one H200 measurement script times (bench/h200/measure*.py).

Imported only where triton is installed (measure_accuracy.py --plan runs without it). Each
kernel follows a tile file of kernels/; its comment names the mesh.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  CACHE: tl.constexpr = ""):
    # kernels/gemm.tile: mesh cta[cdiv(M, BM), cdiv(N, BN)] swizzle(GROUP_M); K loop STAGES deep
    # (Triton tutorial 03, matrix multiplication: one CTA per BLOCK_M x BLOCK_N tile). CACHE: the loads'
    # cache modifier, "" (Triton's default, every campaign) unless a measurement asks (measure_sync_cache.py)
    pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0, cache_modifier=CACHE)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0, cache_modifier=CACHE)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def flash_fwd_kernel(Q, K, V, O, LSE, qk_scale, S, D: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # kernels/flash_prefill.tile (CAUSAL) / flash_attention.tile: mesh cta[cdiv(S, BLOCK_M), B * H]
    pm = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh.to(tl.int64) * S * D
    offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + base + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    if CAUSAL:
        n_trips = tl.minimum(tl.cdiv((pm + 1) * BLOCK_M, BLOCK_N), tl.cdiv(S, BLOCK_N))
        n_full = (pm * BLOCK_M) // BLOCK_N
    else:
        n_trips = tl.cdiv(S, BLOCK_N)
        n_full = n_trips
    for j in range(0, n_full):
        n = j * BLOCK_N + offs_n
        k = tl.load(K + base + n[:, None] * D + offs_d[None, :])
        s = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + n[:, None] * D + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    if CAUSAL:
        for j in range(n_full, n_trips):
            n = j * BLOCK_N + offs_n
            k = tl.load(K + base + n[:, None] * D + offs_d[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where(offs_m[:, None] >= n[None, :], s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(V + base + n[:, None] * D + offs_d[None, :])
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new
    o = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * D + offs_d[None, :], o.to(O.dtype.element_ty))
    tl.store(LSE + bh.to(tl.int64) * S + offs_m, m_i + tl.log2(l_i))


# SPLITS, HKV, G only index rows (times the constexpr D): no value specialisation, fewer compiles
@triton.jit(do_not_specialize=["SPLITS", "HKV", "G"])
def decode_split_kernel(Q, Kc, Vc, OP, MLP, qk_scale, SKV, SPLIT_LEN, SPLITS, HKV, G,
                        GP: tl.constexpr, D: tl.constexpr, BLOCK_N: tl.constexpr):
    # kernels/gqa_decode.tile launch 1: mesh cta[B * HKV, SPLITS] as (bh, sp)
    bh = tl.program_id(0)
    sp = tl.program_id(1)
    offs_g = tl.arange(0, GP)
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, BLOCK_N)
    gmask = offs_g < G
    q = tl.load(Q + (bh * G + offs_g)[:, None] * D + offs_d[None, :], mask=gmask[:, None], other=0.0)
    kv_base = bh.to(tl.int64) * SKV * D
    start = sp * SPLIT_LEN
    n_trips = tl.minimum(SPLIT_LEN // BLOCK_N, tl.cdiv(tl.maximum(SKV - start, 0), BLOCK_N))
    m_i = tl.full([GP], float("-inf"), tl.float32)
    l_i = tl.zeros([GP], tl.float32)
    acc = tl.zeros([GP, D], tl.float32)
    for j in range(0, n_trips):
        n = start + j * BLOCK_N + offs_n
        nmask = n < SKV
        k = tl.load(Kc + kv_base + n[:, None] * D + offs_d[None, :], mask=nmask[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(nmask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(Vc + kv_base + n[:, None] * D + offs_d[None, :], mask=nmask[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    row = (bh * SPLITS + sp) * G + offs_g
    tl.store(OP + row[:, None] * D + offs_d[None, :], acc, mask=gmask[:, None])
    tl.store(MLP + row * 2, m_i, mask=gmask)
    tl.store(MLP + row * 2 + 1, l_i, mask=gmask)


@triton.jit(do_not_specialize=["G"])
def decode_merge_kernel(OP, MLP, O, G, SPLITS: tl.constexpr, GP: tl.constexpr, D: tl.constexpr):
    # kernels/gqa_decode.tile launch 2: mesh cta[B * HKV] as (bh)
    bh = tl.program_id(0)
    offs_s = tl.arange(0, SPLITS)
    offs_g = tl.arange(0, GP)
    offs_d = tl.arange(0, D)
    gmask = offs_g < G
    rows = (bh * SPLITS + offs_s[:, None]) * G + offs_g[None, :]
    m = tl.load(MLP + rows * 2, mask=gmask[None, :], other=0.0)
    l = tl.load(MLP + rows * 2 + 1, mask=gmask[None, :], other=0.0)
    m_max = tl.max(m, 0)
    w = tl.exp2(m - m_max[None, :])
    l_tot = tl.sum(l * w, 0)
    acc = tl.zeros([GP, D], tl.float32)
    for s in range(0, SPLITS):
        r = (bh * SPLITS + s) * G + offs_g
        ms = tl.load(MLP + r * 2, mask=gmask, other=0.0)
        ws = tl.exp2(ms - m_max)
        o = tl.load(OP + r[:, None] * D + offs_d[None, :], mask=gmask[:, None], other=0.0)
        acc += o * ws[:, None]
    out = acc / l_tot[:, None]
    tl.store(O + (bh * G + offs_g)[:, None] * D + offs_d[None, :], out.to(O.dtype.element_ty), mask=gmask[:, None])


@triton.jit
def persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    # kernels/persistent_gemm.tile: mesh cta[min(NUM_SMS, TILES)]; tiles t = sm, sm + CTAS, ...
    start = tl.program_id(0)
    ctas = tl.num_programs(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
    offs_k = tl.arange(0, BLOCK_K)
    for t in range(start, tiles, ctas):
        pid_m = t // num_pid_n
        pid_n = t % num_pid_n
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def rmsnorm_kernel(X, W, Y, M, N, inv_n, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # kernels/rmsnorm.tile: mesh cta[cdiv(M, BLOCK_M)]; whole rows in registers
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, 1) * inv_n + eps)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * inv[:, None] * w[None, :]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def softmax_kernel(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # kernels/softmax.tile: mesh cta[cdiv(M, BLOCK_M)]; whole rows in registers
    pm = tl.program_id(0)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(X + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 1)[:, None])
    y = e * (1.0 / tl.sum(e, 1))[:, None]
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def grouped_tile(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this CTA in the grouped launch order (Triton tutorial 03's, kernels/*.tile's
    swizzle(GROUP_M)): GROUP_M tile rows a group, the group's column-major walk. Inlined: matmul_kernel's SASS is
    byte-identical to its own copy of these lines (Triton 3.6.0, sm_90, three tiles compiled offline)."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    return first_pid_m + ((pid % num_pid_in_group) % group_size_m), (pid % num_pid_in_group) // group_size_m


@triton.jit
def w4a16_kernel(a_ptr, w_ptr, s_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, GROUP: tl.constexpr):
    # kernels/gemm_w4a16.tile: mesh cta[cdiv(M, BM), cdiv(N, BN)] swizzle(GROUP_M); K loop STAGES deep. A bf16 [M, K];
    # W 4-bit [K, N] packed two to a byte along N (uint8 [K, N / 2]: W[k, 2j] the low nibble of byte (k, j), W[k, 2j + 1]
    # the high), a code c standing for (c - 8) x its scale; W_SCALE bf16 [K / GROUP, N], one scale per GROUP rows of a
    # column. Each trip dequantizes its W tile in registers (cast, multiply by the broadcast scale) before the bf16 dot.
    # M, N, K multiples of BLOCK_M, BLOCK_N, BLOCK_K (the campaign's shapes are), BLOCK_K a multiple of GROUP.
    pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    offs_bytes = pid_n * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] * (N // 2) + offs_bytes[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        packed = tl.load(w_ptrs)
        low = (packed & 0xF).to(tl.float32)
        high = (packed >> 4).to(tl.float32)
        codes = tl.reshape(tl.join(low, high), (BLOCK_K, BLOCK_N)) - 8.0
        if BLOCK_K == GROUP:
            # one scale row a trip (no arange of one element)
            scale = tl.load(s_ptr + k * N + offs_n).to(tl.float32)
            w = (codes * scale[None, :]).to(tl.bfloat16)
        else:
            offs_g = k * (BLOCK_K // GROUP) + tl.arange(0, BLOCK_K // GROUP)
            scale = tl.load(s_ptr + offs_g[:, None] * N + offs_n[None, :]).to(tl.float32)
            w = tl.reshape(tl.reshape(codes, (BLOCK_K // GROUP, GROUP, BLOCK_N)) * scale[:, None, :],
                           (BLOCK_K, BLOCK_N)).to(tl.bfloat16)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * (N // 2)
    c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def w8a16_kernel(a_ptr, w_ptr, s_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # kernels/gemm_w8a16.tile: mesh cta[cdiv(M, BM), cdiv(N, BN)] swizzle(GROUP_M); K loop STAGES deep. A bf16 [M, K],
    # W fp8 e4m3 [K, N] converted to bf16 in registers before the bf16 dot, W_SCALE bf16 [1, N] (one scale a column)
    # applied to the bf16 output tile. M, N, K multiples of BLOCK_M, BLOCK_N, BLOCK_K (the campaign's shapes are).
    pid_m, pid_n = grouped_tile(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        w = tl.load(w_ptrs).to(tl.bfloat16)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * N
    scale = tl.load(s_ptr + offs_n)
    c = acc.to(tl.bfloat16) * scale[None, :]
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c.to(c_ptr.dtype.element_ty))
