"""Every number a person reads is formatted in one place (tfx/hw/units.py; docs/architecture.md,
"Units"): no f-string, ``%`` or ``format()`` of tfx/ outside it writes a number with its own
precision, grouping or type (``{x:.1f}``, ``{n:,}``, ``{b / 1e9:.2f}``, ``{s:.1%}``, ``{r:g}``,
``'%.3f' % x``, ``format(x, '.1%')``, ``'{:.2f}'.format(x)``), nor rounds one into text
(``{round(x, 2)}``, ``str(round(x))``).

Session 19 found 161 such lines (260 fields: 15 in tfx.present.formatting's own primitives, the
rest in the breakdown lines of tfx/analysis, the CLI, the TUI, tfx/model and the refusals) and routed each through a formatter of tfx/hw/units.py (adding the
kinds that had none: format_whole, formula_share, format_percent_change, format_significant, ...).
A width or an alignment alone (``{name:<14}``, ``{fmt.ns(t):>12}``) pads text, not a number, and
is not counted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The one module that formats numbers by hand, on purpose.
FORMATTER = "tfx/hw/units.py"

#: Places that format text no person reads as a number. Empty: every hit so far was person-facing.
#: An entry is ``"path:line-text fragment"`` and needs a reason beside it.
ALLOWED: dict[str, str] = {}

# a format spec that fixes a number's digits: a precision (.2, .{d}), grouping (, or _), or a float
# or percent presentation type at its end (f, e, g, %: '{x:g}' writes six significant digits)
_NUMBER_SPEC = re.compile(r"[,_]|\.\d|\.\{\}|[eEfFgG%]$")
# a printf conversion of a number: %d %i %u %o %x? no (hex is an identifier); %e %f %g with flags
_PRINTF_NUMBER = re.compile(r"%[-+ #0]*(\d+|\*)?(\.(\d+|\*))?[diueEfFgG]")
_FORMAT_FIELD = re.compile(r"\{[^{}]*:([^{}]*)\}")


def _spec_text(spec: ast.JoinedStr) -> str:
    return "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in spec.values)


def _is_round(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round"


def offenders(source: str) -> list[tuple[int, str]]:
    """(line, what) of each hand-formatted number in ``source``, in line order."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FormattedValue):
            if node.format_spec is not None and _NUMBER_SPEC.search(_spec_text(node.format_spec)):
                found.append((node.lineno, f"f-string spec {_spec_text(node.format_spec)!r}"))
            if _is_round(node.value):
                found.append((node.lineno, "round() in an f-string"))
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant)
              and isinstance(node.left.value, str) and _PRINTF_NUMBER.search(node.left.value)):
            found.append((node.lineno, "% formatting of a number"))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "format" and len(node.args) == 2:
                spec = node.args[1]
                if not (isinstance(spec, ast.Constant) and isinstance(spec.value, str)) or _NUMBER_SPEC.search(spec.value):
                    found.append((node.lineno, "format() with a number spec"))
            elif (isinstance(f, ast.Attribute) and f.attr == "format" and isinstance(f.value, ast.Constant)
                  and isinstance(f.value.value, str)
                  and any(_NUMBER_SPEC.search(m.group(1)) for m in _FORMAT_FIELD.finditer(f.value.value))):
                found.append((node.lineno, "str.format() with a number spec"))
            elif isinstance(f, ast.Name) and f.id == "str" and node.args and _is_round(node.args[0]):
                found.append((node.lineno, "str(round())"))
    return sorted(found)


def test_the_scan_finds_each_kind_of_hand_formatting():
    """One line of each kind, counted by hand: line 1 '{x:.1f} us' (a precision), line 2 '{n:,}'
    (grouping), line 3 '{b / 1e9:.2f} GB' (a precision after arithmetic), line 4 '{s:.1%}' and
    '{r:g}' (two fields, two hits: a percent type, a bare float type), line 5 '%.3f' % x, line 6
    format(m, '.1%'), line 7 '{:,.0f}'.format(c), line 8 round() inside an f-string, line 9
    str(round(x, 2)), line 10 a nested precision '{x:.{d}g}' = 10 lines, 11 hits. Not hits: line
    11 '{name:<14}' and '{t:>12}' (alignment only), line 12 '%s' % name (a string), line 13
    format(x) (no spec), line 14 '{x!r}' (a conversion, no spec), line 15 '{x:>{w}}' (a width
    from a variable, no precision)."""
    source = "\n".join([
        'a = f"{x:.1f} us"',
        'b = f"{n:,} rows"',
        'c = f"{b / 1e9:.2f} GB"',
        'd = f"{s:.1%} of {r:g}"',
        'e = "%.3f" % x',
        "f = format(m, '.1%')",
        'g = "{:,.0f} cycles".format(c)',
        'h = f"{round(x, 2)} ms"',
        "i = str(round(x, 2))",
        'j = f"{x:.{d}g}"',
        'k = f"{name:<14} {t:>12}"',
        'l = "%s" % name',
        "m = format(x)",
        'n = f"{x!r}"',
        'o = f"{x:>{w}}"',
    ])
    hits = offenders(source)
    assert [line for line, _ in hits] == [1, 2, 3, 4, 4, 5, 6, 7, 8, 9, 10]


def test_no_number_is_formatted_by_hand_outside_units():
    """Zero: every hand-formatted number of tfx/ (260 fields on 161 lines at the start of session
    19, none of them in a cache key or another text no person reads) now goes through
    tfx/hw/units.py, directly or through tfx.present.formatting, which wraps it by metric name."""
    found = []
    for path in sorted((ROOT / "tfx").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == FORMATTER:
            continue
        lines = path.read_text().splitlines()
        for line, what in offenders(path.read_text()):
            if not any(rel == k.split(":")[0] and k.split(":", 1)[1] in lines[line - 1] for k in ALLOWED):
                found.append(f"{rel}:{line}: {what}: {lines[line - 1].strip()}")
    assert found == []


def test_the_new_kinds_keep_the_digits_their_lines_wrote():
    """Each kind that had no formatter, with the digits its lines wrote by hand (worked by hand):
    cycles of a mean trip 1,234.6 rounded whole -> '1,235' ('{c:,.0f}'); a DRAM miss share 0.99871
    to four decimals -> '0.9987' ('{miss:.4f}'), a probability to three, 0.87654 -> '0.877'; a
    slope 0.012345 ns per GB/s -> '0.0123 ns per GB/s'; a relative error -0.022 -> '-2.2%' and +1/8
    -> '+12.5%' ('{e * 100:+.1f}%'); an occupancy already in percent 37.5 -> '37.5%'; a hint's
    speed-up 100 / 80 = 1.25 -> '1.25x'; a knob's factor 2 -> 'x2', a metric's 198.28 / 216.26 =
    0.91686... to three digits -> 'x0.917'; a hardware speed-up 1.0374 -> 'x1.037'; Spearman 0.9234
    -> '+0.92'; 12,345.67 tokens/s -> '12,345.7', 5 / 12 = 0.41666 requests/s -> '0.417'; an error
    0.000123456 to four digits -> '0.0001235'; a mean warp's 112.04 issue cycles -> '112.0';
    2^62 B = 4,611,686,018,427,387,904 B = 4.61 EB (the tensor-size refusal: '4.61e+18 bytes'
    before); a tick 1e14 -> '100T'."""
    from tfx.hw import units as u
    assert u.format_whole(1234.6) == "1,235" and u.format_whole(64.0) == "64"
    assert u.formula_share(0.99871, 4) == "0.9987" and u.formula_share(0.87654) == "0.877"
    assert u.formula_slope(0.012345) == "0.0123 ns per GB/s"
    assert u.format_percent_change(-0.022) == "-2.2%" and u.format_percent_change(1 / 8) == "+12.5%"
    assert u.format_percent_value(37.5) == "37.5%"
    assert u.format_times(100 / 80) == "1.25x"
    assert u.format_scale(2) == "x2" and u.format_scale(198.28 / 216.26, 3) == "x0.917"
    assert u.format_speedup(1.0374) == "x1.037" and u.format_correlation(0.9234) == "+0.92"
    assert u.format_tokens_per_s(12345.67) == "12,345.7" and u.format_requests_per_s(5 / 12) == "0.417"
    assert u.format_significant(0.000123456, 4) == "0.0001235"
    assert u.formula_cycles(112.04) == "112.0"
    assert u.format_bytes(2 ** 62) == "4.61 EB"
    assert u.format_tick(1e14) == "100T"
