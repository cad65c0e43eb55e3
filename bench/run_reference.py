"""A numpy reference for `tfx run --reference bench.run_reference:gemm` (used by run_speed.py)."""

import numpy as np


def gemm(inputs, params):
    """C = A @ B in float64 from the kernel's (bf16-rounded) inputs."""
    return {"C": inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)}
