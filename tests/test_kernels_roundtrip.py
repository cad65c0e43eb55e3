"""Every shipped kernel parses, verifies, prints canonically and shape-checks with its defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfx.ir import ops as opcat
from tfx.hw.profile import shipped_profile_with
from tfx.ir.bind import bind, check_shapes, units_used
from tfx.ir.nodes import Composite, LoopRegion, MeshRegion, walk, walk_ops
from tfx.lang import parse_file, parse_text, print_module

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels"
KERNEL_FILES = sorted(KERNEL_DIR.glob("*.tile"))

EXPECTED_FILES = {
    "copy.tile", "flash_prefill.tile", "gemm.tile", "gqa_decode.tile", "moe_w4a16.tile",
    "persistent_gemm.tile", "rmsnorm.tile", "sip_decode_attention.tile", "sip_gemm.tile",
    "softmax.tile",
}


def test_the_shipped_kernels_are_all_here():
    assert {p.name for p in KERNEL_FILES} >= EXPECTED_FILES


@pytest.fixture(params=KERNEL_FILES, ids=lambda p: p.name)
def kernel_file(request):
    return request.param


def test_parses_and_prints_canonically(kernel_file):
    module = parse_file(kernel_file)
    text = print_module(module)
    again = parse_text(text, str(kernel_file))
    assert again == module
    # The canonical form is a fixed point of printing.
    assert print_module(again) == text


def machine(module, kernel):
    """The chip a kernel that counts one (units(sm), units(cube)) is built for: h200_sxm, or
    sip for its cubes and PEs; None for a kernel that counts none."""
    levels = units_used(module, kernel)
    return shipped_profile_with(levels) if levels else None


def test_shapes_check_with_defaults(kernel_file):
    module = parse_file(kernel_file)
    for kernel in module.kernels:
        check_shapes(module, kernel, bind(module, kernel, profile=machine(module, kernel)))


def test_every_value_in_a_domain_is_accepted_alone(kernel_file):
    """Each parameter's domain values, set one at a time, still give consistent shapes."""
    module = parse_file(kernel_file)
    for kernel in module.kernels:
        profile = machine(module, kernel)
        defaults = bind(module, kernel, profile=profile)
        for p in kernel.params:
            if p.sweep_domain is None:
                continue
            for v in p.sweep_domain.enumerate(defaults)[:8]:
                env = bind(module, kernel, {p.name: v}, profile=profile)
                check_shapes(module, kernel, env)


def test_has_a_header_comment_and_documented_parameters(kernel_file):
    module = parse_file(kernel_file)
    for kernel in module.kernels:
        assert kernel.doc.count("\n") >= 2, f"{kernel.name}: header comment says what it models"
        assert kernel.params and all(p.sweep_domain is not None for p in kernel.params), \
            f"{kernel.name}: every parameter has a sweep domain"
        regions = [s for s in walk(kernel.body) if isinstance(s, (MeshRegion, LoopRegion))]
        assert any(isinstance(s, MeshRegion) for s in regions)


def test_gpu_kernels_state_threads(kernel_file):
    module = parse_file(kernel_file)
    for kernel in module.kernels:
        if any(isinstance(s, MeshRegion) and s.level == "cta" for s in walk(kernel.body)):
            assert kernel.attr("threads") is not None, kernel.name


def _kernel(name, kernel=None):
    module = parse_file(KERNEL_DIR / name)
    return module, module.kernel(kernel)


def test_persistent_gemm_loops_from_its_sm_with_a_bound():
    module, k = _kernel("persistent_gemm.tile")
    mesh = k.body[0]
    assert mesh.level == "cta" and mesh.coords == ("sm",)
    tiles = mesh.body[0]
    assert isinstance(tiles, LoopRegion) and tiles.bound is not None
    assert "sm" in tiles.start.free_names()
    # one CTA an SM, as many as the profile has: h200_sxm's hierarchy.sm.count 132, a100_sxm's
    # 108; CTAS = min(NUM_SMS, TILES) with TILES = (8192 / 128) x (8192 / 256) = 2,048
    from tfx.hw import load_profile
    env = bind(module, k, profile=load_profile("h200_sxm"))
    assert env["NUM_SMS"] == 132 and env["CTAS"] == 132
    env = bind(module, k, profile=load_profile("a100_sxm"))
    assert env["NUM_SMS"] == 108 and env["CTAS"] == 108


def test_flash_prefill_causal_trip_count_depends_on_the_query_block():
    """BLOCK_M = 128, BLOCK_N = 64, S = 4096: query block pm needs key blocks
    0 .. cdiv((pm + 1) * 128, 64) = 2 pm + 2; stage 1 (unmasked) stops at pm * 128 / 64 = 2 pm,
    stage 2 (masked) runs the last 2. Bounds: 4096 / 64 = 64 and cdiv(128, 64) + 1 = 3."""
    module, k = _kernel("flash_prefill.tile")
    stage1, stage2 = [s for s in walk(k.body) if isinstance(s, LoopRegion)]
    assert "pm" in stage1.stop.free_names() and stage1.bound is not None
    env = dict(bind(module, k))
    for pm, first, total in ((0, 0, 2), (1, 2, 4), (31, 62, 64)):
        env["pm"] = pm
        assert stage1.stop.evaluate(env) == first
        assert stage2.start.evaluate(env) == first
        assert stage2.stop.evaluate(env) == total
    assert stage1.bound.evaluate(env) == 64
    assert stage2.bound.evaluate(env) == 3
    assert {op.opcode for op in walk_ops(stage2.body)} >= {"iota", "ge", "select"}
    assert not {op.opcode for op in walk_ops(stage1.body)} & {"iota", "ge", "select"}


def test_gqa_decode_has_a_split_pass_and_a_merge_pass():
    module, k = _kernel("gqa_decode.tile")
    meshes = [s for s in k.body if isinstance(s, MeshRegion)]
    assert len(meshes) == 2
    kv = next(s for s in walk(meshes[0].body) if isinstance(s, LoopRegion))
    assert any(c.name == "%q" and c.move_to == "rmem" for c in kv.captures)
    assert {op.opcode for op in walk_ops(kv.body)} >= {"load", "transpose", "mma", "exp2", "reduce"}
    assert {t.role for t in k.tensors} == {"in", "out", "scratch"}


def test_moe_gathers_rows_inside_a_runtime_loop():
    module, k = _kernel("moe_w4a16.tile")
    env = bind(module, k)
    assert (env["H"], env["I"], env["E"], env["TOPK"]) == (6144, 3072, 32, 4)
    assert (env["BM"], env["BN"], env["BK"]) == (64, 128, 128)
    rows = next(s for s in walk(k.body) if isinstance(s, LoopRegion))
    assert rows.trip.kind == "runtime" and rows.trip.expect is not None
    gathers = [a for op in walk_ops(k.body) for o in op.operands if hasattr(o, "axes")
               for a in o.axes if a.kind == "gather"]
    assert gathers
    assert k.tensor("W").type.dtype.text == "fp4e2m1"
    assert k.attr("occupancy") is not None


def test_sip_decode_attention_single_op_and_composite_do_the_same_work():
    module = parse_file(KERNEL_DIR / "sip_decode_attention.tile")
    single = module.kernel("decode_attention_single_op")
    composite = module.kernel("decode_attention_composite")
    assert not any(isinstance(s, Composite) for s in walk(single.body))
    blocks = [s for s in walk(composite.body) if isinstance(s, Composite)]
    assert [b.name for b in blocks] == ["attn_block"]

    def opcodes(k):
        return [op.opcode for op in walk_ops(k.body)]
    assert opcodes(single) == opcodes(composite)
    assert single.params == composite.params and single.tensors == composite.tensors


def test_sip_kernels_use_the_accelerator_levels():
    for name in ("sip_gemm.tile", "sip_decode_attention.tile"):
        module = parse_file(KERNEL_DIR / name)
        for k in module.kernels:
            levels = {s.level for s in walk(k.body) if isinstance(s, MeshRegion)}
            assert levels == {"cube", "pe"}
            assert {t.type.level for t in k.tensors} == {"hbm"}
            assert {op.to_level for op in walk_ops(k.body) if op.opcode == "load"} == {"tcm"}


def test_every_op_in_the_kernels_is_catalogued():
    for path in KERNEL_FILES:
        for k in parse_file(path).kernels:
            for op in walk_ops(k.body):
                assert opcat.cost_class(op.opcode)
