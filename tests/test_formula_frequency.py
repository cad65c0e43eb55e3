"""Clock speeds inside breakdown formulas go through one formatter, tfx.hw.units.formula_frequency
(as byte counts go through formula_bytes and rates through formula_rate): FORMULA_DIGITS = 4
significant digits, decimal prefixes. The formulas used to write the clock three ways (``:g``,
``.2f``, ``.3f``), so 1.98 GHz read ``1.98``, ``1.98`` or ``1.980`` by the line it sat on."""

from tfx.analysis import fragment_chain
from tfx.hw.units import formula_frequency


def test_formula_frequency_four_significant_digits():
    """1.98 cycles/ns = 1.98e9 Hz: 1.98e9 / 1e9 = 1.98 in GHz, ``:.4g`` -> "1.98" (no trailing
    zero); 1.98 x 0.907 (warp_mma.clock_fraction) = 1.79586 -> ``:.4g`` "1.796"; 0.5 cycles/ns
    = 5e8 Hz, below 1e9 -> MHz: 500 -> "500"; 1.0 -> 1e9 Hz, 1 GHz -> "1"."""
    assert formula_frequency(1.98) == "1.98 GHz"
    assert formula_frequency(1.98 * 0.907) == "1.796 GHz"
    assert formula_frequency(0.5) == "500 MHz"
    assert formula_frequency(1.0) == "1 GHz"


def test_fragment_chain_formula_writes_the_clock_once():
    """A chain of 4 ldmatrix x 33 cycles + 8 mma x 35 cycles = 132 + 280 = 412 cycles at 1.98
    GHz: 412 / 1.98 = 208.08 ns. The clock reads "1.98 GHz" (it read "1.980 GHz" through
    ``.3f``)."""
    c = fragment_chain.Chain(ldsm=4, mma=8, ldsm_cycles=33, mma_cycles=35, ghz=1.98, ns=412 / 1.98)
    text = fragment_chain.describe(c, lambda ns: f"{ns:.2f} ns")
    assert "4 ldmatrix x 33 + 8 mma x 35 cycles = 412 cycles / 1.98 GHz = 208.08 ns a trip" in text
