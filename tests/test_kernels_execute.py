"""Every shipped kernel, executed at small sizes (tfx run's executor), against a numpy
reference written here in float64 from the same (dtype-rounded) inputs, at two or more
sizes each; and each composite kernel against its single-op twin.

The tolerance is the one `tfx run` derives from the kernel's dtypes (tfx.execute.check):
rtol = 4 x eps(bf16) + n x eps(f32) = 1/32 + n x 2^-23 for every kernel here (they all
round to bf16 somewhere and accumulate in f32; n is the largest tensor extent), element i
passing when |got - want| <= rtol (|want| + rms(want)).
"""

from __future__ import annotations

import numpy as np
import pytest

from tfx.execute import accumulation_terms, check_outputs, derived_rtol, execute, rounding_dtypes
from tfx.hw import load_profile
from tfx.lang import parse_file

LOG2E = 1.0 / np.log(2.0)

# sip's kernels size their meshes by the chip (let CUBES = units(cube)): 8 cubes of 8 PEs
SIP = load_profile("sip")


def run_and_check(path, kernel, sizes, reference, inputs=None, seed=0, profile=None):
    module = parse_file(path)
    k = module.kernel(kernel)
    result = execute(module, k, sizes, seed=seed, inputs=inputs, profile=profile)
    x = {n: v.astype(np.float64) if v.dtype.kind == "f" else v for n, v in result.inputs.items()}
    expected = reference(x, result.params)
    n = accumulation_terms(result.tensors)
    rtol = derived_rtol(rounding_dtypes(module, k), n)
    assert rtol == 1 / 32 + n * 2.0 ** -23
    checks = check_outputs(result, expected, rtol)
    bad = [(c.name, c.worst_index, c.got, c.want, c.max_abs) for c in checks if not c.passed]
    assert not bad, bad
    return result


def gemm_ref(x, p):
    return {"C": x["A"] @ x["B"]}


@pytest.mark.parametrize("sizes", [
    {"M": 256, "N": 256, "K": 256},
    # Tails: 160 is not a multiple of BM = BN = 64, and 96 not of BK = 64 (masked windows).
    {"M": 160, "N": 96, "K": 96, "BM": 64, "BN": 64, "BK": 64},
])
def test_gemm(sizes):
    run_and_check("kernels/gemm.tile", None, sizes, gemm_ref)


@pytest.mark.parametrize("sizes", [
    # 16 tiles of 64 x 64 over 5 CTAs: CTA 0 runs 4 tiles (0, 5, 10, 15), the others 3.
    {"M": 256, "N": 256, "K": 128, "BM": 64, "BN": 64, "NUM_SMS": 5},
    {"M": 128, "N": 512, "K": 64, "BM": 64, "BN": 128, "BK": 32, "NUM_SMS": 3},
])
def test_persistent_gemm(sizes):
    run_and_check("kernels/persistent_gemm.tile", None, sizes, gemm_ref)


@pytest.mark.parametrize("sizes", [
    {"M": 256, "N": 256, "K": 256, "TM": 64, "TN": 64, "TK": 64},
    {"M": 64, "N": 1024, "K": 128, "TM": 32, "TN": 128, "TK": 32},
])
def test_sip_gemm(sizes):
    run_and_check("kernels/sip_gemm.tile", None, sizes, gemm_ref, profile=SIP)


@pytest.mark.parametrize("sizes", [
    # K / 8 cubes = 256 per cube, 4 TK steps each; the cubes' partials meet in the all-reduce.
    {"M": 64, "N": 256, "K": 2048, "TK": 64},
    {"M": 128, "N": 128, "K": 1024, "TM": 128, "TN": 64, "TK": 128},
])
def test_split_k_gemm(sizes):
    run_and_check("kernels/sip_splitk_gemm.tile", None, sizes, gemm_ref, profile=SIP)


def test_split_k_against_the_plain_gemm():
    """The split-K kernel and sip_gemm on the same A, B: f32 partial sums in a different
    order, rounded to bf16 once: within the derived tolerance."""
    sizes = {"M": 64, "N": 256, "K": 2048, "TM": 64, "TN": 128, "TK": 64}
    split = parse_file("kernels/sip_splitk_gemm.tile")
    plain = parse_file("kernels/sip_gemm.tile")
    a = execute(split, split.kernel(), sizes, profile=SIP)
    b = execute(plain, plain.kernel(), sizes, inputs=a.inputs, profile=SIP)
    rtol = derived_rtol(rounding_dtypes(split, split.kernel()) | rounding_dtypes(plain, plain.kernel()),
                        accumulation_terms(a.tensors, b.tensors))
    (c,) = check_outputs(a, b.outputs(), rtol)
    assert c.passed, c


@pytest.mark.parametrize("sizes", [{"N": 8192, "BLOCK": 1024}, {"N": 5000, "BLOCK": 512}])
def test_copy(sizes):
    """Y = X exactly (5000 is not a multiple of 512: the last block's tail is masked)."""
    module = parse_file("kernels/copy.tile")
    r = execute(module, module.kernel(), sizes)
    assert np.array_equal(r.tensors["Y"], r.inputs["X"])


def softmax_ref(x, p):
    s = x["X"] - x["X"].max(axis=1, keepdims=True)
    e = np.exp(s)
    return {"Y": e / e.sum(axis=1, keepdims=True)}


@pytest.mark.parametrize("sizes", [{"M": 64, "N": 256}, {"M": 30, "N": 1000, "BLOCK_M": 4}])
def test_softmax(sizes):
    run_and_check("kernels/softmax.tile", None, sizes, softmax_ref)


def rmsnorm_ref(x, p):
    xs = x["X"]
    inv = 1.0 / np.sqrt((xs * xs).mean(axis=1, keepdims=True) + 1e-6)
    return {"Y": xs * inv * x["W"][None, :]}


@pytest.mark.parametrize("sizes", [
    {"M": 8, "N": 8192},
    # N = 256: the kernel's 1.0 / N must follow N (it was the literal 1/8192).
    {"M": 64, "N": 256},
])
def test_rmsnorm(sizes):
    run_and_check("kernels/rmsnorm.tile", None, sizes, rmsnorm_ref)


def attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(D)) v, row by row; also log2 of the softmax denominator."""
    s = q @ k.T / np.sqrt(q.shape[1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = s.max(axis=1, keepdims=True)
    e = np.exp(s - m)
    denom = e.sum(axis=1, keepdims=True)
    return e @ v / denom, (m[:, 0] + np.log(denom[:, 0])) * LOG2E


def flash_ref(x, p):
    # The tensors are [B * H, S, D] (LSE [B * H, S]): one head per entry of axis 0.
    b, h, s, d = p["B"], p["H"], p["S"], p["D"]
    q, k, v = (x[n].reshape(b * h * s, d) for n in ("Q", "K", "V"))
    o = np.zeros((b * h * s, d))
    lse = np.zeros(b * h * s)
    causal = np.tril(np.ones((s, s), dtype=bool))
    for bh in range(b * h):
        rows = slice(bh * s, (bh + 1) * s)
        o[rows], lse[rows] = attention(q[rows], k[rows], v[rows], causal)
    return {"O": o.reshape(b * h, s, d), "LSE": lse.reshape(b * h, s)}



@pytest.mark.parametrize("sizes", [
    # BLOCK_M = 2 BLOCK_N: two diagonal blocks per query block, masked by iota/ge/select.
    {"B": 1, "H": 2, "S": 256, "D": 128, "BLOCK_M": 64, "BLOCK_N": 32},
    # D = 64: the scale log2e / sqrt(D) must follow D.
    {"B": 2, "H": 1, "S": 128, "D": 64, "BLOCK_M": 32, "BLOCK_N": 32},
    # S = 200: 200 = 6 x 32 + 8, a tail of 8 keys in the last block.
    # The tail: query block 3 holds rows 192..255, 56 of them past S, and the causal
    # mask k_pos <= q_pos hides keys 200..223 of the last block from rows 192..199.
    {"B": 1, "H": 2, "S": 200, "D": 64, "BLOCK_M": 64, "BLOCK_N": 32},
])
def test_flash_prefill_causal(sizes):
    run_and_check("kernels/flash_prefill.tile", None, sizes, flash_ref)


def gqa_ref(x, p):
    # K and V are [B * HKV, SKV, D]: one KV head per entry of axis 0.
    b, hq, hkv, skv = p["B"], p["HQ"], p["HKV"], p["SKV"]
    group = hq // hkv
    x = {**x, "K": x["K"].reshape(b * hkv * skv, p["D"]), "V": x["V"].reshape(b * hkv * skv, p["D"])}
    o = np.zeros((b * hq, p["D"]))
    for seq in range(b):
        for g in range(hkv):
            kv = slice((seq * hkv + g) * skv, (seq * hkv + g + 1) * skv)
            qs = slice((seq * hkv + g) * group, (seq * hkv + g + 1) * group)
            o[qs], _ = attention(x["Q"][qs], x["K"][kv], x["V"][kv])
    return {"O": o}


@pytest.mark.parametrize("sizes", [
    {"B": 2, "HQ": 8, "HKV": 2, "SKV": 1024, "D": 128, "SPLITS": 4},
    # 5 splits of cdiv(cdiv(1024, 5), 64) x 64 = 256 tokens: splits 0-3 cover all 1024,
    # split 4 is empty (m = -inf, l = 0: its merge weight 2^(-inf - m*) is 0).
    {"B": 1, "HQ": 4, "HKV": 1, "SKV": 1024, "D": 128, "SPLITS": 5, "BLOCK_N": 64},
    # D = 64: the scale log2e / sqrt(D) must follow D (it was the literal for 128).
    {"B": 1, "HQ": 4, "HKV": 2, "SKV": 512, "D": 64, "SPLITS": 2},
    # SKV = 1000: SPLIT_LEN = cdiv(cdiv(1000, 4), 64) x 64 = 256; split 3 holds keys
    # 768..999, 232 = 3 x 64 + 40: three unmasked blocks and one masked block whose last
    # 24 positions lie past SKV (they used to be the next head's first 24 keys).
    {"B": 2, "HQ": 8, "HKV": 2, "SKV": 1000, "D": 64, "SPLITS": 4},
    # SKV = 80, BLOCK_N = 32: SPLIT_LEN = cdiv(cdiv(80, 2), 32) x 32 = 64; split 0 runs two
    # unmasked blocks, split 1 (keys 64..79) none and one masked block of 16 keys and 16
    # positions past SKV. Half the block is padding, so a missing mask (zeros scoring 0)
    # moves O by far more than the tolerance, as the SKV = 1000 case alone would not.
    {"B": 2, "HQ": 4, "HKV": 2, "SKV": 80, "D": 64, "SPLITS": 2, "BLOCK_N": 32},
])
def test_gqa_decode(sizes):
    run_and_check("kernels/gqa_decode.tile", None, sizes, gqa_ref)


def sip_attention_ref(x, p):
    hq, hkv, ctx = p["HQ"], p["HKV"], p["CTX"]
    group = hq // hkv
    o = np.zeros((hq, p["D"]))
    for g in range(hkv):
        kv = slice(g * ctx, (g + 1) * ctx)
        o[g * group:(g + 1) * group], _ = attention(x["Q"][g * group:(g + 1) * group], x["K"][kv], x["V"][kv])
    return {"O": o}


SIP_ATTENTION = ("decode_attention_single_op", "decode_attention_block_composites",
                 "decode_attention_composite")


@pytest.mark.parametrize("kernel", SIP_ATTENTION)
@pytest.mark.parametrize("sizes", [
    # 8 PEs per cube split 8192 tokens into 1024 each, 4 blocks of 256; HKV = 2 heads on
    # cubes 0 and 1; the merge mesh combines the 8 PEs' partials of each head.
    {"CTX": 8192, "HQ": 8, "HKV": 2, "D": 128, "BLOCK": 256},
    # 10 KV heads over 8 cubes: cubes 0 and 1 take two heads each (h = c, c + 8).
    {"CTX": 4096, "HQ": 10, "HKV": 10, "D": 128, "BLOCK": 128},
    # D = 64: the scale log2e / sqrt(D) must follow D.
    {"CTX": 2048, "HQ": 4, "HKV": 2, "D": 64, "BLOCK": 64},
    # CTX = 8000: PE_CTX = 1000 tokens = 3 unmasked blocks of 256 and one masked block of
    # 232 tokens whose last 24 positions are the next PE's share (or the next head's, or
    # past K for the last PE of the last head) and must not count.
    {"CTX": 8000, "HQ": 8, "HKV": 2, "D": 64, "BLOCK": 256},
    # CTX = 630, BLOCK = 64: PE_CTX = cdiv(630, 8) = 79 = 64 + 15, one unmasked block and a
    # masked one holding 15 tokens and 49 positions of padding; the last PE's share is cut
    # at CTX: 630 - 7 x 79 = 77 = 64 + 13. Most of the masked block is padding, so a missing
    # mask moves O far past the tolerance.
    {"CTX": 630, "HQ": 4, "HKV": 2, "D": 64, "BLOCK": 64},
])
def test_sip_decode_attention_with_the_pe_merge(kernel, sizes):
    run_and_check("kernels/sip_decode_attention.tile", kernel, sizes, sip_attention_ref, profile=SIP)


@pytest.mark.parametrize("composite", SIP_ATTENTION[1:])
def test_composites_equal_their_single_op_twin(composite):
    """The same ops in the same order, grouped into commands differently: the executor
    computes identical floats, so the outputs and the partials are equal bit for bit."""
    module = parse_file("kernels/sip_decode_attention.tile")
    sizes = {"CTX": 8192, "HQ": 8, "HKV": 2, "BLOCK": 256}
    single = execute(module, module.kernel("decode_attention_single_op"), sizes, seed=7, profile=SIP)
    other = execute(module, module.kernel(composite), sizes, seed=7, profile=SIP)
    for name in ("O", "O_PART", "ML_PART"):
        assert np.array_equal(single.tensors[name], other.tensors[name], equal_nan=True), name


def moe_inputs(p, seed):
    """A balanced routing, as the kernel's runtime trip count expects (T * TOPK / E rows per
    expert, which the executor runs): (token t, choice j) goes to expert (t * TOPK + j) mod E,
    TOPK consecutive experts, distinct since TOPK <= E; expert e's rows list its tokens in
    order (padded with -1), shuffled among themselves; the output slot of (t, j) is t*TOPK + j."""
    t, e, topk = p["T"], p["E"], p["TOPK"]
    rng = np.random.default_rng(seed)
    token = np.full((e, t), -1)
    slot = np.full((e, t), -1)
    fill = [0] * e
    for tok in rng.permutation(t):
        for j in range(topk):
            ex = (tok * topk + j) % e
            token[ex, fill[ex]] = tok
            slot[ex, fill[ex]] = tok * topk + j
            fill[ex] += 1
    return {"ROW_TOKEN": token, "ROW_SLOT": slot}


def moe_ref(x, p):
    """Y[slot] = X[token] @ (W[e] * scale[e] broadcast over its 16 rows)."""
    w = x["W"] * np.repeat(x["W_SCALE"], 16, axis=1)
    y = np.zeros((p["T"] * p["TOPK"], 2 * p["I"]))
    for e in range(p["E"]):
        for tok, slot in zip(x["ROW_TOKEN"][e], x["ROW_SLOT"][e]):
            if slot >= 0:
                y[slot] = x["X"][tok] @ w[e]
    return {"Y": y}


@pytest.mark.parametrize("sizes", [
    {"T": 64, "H": 256, "I": 64, "E": 4, "TOPK": 2, "BM": 16, "BN": 64, "BK": 64},
    {"T": 16, "H": 128, "I": 128, "E": 8, "TOPK": 4, "BM": 16, "BN": 128, "BK": 128},
])
def test_moe_w4a16_with_dequantisation(sizes):
    module = parse_file("kernels/moe_w4a16.tile")
    params = {p.name: int(p.default.evaluate({})) for p in module.kernel().params if p.default.is_const()}
    params.update(sizes)
    run_and_check("kernels/moe_w4a16.tile", None, sizes, moe_ref, inputs=moe_inputs(params, 1))


@pytest.mark.parametrize("sizes", [
    {"M": 128, "N": 128, "K": 256},
    {"M": 96, "N": 160, "K": 64, "BM": 64, "BN": 64, "BK": 32},
])
def test_gemm_fp8_k_major(sizes):
    """C = A @ B with B stored transposed as BT[N, K]; fp8 e4m3 inputs (N(0,1) rounded to
    e4m3), f32 accumulation, bf16 output."""
    run_and_check("kernels/gemm_fp8.tile", None, sizes, lambda x, p: {"C": x["A"] @ x["BT"].T})


@pytest.mark.parametrize("sizes", [
    {"M": 128, "N": 128, "K": 256},
    {"M": 1, "N": 160, "K": 96, "BM": 16, "BN": 64, "BK": 32},
])
def test_linear_weight_k_major(sizes):
    """C = A @ W^T with the weight W[N, K] as torch.nn.Linear holds it; bf16 inputs, f32
    accumulation, bf16 output (M = 1: a decode step's single token, a partial tile of 16)."""
    run_and_check("kernels/linear.tile", None, sizes, lambda x, p: {"C": x["A"] @ x["W"].T})


@pytest.mark.parametrize("sizes", [
    {"M": 128, "N": 128, "K": 256},
    {"M": 64, "N": 192, "K": 128, "BM": 32, "BN": 64, "BK": 64},
])
def test_gemm_fp8_n_major(sizes):
    run_and_check("kernels/gemm_fp8_kn.tile", None, sizes, gemm_ref)


def flash_full_ref(x, p):
    # The tensors are [B * H, S, D] (LSE [B * H, S]): one head per entry of axis 0.
    b, h, s, d = p["B"], p["H"], p["S"], p["D"]
    q, k, v = (x[n].reshape(b * h * s, d) for n in ("Q", "K", "V"))
    o = np.zeros((b * h * s, d))
    lse = np.zeros(b * h * s)
    for bh in range(b * h):
        rows = slice(bh * s, (bh + 1) * s)
        o[rows], lse[rows] = attention(q[rows], k[rows], v[rows])
    return {"O": o.reshape(b * h, s, d), "LSE": lse.reshape(b * h, s)}


@pytest.mark.parametrize("sizes", [
    {"B": 1, "H": 2, "S": 256, "D": 128, "BLOCK_M": 64, "BLOCK_N": 32},
    {"B": 2, "H": 1, "S": 128, "D": 64, "BLOCK_M": 64, "BLOCK_N": 64},
    # S = 200 = 6 x 32 + 8: the last key block (j = 6) holds 8 keys and 24 positions past
    # S, masked to -inf; query block 3 holds rows 192..255, whose 56 past S are not stored.
    {"B": 1, "H": 2, "S": 200, "D": 64, "BLOCK_M": 64, "BLOCK_N": 32},
])
def test_flash_attention_without_mask(sizes):
    run_and_check("kernels/flash_attention.tile", None, sizes, flash_full_ref)


def paged_ref(x, p):
    """Sequence b's tokens are the pages BLOCK_TABLE[b, :] of the cache, in order; KV head
    kh is columns kh*D .. (kh+1)*D - 1."""
    b_, hq, hkv, d, page = p["B"], p["HQ"], p["HKV"], p["D"], p["PAGE"]
    group = hq // hkv
    o = np.zeros((b_ * hq, d))
    for b in range(b_):
        rows = np.concatenate([np.arange(pg * page, (pg + 1) * page) for pg in x["BLOCK_TABLE"][b]])
        for kh in range(hkv):
            cols = slice(kh * d, (kh + 1) * d)
            qs = slice(b * hq + kh * group, b * hq + (kh + 1) * group)
            o[qs], _ = attention(x["Q"][qs], x["K_CACHE"][rows, cols], x["V_CACHE"][rows, cols])
    return {"O": o}


@pytest.mark.parametrize("sizes", [
    {"B": 2, "HQ": 8, "HKV": 2, "CTX": 1024, "PAGE": 16},
    {"B": 3, "HQ": 4, "HKV": 4, "D": 64, "CTX": 256, "PAGE": 32},
])
def test_paged_decode(sizes):
    run_and_check("kernels/paged_decode.tile", None, sizes, paged_ref)


def moe_grouped_ref(x, p):
    """Expert e's group starts at EXPERT_START[e] and runs the expected
    cdiv(T * TOPK, E * BM) row tiles: Y_SORTED rows there = X_SORTED rows @ W[e]; the rows
    no group covers are never written (NaN, as outputs start)."""
    bm = p["BM"]
    rows = -(-(p["T"] * p["TOPK"]) // (p["E"] * bm)) * bm
    y = np.full((x["X_SORTED"].shape[0], 2 * p["I"]), np.nan)
    for e, start in enumerate(x["EXPERT_START"]):
        y[start:start + rows] = x["X_SORTED"][start:start + rows] @ x["W"][e]
    return {"Y_SORTED": y}


@pytest.mark.parametrize("sizes,starts", [
    # 64 x 2 routed rows over 4 experts: 2 tiles of 16 rows each, groups at 0, 32, 64, 96 of
    # ROWS = 128 + 4 x 16 = 192 (the last 64 rows are padding nobody writes).
    ({"T": 64, "H": 256, "I": 64, "E": 4, "TOPK": 2, "BM": 16, "BN": 64, "BK": 64}, [0, 32, 64, 96]),
    # Groups in another order, with gaps: 16 x 4 = 64 rows over 8 experts: 1 tile of 16 each,
    # ROWS = 64 + 8 x 16 = 128.
    ({"T": 16, "H": 128, "I": 64, "E": 8, "TOPK": 4, "BM": 16, "BN": 128, "BK": 32},
     [112, 0, 48, 16, 96, 32, 80, 64]),
])
def test_moe_grouped_with_runtime_group_starts(sizes, starts):
    run_and_check("kernels/moe_grouped.tile", None, sizes, moe_grouped_ref,
                  inputs={"EXPERT_START": starts})


@pytest.mark.parametrize("sizes", [
    {"M": 32, "N": 128, "K": 256, "BM": 16, "BN": 64, "BK": 128},
    # tails: 20 rows is not a multiple of BM = 16, 96 columns not of BN = 64
    {"M": 20, "N": 96, "K": 384, "BM": 16, "BN": 64, "BK": 128},
])
def test_gemm_w4a16_with_group_scales(sizes):
    """C = A @ (W x its group scale repeated over the group's 128 K rows): int4 weight codes
    (uniform in -8..7), bf16 activations and scales, f32 accumulation, bf16 output."""
    run_and_check("kernels/gemm_w4a16.tile", None, sizes,
                  lambda x, p: {"C": x["A"] @ (x["W"] * np.repeat(x["W_SCALE"], 128, axis=0))})


@pytest.mark.parametrize("sizes", [
    {"M": 32, "N": 128, "K": 256, "BM": 16, "BN": 64, "BK": 64},
    {"M": 20, "N": 96, "K": 160, "BM": 16, "BN": 64, "BK": 64},
])
def test_gemm_w8a16_with_channel_scales(sizes):
    """C = (A @ W) x the output channel's scale: fp8 e4m3 weights, bf16 activations."""
    run_and_check("kernels/gemm_w8a16.tile", None, sizes,
                  lambda x, p: {"C": (x["A"] @ x["W"]) * x["W_SCALE"]})


def test_every_shipped_kernel_has_a_reference_here():
    """A kernel added under kernels/ must be executed against a reference in this file."""
    from pathlib import Path
    here = Path(__file__).read_text()
    shipped = sorted(p.name for p in (Path(__file__).parent.parent / "kernels").glob("*.tile"))
    missing = [name for name in shipped if f'"kernels/{name}"' not in here]
    assert not missing, missing
