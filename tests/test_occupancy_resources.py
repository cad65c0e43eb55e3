"""Importers of ptxas -v and cuobjdump -res-usage output, and their use by the occupancy model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfx.analysis.occupancy import OccupancyLimits, compute_occupancy
from tfx.analysis.compiler_resources import demangled_base_name, parse_ptxas_v, parse_res_usage
from tfx.errors import SourceLocation, TfxError

DATA = Path(__file__).parent / "data" / "occupancy"
PTXAS = DATA / "ptxas_v_sm90a.txt"
RES_USAGE = DATA / "res_usage_sm120_sm90a.txt"

SM120 = OccupancyLimits(32, 1536, 48, 24, 1024, 65536, 65536, 255, 256, 4,
                        102400, 101376, 128, 1024)


# --------------------------------------------------------------------------- ptxas -v (real output)

def test_ptxas_fixture_has_every_entry_in_order():
    kernels = parse_ptxas_v(PTXAS.read_text(), str(PTXAS))
    assert [k.base_name for k in kernels] == [
        "kfree", "k255", "k232", "k200", "k184", "k168", "k152", "k128", "k112",
        "k96", "k80", "k72", "k64", "k56", "k48", "k40", "k32", "k24"]
    assert {k.arch for k in kernels} == {"sm_90a"}
    assert all(k.tool == "ptxas" and k.barriers == 1 for k in kernels)


def test_ptxas_fixture_values_match_the_text():
    """Values as printed in the fixture for _Z4k232PKfPfi (lines 12-15) and _Z3k48PKfPfi."""
    kernels = {k.name: k for k in parse_ptxas_v(PTXAS.read_text(), "ptxas.txt")}
    k232 = kernels["_Z4k232PKfPfi"]
    assert (k232.registers, k232.stack_frame, k232.spill_stores, k232.spill_loads,
            k232.cumulative_stack, k232.smem_static) == (232, 312, 612, 612, 312, 0)
    assert k232.where == "ptxas.txt:12"
    k48 = kernels["_Z3k48PKfPfi"]
    assert (k48.spill_stores, k48.spill_loads) == (7064, 7072)
    kfree = kernels["_Z5kfreePKfPfi"]
    assert (kfree.registers, kfree.stack_frame, kfree.cumulative_stack) == (255, 0, None)


def test_ptxas_smem_cmem_and_other_items():
    text = (
        "ptxas info    : 0 bytes gmem, 8 bytes cmem[4]\n"
        "ptxas info    : Compiling entry function '_Z4gemmPKfPf' for 'sm_120'\n"
        "ptxas info    : Function properties for _Z4gemmPKfPf\n"
        "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 128 registers, used 1 barriers, 16 bytes cumulative stack size, "
        "44068 bytes smem, 924 bytes cmem[0], 8 bytes cmem[2], 2 textures\n"
    )
    (k,) = parse_ptxas_v(text, "x.txt")
    assert (k.registers, k.smem_static, k.stack_frame, k.textures) == (128, 44068, 16, 2)
    assert k.cmem == {0: 924, 2: 8}
    assert k.arch == "sm_120"
    res = k.resources(256)
    assert (res.threads, res.regs_per_thread, res.smem_static, res.origin,
            res.local_bytes) == (256, 128, 44068, "imported", 16)


def test_ptxas_keeps_unknown_counted_items():
    text = ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
            "ptxas info    : Used 8 registers, 3 named barriers\n")
    (k,) = parse_ptxas_v(text)
    assert k.extra == {"named barriers": 3}
    assert k.base_name is None and k.display_name == "k"


def test_ptxas_device_function_properties_are_not_entries():
    text = ("ptxas info    : Function properties for _Z6helperv\n"
            "    24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
            "ptxas info    : Compiling entry function '_Z1kv' for 'sm_90a'\n"
            "ptxas info    : Function properties for _Z1kv\n"
            "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
            "ptxas info    : Used 32 registers\n")
    (k,) = parse_ptxas_v(text)
    assert (k.name, k.base_name, k.stack_frame, k.spill_stores) == ("_Z1kv", "k", 8, 4)


@pytest.mark.parametrize("text, line, col, words", [
    ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
     "ptxas info    : Used many registers\n", 2, 17, "Used N registers"),
    ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
     "ptxas info    : Used 8 registers, lots of smem\n", 2, 35, "'lots of smem'"),
    ("ptxas info    : Used 8 registers\n", 1, 17, "outside an entry function"),
    ("ptxas info    : Compiling entry function k for sm_90\n", 1, 17, "Compiling entry function"),
    ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
     "ptxas info    : Function properties for k\n"
     "    8 bytes stack frame, 0 bytes spill stores\n", 3, 1, "spill loads"),
    ("ptxas info    : Compiling entry function 'k' for 'sm_90'\n", 1, 1, "no 'Used N registers'"),
])
def test_ptxas_malformed_input_names_file_line_col(text, line, col, words):
    with pytest.raises(TfxError) as err:
        parse_ptxas_v(text, "bad.txt")
    assert err.value.where == SourceLocation("bad.txt", line, col)
    assert words in err.value.message


def test_ptxas_without_entries_is_refused():
    with pytest.raises(TfxError, match="ptxas -v output") as err:
        parse_ptxas_v("hello\n", "empty.txt")
    assert err.value.where == "empty.txt"


# --------------------------------------------------------------------------- cuobjdump -res-usage

def test_res_usage_fixture():
    kernels = parse_res_usage(RES_USAGE.read_text(), "ru.txt")
    assert [(k.display_name, k.arch, k.registers, k.smem_static) for k in kernels] == [
        ("gemm_occupancy1", "sm_120", 168, 0),
        ("gemm_occupancy2", "sm_120", 128, 44068),
        ("rmsnorm_kernel", "sm_120", 32, 0),
        ("k232", "sm_90a", 232, 0),
        ("layers::attention", "sm_90a", 255, 16384),
    ]
    rms = kernels[2]
    assert rms.cmem == {0: 908, 2: 8}
    assert rms.stack_frame == 16
    assert kernels[0].where == "ru.txt:18"
    assert all(k.tool == "cuobjdump" for k in kernels)


def test_res_usage_one_line_form():
    text = ("Function _Z4k168PKfPfi: REG:168 STACK:0 SHARED:100484 LOCAL:0 "
            "CONSTANT[0]:908 TEXTURE:0 SURFACE:0 SAMPLER:0 NEWTHING:3\n")
    (k,) = parse_res_usage(text)
    assert (k.base_name, k.registers, k.smem_static, k.arch) == ("k168", 168, 100484, None)
    assert k.extra == {"NEWTHING": 3}


def test_res_usage_imported_kernel_on_sm120():
    """gemm_occupancy2: 128 registers, 44,068 B static, 256 threads on sm_120.
    Registers 4096 per warp -> 16 warps // 8 = 2; shared memory 44068 + 1024 =
    45092 -> 45184 B, 102400 // 45184 = 2. Two CTAs per SM."""
    k = parse_res_usage(RES_USAGE.read_text())[1]
    o = compute_occupancy(SM120, k.resources(256))
    assert o.blocks_per_sm == 2
    assert o.resources.origin == "imported"


@pytest.mark.parametrize("text, line, col, words", [
    ("Resource usage:\n Function k:\n  REG:x STACK:0\n", 3, 3, "KEY:NUMBER"),
    ("Resource usage:\n Function k:\n  REG:8 STACK:0 junk\n", 3, 17, "'junk'"),
    ("Resource usage:\n Function k:\n  STACK:0 SHARED:0\n", 3, 3, "no REG:"),
    ("Resource usage:\n Function k:\n Function j:\n  REG:8\n", 2, 1, "no resource line"),
    ("Resource usage:\n REG:8 STACK:0\n", 2, 1, "outside a function"),
])
def test_res_usage_malformed_input_names_file_line_col(text, line, col, words):
    with pytest.raises(TfxError) as err:
        parse_res_usage(text, "bad.txt")
    assert err.value.where == SourceLocation("bad.txt", line, col)
    assert words in err.value.message


def test_res_usage_without_functions_is_refused():
    with pytest.raises(TfxError, match="cuobjdump -res-usage"):
        parse_res_usage("Fatbin ptx code:\n", "x.txt")


# --------------------------------------------------------------------------- names

@pytest.mark.parametrize("name, base", [
    ("_Z4k168PKfPfi", "k168"),
    ("_Z5kfreePKfPfi", "kfree"),
    ("_ZN6layers9attentionILi128EEEvPK6__halfPS1_i", "layers::attention"),
    ("_Z6kernelILi128EEvPf", "kernel"),
    ("rmsnorm_kernel", None),
    ("_Z99short", None),
    ("_Z", None),
])
def test_demangled_base_name(name, base):
    assert demangled_base_name(name) == base
