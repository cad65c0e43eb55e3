"""bench/model_multigpu.py on small fabricated inputs (issue 18's CPU side): the files have the
columns bench/h200/measure_multigpu.py writes; the numbers are made up for the test."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tfx.model.latency import latency
from tfx.model.system import Parallelism, Workload, load_system

from bench_script import load_bench

ROOT = Path(__file__).resolve().parent.parent


bench = load_bench("model_multigpu")

COLL = ("collective,gpus,bytes,iters,median_us,p10_us,p90_us,algbw_gbps,busbw_gbps\n"
        "all_reduce,2,1048576,200,5.0,4.9,5.2,209.7,209.7\n"
        "all_gather,8,4096,200,8.0,7.9,8.3,0.5,0.4\n")
STEPS = ("model,gpus,mode,batch,ctx,layers,status,median_us,p10_us,p90_us,replays\n"
         "llama3.1-8b,2,decode,8,4096,8,ok,1500.0,1490.0,1510.0,20\n"
         "llama3.1-70b,8,decode,32,32768,4,oom,,,,\n")


def write(tmp_path: Path, coll: str = COLL, steps: str = STEPS) -> Path:
    (tmp_path / "collectives.csv").write_text(coll)
    (tmp_path / "tp_steps.csv").write_text(steps)
    return tmp_path


def test_collectives_use_the_model_formulas_over_nvlink(tmp_path):
    """h200_nvl8: NVLink 450 GB/s each way line rate x NCCL's 0.822 = 369.9 GB/s, 1 us.
    all-reduce, 2 GPUs, 1 MiB: 2 x 1/2 x 1,048,576 / 369.9e9 s = 2,834.76 ns + 2 x 1 x 1,000 = 4,834.76 ns;
    all-gather, 8 GPUs, 4 KiB: 7/8 x 4096 / 369.9e9 s = 9.69 ns + 7 x 1,000 = 7,009.69 ns."""
    rows = bench.collective_rows(write(tmp_path), load_system("h200_nvl8"))
    (n1, g1, b1, m1, p1), (n2, g2, b2, m2, p2) = rows
    assert (n1, g1, b1, m1) == ("all_reduce", 2, 1048576, 5000.0)
    assert p1 == pytest.approx(1_048_576 / 369.9e9 * 1e9 + 2000.0, rel=1e-12)
    assert p2 == pytest.approx(7 / 8 * 4096 / 369.9e9 * 1e9 + 7000.0, rel=1e-12)


def test_tp_stack_is_the_per_layer_stages_scaled_to_the_stack(tmp_path):
    """llama3.1-8b decode, batch 8, context 4096, TP 2, 8 layers measured of 32: every stage but
    the embedding and the head, pytorch-graph runtime, x 8 / 32. The oom row is listed, not priced."""
    sysm = load_system("h200_nvl8")
    rows = bench.step_rows(write(tmp_path), sysm)
    r = latency("llama3.1-8b", sysm, Workload("decode", 4096, 8, kernels="eager"), Parallelism(tp=2))
    layer = sum(s.total_ns for s in r.stages if s.name not in bench.OUTSIDE_LAYERS)
    assert rows[0][:8] == ("llama3.1-8b", 2, "decode", 8, 4096, 8, "ok", 1_500_000.0)
    assert rows[0][8] == pytest.approx(layer * 8 / 32, rel=1e-12)
    assert rows[1][6:] == ("oom", None, None)


def test_report_prints_errors_and_targets(tmp_path):
    text = "\n".join(bench.report(write(tmp_path)))
    assert "all_reduce: worst |error| 3.3% (within the 15% target)" in text      # 4.835 / 5.0 - 1
    assert "oom" in text and "1 steps: median |error|" in text


@pytest.mark.parametrize("coll,message", [
    ("collective,gpus,median_us\nall_reduce,2,5\n", "collectives.csv:1: missing column(s) bytes"),
    ("collective,gpus,bytes,median_us\nall_reduce,2,1MB,5\n", "collectives.csv:2: bytes '1MB' is not a number"),
    ("collective,gpus,bytes,median_us\nbroadcast,2,4096,5\n", "collectives.csv:2: unknown collective 'broadcast'"),
])
def test_bad_files_are_refused_by_line(tmp_path, capsys, coll, message):
    write(tmp_path, coll=coll)
    assert bench.main([str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_measure_script_keeps_multicast_off_and_the_bus_factors():
    """The script sets NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 at import (torch is
    imported only inside its functions, so this runs without it); nccl-tests' bus factors:
    all-reduce 2(n-1)/n = 1.75 on 8 GPUs, the others (n-1)/n = 0.875."""
    import os
    before = {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST")}
    spec = importlib.util.spec_from_file_location("measure_multigpu", ROOT / "bench" / "h200" / "measure_multigpu.py")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        assert os.environ["NCCL_NVLS_ENABLE"] == "0" and os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert mod.bus_factor("all_reduce", 8) == 1.75 and mod.bus_factor("all_to_all", 8) == 0.875
    assert mod.SIZES[0] == 4096 and mod.SIZES[-1] == 2 ** 30
