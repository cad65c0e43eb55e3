"""Units of hardware facts: parsing, conversion to canonical units, human formatting.

Every quantity inside tfx is held in one canonical unit per *family*
(docs/architecture.md, "Units"):

========================  ============  =========================================
family                    canonical     accepted spellings
========================  ============  =========================================
``bytes``                 ``B``         B, KB, KiB, MB, MiB, GB, GiB, TB, TiB
``bandwidth``             ``B/s``       B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s,
                                        GiB/s, TiB/s, B/ns, B/us, Gb/s, Tb/s (bits)
``frequency``             ``Hz``        Hz, kHz, MHz, GHz
``time``                  ``ns``        ns, us, µs, ms, s
``flop_per_cycle``        ``flop/cycle``  flop/cycle
``bytes_per_cycle``       ``B/cycle``   B/cycle
``cycles``                ``cycle``     cycle
``count``                 ``count``     count
``flag``                  ``flag``      flag (the value is 0 or 1)
``flop_rate``             ``flop/s``    flop/s, GFLOP/s, TFLOP/s, PFLOP/s
========================  ============  =========================================

Decimal prefixes are powers of 1000 and binary ones (``KiB``) powers of 1024, as
vendors use them. Spellings are case-sensitive on purpose: ``Gb/s`` (bits, how
network links are sold) is an eighth of ``GB/s``.

Per-cycle families never convert from per-second units: that would need the
clock, and a fact whose value silently moved with a ``clock.core`` knob would
be a trap. Per-cycle facts are stated per cycle; the vendor's TFLOP/s figure
belongs in the fact's ``source``.

The ``format_*`` helpers render canonical values for people (two decimals,
scaled prefix, decimal prefixes for bytes as for bandwidths). They are the
primitives of the one formatting policy: the surfaces (CLI text, TUI panes,
exports) reach them through ``tfx.present``, which adds the rules by metric
name; lower layers use them directly for the sentences they write.
"""

from __future__ import annotations

import math
import re

# family -> (canonical unit, {accepted unit: factor to canonical})
UNIT_FAMILIES: dict[str, tuple[str, dict[str, float]]] = {
    "bytes": ("B", {
        "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
        "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40,
    }),
    "bandwidth": ("B/s", {
        "B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
        "KiB/s": 2 ** 10, "MiB/s": 2 ** 20, "GiB/s": 2 ** 30, "TiB/s": 2 ** 40,
        "B/ns": 1e9, "B/us": 1e6,
        "Gb/s": 1e9 / 8, "Tb/s": 1e12 / 8,
    }),
    "frequency": ("Hz", {"Hz": 1, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}),
    "time": ("ns", {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}),
    "flop_per_cycle": ("flop/cycle", {"flop/cycle": 1}),
    "bytes_per_cycle": ("B/cycle", {"B/cycle": 1}),
    "cycles": ("cycle", {"cycle": 1}),
    "count": ("count", {"count": 1}),
    "flag": ("flag", {"flag": 1}),
    "ratio": ("ratio", {"ratio": 1}),
    "flop_rate": ("flop/s", {"flop/s": 1, "GFLOP/s": 1e9, "TFLOP/s": 1e12, "PFLOP/s": 1e15}),
}

# Families whose canonical value must be a whole number.
INTEGER_FAMILIES = frozenset({"count", "flag", "cycles"})

_FAMILY_OF_UNIT: dict[str, str] = {
    unit: family for family, (_, table) in UNIT_FAMILIES.items() for unit in table
}


def family_of(unit: str) -> str | None:
    """The family a unit spelling belongs to, or None if tfx does not know it."""
    return _FAMILY_OF_UNIT.get(unit)


def canonical_unit(family: str) -> str:
    return UNIT_FAMILIES[family][0]


def accepted_units(family: str) -> list[str]:
    return list(UNIT_FAMILIES[family][1])


def to_canonical(value: float, unit: str) -> float:
    """``value`` in ``unit`` converted to its family's canonical unit.

    Integer families keep ints so that counts print and compare as counts, and
    a whole number of bytes is an int too.
    """
    family = _FAMILY_OF_UNIT[unit]
    factor = UNIT_FAMILIES[family][1][unit]
    if family in INTEGER_FAMILIES:
        return int(value) if float(value).is_integer() else float(value)
    result = float(value) * factor
    if family == "bytes" and result.is_integer():
        return int(result)  # sizes are whole bytes: 228 KiB is the int 233472
    return result


_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(\S.*?)?\s*$",
                       re.ASCII)  # ASCII: \d is 0-9, never another script's digit


def split_quantity(text: str) -> tuple[float, str | None] | None:
    """``"3.2TB/s"`` -> ``(3.2, "TB/s")``; ``"1.2e12"`` -> ``(1.2e12, None)``; junk -> None.

    The unit is returned as written (it may be unknown; the caller decides).
    Integers stay ints so ``"132"`` can be a count.
    """
    match = _QUANTITY.match(text)
    if not match:
        return None
    number_text, unit = match.groups()
    if re.fullmatch(r"[+-]?\d+", number_text):
        number: float = int(number_text)
    else:
        number = float(number_text)
    return number, unit


# ---------------------------------------------------------------- formatting

_DECIMAL_BYTES = ("B", "KB", "MB", "GB", "TB", "PB", "EB")


def _scaled(value: float, base: float, names: tuple[str, ...]) -> tuple[float, str]:
    """``value`` divided by the largest power of ``base`` that keeps it >= 1."""
    magnitude = abs(value)
    index = 0
    while index + 1 < len(names) and magnitude >= base ** (index + 1):
        index += 1
    return value / base ** index, names[index]


def _shown(value: float, base: float, names: tuple[str, ...], significant: int | None) -> str:
    """``value`` scaled (``_scaled``) with two decimals, or with ``significant`` digits (as
    formula text shows numbers: ``4.82 ms``, ``15 us``, ``123 ns``); a value that rounds up
    to ``base`` moves to the next unit (``999.6 us`` -> ``1 ms``, not ``1e+03 us``)."""
    scaled, name = _scaled(value, base, names)
    if significant is None:
        return f"{scaled:.2f} {name}"
    text = f"{scaled:.{significant}g}"
    if abs(float(text)) >= base and name != names[-1]:
        scaled, name = scaled / base, names[names.index(name) + 1]
        text = f"{scaled:.{significant}g}"
    return f"{text} {name}"


def format_bytes(n: float, significant: int | None = None) -> str:
    """Bytes with decimal prefixes and two decimals: ``80000000000`` -> ``"80.00 GB"``.

    The one byte-unit policy of every surface (docs/architecture.md, "Units"): decimal
    prefixes, powers of 1000, as bandwidths (B/s) and times are shown, so a size read
    off the screen divided by a bandwidth read off the screen gives the time shown
    (``228 KiB`` of shared memory reads ``233.47 KB``). JSON carries raw numbers with
    the unit in the key name. ``significant``: that many significant digits instead of
    two decimals.
    """
    n = float(n)
    if not math.isfinite(n):
        return f"{n} B"
    if abs(n) < 1000:
        return f"{n:.0f} B" if float(n).is_integer() else f"{n:.2f} B"
    return _shown(n, 1000, _DECIMAL_BYTES, significant)


def format_exact_bytes(n: float, per: str | None = None) -> str:
    """Bytes written whole with thousands separators, as compilers report an allocation or a
    spill (ptxas: '8480 bytes spill stores') and an occupancy budget needs them, 4 bytes apart
    mattering: ``98304`` -> ``"98,304 B"``; ``per``: the thing each holds them, ``8480, "thread"``
    -> ``"8,480 B/thread"``; a fraction of a byte (a share, an estimate) rounds to the nearest
    whole: ``8704.25`` -> ``"8,704 B"``."""
    text = f"{float(n):,.0f} B"
    return text if per is None else f"{text}/{per}"


def format_bandwidth(bytes_per_s: float, significant: int | None = None) -> str:
    """B/s with decimal prefixes, as bandwidths are quoted: ``4.8e12`` -> ``"4.80 TB/s"``."""
    return _shown(float(bytes_per_s), 1000, ("B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s"), significant)


#: Significant digits of a byte count or a rate inside a formula of the predicted time's breakdown
#: (``24.58 KB / 128.7 GB/s = 191.0 ns``), so the reader can redo the arithmetic: two decimals
#: would print 4,101 B and 4,096 B alike.
FORMULA_DIGITS = 4


def format_bandwidth_per_ns(bytes_per_ns: float, significant: int | None = None) -> str:
    """A rate in B/ns, the unit the analysis computes in (1 B/ns = 1 GB/s), as every bandwidth
    is shown: ``128.7`` -> ``"128.70 GB/s"``, ``3307`` -> ``"3.31 TB/s"``."""
    return format_bandwidth(float(bytes_per_ns) * 1e9, significant)


def formula_bytes(n: float) -> str:
    """Bytes inside a breakdown formula, ``FORMULA_DIGITS`` significant digits: ``4101`` ->
    ``"4.101 KB"``."""
    return format_bytes(float(n), FORMULA_DIGITS)


def formula_rate(bytes_per_ns: float) -> str:
    """A rate in B/ns inside a breakdown formula: ``128.7`` -> ``"128.7 GB/s"``."""
    return format_bandwidth_per_ns(bytes_per_ns, FORMULA_DIGITS)


def format_time_ns(ns: float, significant: int | None = None) -> str:
    """Nanoseconds in the largest unit that keeps the number >= 1: ``2500`` -> ``"2.50 us"``
    (``significant=3``: ``"2.5 us"``)."""
    return _shown(float(ns), 1000, ("ns", "us", "ms", "s"), significant)


def format_duration_s(seconds: float) -> str:
    """How long a job of tfx's own would take, as a person plans around it: ``21.3`` ->
    ``"21 s"``, ``600`` -> ``"10 min"``, ``36000`` -> ``"10 h"`` (two significant digits of a
    second under two minutes)."""
    if seconds < 120:
        return f"{seconds:.2g} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def format_frequency(hz: float) -> str:
    """``1.98e9`` -> ``"1.98 GHz"``."""
    scaled, name = _scaled(hz, 1000, ("Hz", "kHz", "MHz", "GHz"))
    return f"{scaled:.2f} {name}"


def formula_frequency(cycles_per_ns: float) -> str:
    """A clock in cycles/ns (GHz), the unit the analysis computes in, inside a breakdown formula,
    as every frequency is shown: Hz with decimal prefixes and ``FORMULA_DIGITS`` significant
    digits, as formula_rate writes B/ns: ``1.98`` -> ``"1.98 GHz"``, ``1.98 x 0.907 = 1.79586``
    -> ``"1.796 GHz"``."""
    return _shown(float(cycles_per_ns) * 1e9, 1000, ("Hz", "kHz", "MHz", "GHz"), FORMULA_DIGITS)


_FLOP_RATES = ("flop/s", "KFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s")


def format_flops(flop_per_s: float, significant: int | None = None) -> str:
    """``9.894e14`` -> ``"989.40 TFLOP/s"`` (``significant=4``: ``"989.4 TFLOP/s"``)."""
    return _shown(float(flop_per_s), 1000, _FLOP_RATES, significant)


def formula_flop_rate(flop_per_ns: float) -> str:
    """A tensor or vector rate in flop/ns, the unit the analysis computes in (1 flop/ns =
    1 GFLOP/s), inside a breakdown formula, as every rate is shown: flop/s with decimal
    prefixes and ``FORMULA_DIGITS`` significant digits, as formula_rate writes B/ns as GB/s:
    ``6001.4592`` (4,096 flop/cycle x 1.98 GHz x 0.74) -> ``"6.001 TFLOP/s"``."""
    return format_flops(float(flop_per_ns) * 1e9, FORMULA_DIGITS)


def format_prefixed_count(n: float, unit: str) -> str:
    """A count of ``unit`` with a decimal prefix and two decimals, as work is written:
    ``137438953472, "flop"`` -> ``"137.44 Gflop"``, ``2097152, "op"`` -> ``"2.10 Mop"``; below
    1,000 a whole count is written whole (``0 flop``)."""
    x = float(n)
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.2f} {prefix}{unit}"
    return f"{x:.0f} {unit}" if x.is_integer() else f"{x:.2f} {unit}"


def format_percent(share: float, decimals: int = 1, sign: bool = True) -> str:
    """A share (a ratio, 1 = all) as percent with one decimal, as every surface writes one:
    ``0.375`` -> ``"37.5%"``, ``0.25`` -> ``"25.0%"``, ``1`` -> ``"100.0%"``. ``decimals``: more
    where two shares side by side would otherwise print alike (the near-tie line's gap and band:
    ``0.01836, 2`` -> ``"1.84%"`` against ``"1.83%"``). ``sign=False``: the digits alone, for a
    table column whose header carries the % (the scope table's ``time%``: ``"37.5"``)."""
    return f"{float(share) * 100:.{decimals}f}" + ("%" if sign else "")


def format_percent_value(pct: float) -> str:
    """A value already in percent (an occupancy, a share of the ideal) as format_percent writes a
    share: one decimal, ``37.5`` -> ``"37.5%"``."""
    return f"{float(pct):.1f}%"


def format_percent_change(change: float) -> str:
    """A relative change or error (a ratio, 0 = none) as a signed percent with one decimal, as
    format_percent writes a share: ``0.125`` -> ``"+12.5%"``, ``-0.022`` -> ``"-2.2%"``, ``0`` ->
    ``"+0.0%"``."""
    return f"{float(change) * 100:+.1f}%"


def format_whole(n: float) -> str:
    """A count the analysis holds as a real number (cycles of a mean trip, a row's elements, warps
    a SM, configurations a second), rounded to the nearest whole with thousands separators, as
    format_count writes a whole count: ``1234.6`` -> ``"1,235"``, ``64.0`` -> ``"64"``."""
    return f"{float(n):,.0f}"


def formula_cycles(cycles: float) -> str:
    """Cycles inside a breakdown formula where a mean warp's fraction of a cycle carries into the
    time (mma_layout's warp-mma issue: 64 mmas x 1.5 + 40 converts x 0.4 = 112.0 cycles), one
    decimal with thousands separators: ``1234.56`` -> ``"1,234.6"``; a whole count of cycles
    elsewhere is format_whole."""
    return f"{float(cycles):,.1f}"


def formula_share(share: float, decimals: int = 3) -> str:
    """A probability or a fraction that a breakdown formula multiplies by, to three decimals (a
    ratio inside arithmetic, where a percent would need converting back): ``0.87654`` ->
    ``"0.877"``; ``decimals``: where the formula needs more (a DRAM miss share, ``0.99871, 4`` ->
    ``"0.9987"``) or a model's efficiency fewer (``0.8512, 2`` -> ``"0.85"``)."""
    return f"{float(share):.{decimals}f}"


def formula_slope(ns_per_gb_per_s: float) -> str:
    """A latency's slope against the bandwidth drawn (a coefficient of a measured fit, not a time):
    ``0.01234`` -> ``"0.0123 ns per GB/s"``, four decimals."""
    return f"{float(ns_per_gb_per_s):.4f} ns per GB/s"


def format_significant(x: float, digits: int) -> str:
    """A dimensionless value with no unit family (an error, a tolerance, a model's scale factor, a
    value a person typed echoed back) to ``digits`` significant digits, an exponent when needed:
    ``0.000123456, 4`` -> ``"0.0001235"``, ``-1.98e9, 6`` -> ``"-1.98e+09"``."""
    return f"{float(x):.{digits}g}"


def format_times(factor: float, decimals: int = 2) -> str:
    """A factor of one quantity over another, ``x`` after: ``2.4`` -> ``"2.40x"`` (the roofline's
    'is 2.40x the roofline', a hint's '1.25x faster')."""
    return f"{float(factor):.{decimals}f}x"


def format_scale(factor: float, significant: int = 6) -> str:
    """A scale factor as a knob writes one, ``x`` first: ``2`` -> ``"x2"``, ``0.917, 3`` ->
    ``"x0.917"`` (a metric's change in tfx diff, a knob's value over the profile's)."""
    return f"x{float(factor):.{significant}g}"


def format_speedup(factor: float) -> str:
    """How much faster a hardware change makes a deployment, ``x`` first and three decimals so
    that knobs a few tenths of a percent apart rank visibly: ``1.0374`` -> ``"x1.037"``."""
    return f"x{float(factor):.3f}"


def format_cost(cost: float) -> str:
    """A hardware point's relative cost (the product of its knobs' factors), two decimals:
    ``1.5`` -> ``"1.50"``."""
    return f"{float(cost):.2f}"


def format_correlation(rho: float) -> str:
    """A rank correlation (Spearman's rho, -1..1), signed, two decimals: ``0.9234`` ->
    ``"+0.92"``."""
    return f"{float(rho):+.2f}"


def format_tokens_per_s(rate: float) -> str:
    """Tokens a second (a deployment's throughput), one decimal with thousands separators:
    ``12345.67`` -> ``"12,345.7"``; the unit ('tokens/s', 'tok/s/GPU') follows in the text."""
    return f"{float(rate):,.1f}"


def format_requests_per_s(rate: float) -> str:
    """Requests a second, three decimals with thousands separators (a request takes seconds, so
    a GPU serves a few a second): ``0.41666`` -> ``"0.417"``."""
    return f"{float(rate):,.3f}"


def format_time_compact(ns: float) -> str:
    """A time in the fewest cells, for an axis label: three significant digits, no space
    (``3084.2`` -> ``"3.08us"``, ``512`` -> ``"512ns"``)."""
    x = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}ns"


_TICK_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"))


def format_tick(v: float) -> str:
    """A tick value as people write it on a log axis: ``1e14`` -> ``"100T"``, ``2e9`` -> ``"2G"``,
    ``10``, ``0.5``, ``0.01``."""
    if v < 1:
        return f"{v:.3g}"
    for scale, prefix in _TICK_PREFIXES:
        if v >= scale:
            return f"{v / scale:g}{prefix}"
    return f"{v:g}"


def format_parameter_count(n: float) -> str:
    """A model's parameter count as model cards write it, three significant figures with a
    thousand-step suffix (B for billion): ``8030261248`` -> ``"8.03B"``, ``950`` -> ``"950"``."""
    x = float(n)
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:g}"


def format_intensity(flop_per_byte: float) -> str:
    """Arithmetic intensity, flop per byte, to three significant figures with thousands
    separators past them: ``63.0157`` -> ``"63.0 flop/B"``, ``4096`` -> ``"4,096 flop/B"``."""
    x = float(flop_per_byte)
    if abs(x) >= 100:
        return f"{x:,.0f} flop/B"
    r = float(f"{x:.3g}")                 # rounded first: 9.999 -> 10.0, not 10.00
    return f"{r:.{max(0, 2 - math.floor(math.log10(abs(r)))) if r else 0}f} flop/B"


def format_count(n: float) -> str:
    """Whole numbers with thousands separators (``65536`` -> ``"65,536"``), others two decimals
    (``1.5`` -> ``"1.50"``; an exact Fraction as its float: ``Fraction(3, 2)`` -> ``"1.50"``)."""
    if float(n).is_integer():
        return f"{int(n):,}"
    return f"{float(n):,.2f}"


def format_counted(n: float, noun: str, plural: str | None = None) -> str:
    """A count and its noun as a person writes them: singular at exactly one, else the plural
    (``noun + "s"`` unless given): ``1, "full wave"`` -> ``"1 full wave"``, ``132, "SM"`` ->
    ``"132 SMs"``, ``0, "full wave"`` -> ``"0 full waves"``, ``1.5, "wave"`` -> ``"1.50 waves"``."""
    return f"{format_count(n)} {noun if float(n) == 1 else (plural or noun + 's')}"


# verbs whose third-person singular is not the plural form + "s"
_SINGULAR_VERBS = {"are": "is", "have": "has", "do": "does", "go": "goes"}


def verb_for(n: float, verb: str) -> str:
    """The verb agreeing with a count of ``n`` (as format_counted picks the noun): ``verb`` is the
    plural form, made singular at exactly one (``+ "s"``, ``+ "es"`` after s/sh/ch/x/z, ``"are"``
    -> ``"is"``, ``"do"`` -> ``"does"``): ``1, "do"`` -> ``"does"``, ``2, "do"`` -> ``"do"``."""
    if float(n) != 1:
        return verb
    return _SINGULAR_VERBS.get(verb) or (verb + "es" if verb.endswith(("s", "sh", "ch", "x", "z")) else verb + "s")


def format_counted_verb(n: float, noun: str, verb: str, plural: str | None = None) -> str:
    """A count, its noun (format_counted) and the verb that follows, agreeing with it (verb_for):
    ``1, "CTA", "take"`` -> ``"1 CTA takes"``, ``2, "CTA", "take"`` -> ``"2 CTAs take"``,
    ``1, "knob", "change"`` -> ``"1 knob changes"``, ``3, "knob", "change"`` -> ``"3 knobs change"``."""
    return f"{format_counted(n, noun, plural)} {verb_for(n, verb)}"


# hierarchy and mesh levels whose profile names are acronyms people write in capitals
_LEVEL_ACRONYMS = {"sm": "SM", "pe": "PE", "cta": "CTA", "tpc": "TPC", "gpc": "GPC"}


def level_noun(level: str) -> str:
    """A profile's hierarchy or mesh level as prose names it: ``"sm"`` -> ``"SM"``, ``"pe"`` ->
    ``"PE"``; a word stays as it is (``"cube"``, ``"warp"``)."""
    return _LEVEL_ACRONYMS.get(level, level)


def format_quantity(value: float, unit: str) -> str:
    """A canonical value of any family for people: picks the matching helper."""
    if unit == "B":
        return format_bytes(value)
    if unit == "B/s":
        return format_bandwidth(value)
    if unit == "ns":
        return format_time_ns(value)
    if unit == "Hz":
        return format_frequency(value)
    if unit == "flop/s":
        return format_flops(value)
    if unit == "count":
        return format_count(value)
    return f"{format_plain(value)} {unit}"


def format_plain(value: float) -> str:
    """A fact in a unit without prefixes (a ratio, flop/cycle, B/cycle): whole numbers with
    thousands separators, others to six significant digits, as the profile states them:
    ``0.883`` -> ``"0.883"`` (two decimals printed the measured DRAM efficiency 0.88 beside
    'x efficiency 0.883' and the wgmma clock fraction 0.876 as 0.88), ``4096`` -> ``"4,096"``."""
    if float(value).is_integer():
        return format_count(value)
    return format(float(value), ",.6g")
