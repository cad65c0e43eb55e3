"""The hw-sweep's "compute" factor (tfx.model.search.knob_map) scales the tensor engine's rates,
its flop/cycle facts, and nothing else under compute.tensor.

h200_sxm (its [compute.tensor] inherited from h100_sxm, plus its own fractions): the rates
bf16 4,096, f16 4,096, tf32 2,048, fp8e4m3 8,192, fp8e5m2 8,192, int8 8,192, f64 256 flop/cycle
(fp4e2m1 unavailable: Hopper has none); beside them the fractions efficiency 0.74,
efficiency_fp8e4m3 / _fp8e5m2 0.700, unthrottled_efficiency 0.916, the count
power_clock_exponent 3 and the instruction shape. Session 15's deny-list of the non-rates missed
the two power facts once: x2 made the exponent 6 and the fraction 1.832 (refused, exit 2).
"""

from tfx.model.search import knob_map
from tfx.model.system import load_system

RATES = ("bf16", "f16", "tf32", "fp8e4m3", "fp8e5m2", "int8", "f64")


def test_the_compute_factor_is_the_seven_tensor_rates():
    knobs = knob_map(load_system("h200_sxm"), "compute", 2.0)
    assert knobs == {f"compute.tensor.{r}": "x2.0" for r in RATES}


def test_a_doubled_compute_keeps_the_fractions_and_the_exponent():
    """x2: bf16 4,096 -> 8,192 and f64 256 -> 512 flop/cycle; efficiency 0.74, the exponent 3,
    unthrottled_efficiency 0.916 and instruction_m 64 as stated."""
    p = load_system("h200_sxm", knobs=knob_map(load_system("h200_sxm"), "compute", 2.0)).profile
    assert (p.get("compute.tensor.bf16"), p.get("compute.tensor.f64")) == (8192, 512)
    assert p.get("compute.tensor.efficiency") == 0.74
    assert p.get("compute.tensor.power_clock_exponent") == 3
    assert p.get("compute.tensor.unthrottled_efficiency") == 0.916
    assert p.get("compute.tensor.instruction_m") == 64
