"""`tfx run` speed: a 256^3 GEMM executed and checked against a numpy reference.

    python3 bench/run_speed.py [--repeat N]

Target (issue 16): run + check of gemm.tile at M = N = K = 256 under 2 s. Prints the
median of N in-process runs of ``tfx run ... --reference`` (parse, bind, inputs,
interpretation, the reference and the comparison; Python start-up excluded), and the
wall time of one ``tfx run`` process (start-up and imports included). Then the other
shipped kernels at the small sizes the test suite uses, in process, for scale.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.cli.main import main  # noqa: E402

GEMM = ["run", str(ROOT / "kernels" / "gemm.tile"), "--set", "M=256", "--set", "N=256", "--set", "K=256",
        "--reference", "bench.run_reference:gemm"]
OTHERS = [
    ("flash_prefill B1 H2 S256", ["flash_prefill.tile", "B=1", "H=2", "S=256", "BLOCK_M=64", "BLOCK_N=32"]),
    ("gqa_decode B2 SKV1024", ["gqa_decode.tile", "B=2", "HQ=8", "HKV=2", "SKV=1024", "SPLITS=4"]),
    ("moe_w4a16 T64 H256", ["moe_w4a16.tile", "T=64", "H=256", "I=64", "E=4", "TOPK=2", "BM=16", "BN=64",
                            "BK=64"]),
    ("sip decode composite CTX8192", ["sip_decode_attention.tile", "CTX=8192", "HQ=8", "HKV=2", "BLOCK=256"]),
    ("sip_splitk_gemm 64x256x2048", ["sip_splitk_gemm.tile", "M=64", "N=256", "K=2048", "TK=64"]),
]


def timed(argv) -> tuple[float, int]:
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        rc = main(argv)
    return time.perf_counter() - start, rc


def main_bench() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    timed(GEMM)  # warm: imports, first BLAS call
    runs = [timed(GEMM) for _ in range(args.repeat)]
    assert all(rc == 0 for _, rc in runs), "the 256^3 GEMM did not pass its check"
    median = statistics.median(t for t, _ in runs)
    verdict = "ok" if median < 2.0 else "OVER"
    print(f"gemm 256^3 run + check, in process (median of {args.repeat}): {median:.3f} s  "
          f"(target < 2 s: {verdict})")
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tfx.cli.main", *GEMM], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    # CPU time too: on a shared, loaded machine the wall time mostly measures the queue.
    print(f"gemm 256^3 run + check, one `tfx run` process:          {wall:.3f} s wall, {cpu:.3f} s CPU  "
          f"(exit {proc.returncode})")
    for label, (tile, *sets) in OTHERS:
        argv = ["run", str(ROOT / "kernels" / tile)] + [x for s in sets for x in ("--set", s)]
        t, rc = timed(argv)
        print(f"  {label:<32} {t:.3f} s  (exit {rc})")
    return 0


if __name__ == "__main__":
    sys.exit(main_bench())
