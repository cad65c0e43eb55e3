"""Peer comparison: tfx.model vs llm-analysis 0.2.2 (PyPI), memory per device and decode latency.

    pip install llm-analysis==0.2.2     # not a dependency of tfx
    python bench/model_peer_compare.py

Both on an H100 SXM at the datasheet figures (3.35 TB/s, 989 TFLOP/s bf16,
NVLink 450 GB/s); tfx with --bandwidth vendor so the ceilings agree.
Differences are explained in docs/model-latency.md ("Peer comparison").
"""

import contextlib
import io
import logging

CASES = [  # (tfx preset, llm-analysis model, tp, batch, prompt, generated)
    ("llama2-7b", "NousResearch_Llama-2-7b-hf", 1, 1, 2048, 1),
    ("llama2-13b", "decapoda-research_llama-13b-hf", 2, 8, 1024, 1),
    ("llama2-70b", "upstage_Llama-2-70b-instruct-v2", 4, 1, 2048, 1),
]


def main() -> None:
    from llm_analysis.analysis import infer
    from tfx.model.latency import latency
    from tfx.model.system import Parallelism, Workload, load_system

    logging.disable(logging.CRITICAL)
    print(f"{'case':<34} {'':>8} {'tfx':>12} {'llm-analysis':>14} {'diff':>8}")
    for preset, peer, tp, batch, ctx, gen in CASES:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            p = infer(model_name=peer, gpu_name="h100-sxm-80gb", dtype_name="w16a16e16", tp_size=tp,
                      batch_size_per_gpu=batch, seq_len=ctx, num_tokens_to_generate=gen, log_level="CRITICAL")
        sysm = load_system("h100_sxm", knobs={"system.devices_per_node": "8"}, bandwidth="vendor")
        r = latency(preset, sysm, Workload("decode", ctx + gen, batch), Parallelism(tp=tp))
        label = f"{preset} tp{tp} b{batch} ctx{ctx}"
        rows = [("weights/GPU", r.memory["weights"] / 2**30, p["weight_memory_per_gpu"] / 2**30, "GiB"),
                ("KV/GPU", r.memory["kv_cache"] / 2**30, p["kv_cache_memory_per_gpu"] / 2**30, "GiB"),
                ("decode step", r.latency_ns / 1e6, p["decode_latency"] / gen * 1e3, "ms")]
        for name, a, b, unit in rows:
            diff = (a / b - 1) * 100 if b else float("nan")
            print(f"{label:<34} {name:>12} {a:>9.3f} {unit:<3} {b:>9.3f} {unit:<3} {diff:>+7.1f}%")
            label = ""


if __name__ == "__main__":
    main()
