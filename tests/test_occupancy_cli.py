"""``tfx occupancy`` end to end: one configuration, CSV, ptxas and cuobjdump input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tfx.hw", reason="tfx.hw (profile loader) is not available yet")

from tfx.cli.main import main  # noqa: E402

DATA = Path(__file__).parent / "data" / "occupancy"
SM120 = str(DATA / "rtx5070ti_sm120.toml")   # RTX 5070 Ti occupancy facts
H200 = str(DATA / "h200_occupancy.toml")     # H200 occupancy facts, all 14 spelled out


def run(capsys, *argv, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    rc = main(["occupancy", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_one_configuration_json_with_unmet_hint(capsys):
    """384 threads, 168 regs, 100,484 B on sm_120 (derivations in test_occupancy.py):
    1 CTA, registers and shared memory tie; for occupancy=4 at most 40 registers
    (48 warps: 65536 // 48 = 1365 -> 1280 / 32) and 102400 // 4 - 1024 = 24,576 B."""
    rc, out, _ = run(capsys, "--hw", SM120, "--threads", "384", "--regs", "168",
                     "--smem", "100484", "--occupancy", "4", "--json")
    assert rc == 0
    j = json.loads(out)
    assert (j["blocks_per_sm"], j["limiter"], j["hint_met"]) == (1, "registers", False)
    assert j["limiters"] == ["registers", "shared memory"]
    assert j["active_warps"] == 12 and j["max_warps_per_sm"] == 48
    assert j["occupancy_pct"] == 25.0
    assert j["budget"]["max_regs_per_thread"] == 40
    assert j["budget"]["max_smem_per_cta"] == 24576
    assert j["budget"]["blockers"] == ["registers", "shared memory"]


def test_one_configuration_text(capsys):
    rc, out, _ = run(capsys, "--hw", SM120, "--threads", "384", "--regs", "168",
                     "--smem", "100484", "--occupancy", "2")
    assert rc == 0
    assert "1 CTA/SM (12 of 48 warps, 25.0%), limited by registers and shared memory" in out
    assert "2 CTAs need at most 50,176 B of shared memory per CTA; this kernel uses 100,484 B" in out
    assert "occupancy=2 is unattainable as compiled" in out


def test_honoured_hint_is_met(capsys):
    rc, out, _ = run(capsys, "--hw", SM120, "--threads", "256", "--regs", "128",
                     "--smem", "44068", "--occupancy", "2", "--json")
    j = json.loads(out)
    assert (rc, j["blocks_per_sm"], j["hint_met"], j["budget"]) == (0, 2, True, None)


def test_static_smem_adds_to_dynamic(capsys):
    """40,000 static + 3,076 dynamic + 1,024 reserved = 44,100 -> 44,160 B on an H200:
    233472 // 44160 = 5."""
    rc, out, _ = run(capsys, "--hw", H200, "--threads", "128", "--regs", "32",
                     "--smem", "3076", "--static-smem", "40000", "--json")
    assert json.loads(out)["blocks_per_sm"] == 5


def test_missing_flags_and_bad_values_exit_2(capsys):
    rc, _, err = run(capsys, "--hw", SM120, "--threads", "128")
    assert rc == 2 and "--regs required" in err
    rc, _, err = run(capsys, "--hw", SM120, "--threads", "0", "--regs", "32")
    assert rc == 2 and err.startswith("--threads: error: expected a whole number in 1..")
    assert err.rstrip().endswith(", found '0' (see tfx occupancy --help)")
    assert len(err.strip().splitlines()) == 1  # one line, not argparse's usage + error


# --------------------------------------------------------------------------- CSV

def test_csv_rows_gain_blocks_and_limiter(tmp_path, capsys):
    """sm_120: 128 threads, 32 regs -> threads 1536 // 128 = 12 (warps 48 // 4 = 12,
    registers 1024/warp -> 64 warps // 4 = 16, smem 102400 // 1024 = 100): 12, threads.
    384/168/100,484 -> 1, registers. 2000 threads exceed 1024 -> 0, infeasible."""
    src = tmp_path / "configs.csv"
    src.write_text("name,threads,regs,smem,static_smem\n"
                   "a,128,32,0,0\n"
                   "\"b,c\",384,168,100484,0\n"
                   "\n"
                   "d,2000,32,0,0\n")
    rc, out, _ = run(capsys, "--hw", SM120, "--csv", str(src))
    assert rc == 0
    assert list(csv.reader(io.StringIO(out))) == [
        ["name", "threads", "regs", "smem", "static_smem", "blocks_per_sm", "limiter"],
        ["a", "128", "32", "0", "0", "12", "threads"],
        ["b,c", "384", "168", "100484", "0", "1", "registers"],
        ["d", "2000", "32", "0", "0", "0", "infeasible"],
    ]


def test_csv_from_stdin_reproduces_the_oracle(capsys, monkeypatch):
    """The 672 H200 oracle rows, renamed to the CLI's columns, through stdin."""
    with open(DATA / "occupancy_sample.csv", newline="") as fh:
        oracle = list(csv.DictReader(fh))
    text = "threads,regs,smem,static_smem\n" + "".join(
        f"{r['threads']},{r['num_regs']},{r['dyn_smem']},{r['static_smem']}\n" for r in oracle)
    rc, out, _ = run(capsys, "--hw", H200, "--csv", "-", stdin=text, monkeypatch=monkeypatch)
    assert rc == 0
    got = [int(r["blocks_per_sm"]) for r in csv.DictReader(io.StringIO(out))]
    assert got == [int(r["blocks_per_sm"]) for r in oracle]


@pytest.mark.parametrize("body, where, words", [
    ("threads,regs,smem\n128,32,0\n256,x,0\n", ":3:", "column regs: 'x' is not a whole number"),
    ("threads,regs,smem\n128,32,-5\n", ":2:", "column smem: -5 must be >= 0"),
    ("threads,regs,smem\n0,32,0\n", ":2:", "column threads: 0 must be >= 1"),
    ("threads,regs,smem\n128,32\n", ":2:", "2 fields, the header has 3"),
    ("threads,smem\n128,0\n", ":1:", "missing column regs"),
    ("threads,regs,smem,limiter\n128,32,0,x\n", ":1:", "column limiter is already present"),
    ("", "", "empty CSV"),
])
def test_csv_bad_rows_name_file_line_and_column(tmp_path, capsys, body, where, words):
    src = tmp_path / "bad.csv"
    src.write_text(body)
    rc, _, err = run(capsys, "--hw", SM120, "--csv", str(src))
    assert rc == 2
    assert f"{src}{where}" in err
    assert words in err


def test_csv_missing_file(capsys):
    rc, _, err = run(capsys, "--hw", SM120, "--csv", "/nonexistent/x.csv")
    assert rc == 2 and "no such file" in err


def test_csv_hint_column_and_json(tmp_path, capsys):
    src = tmp_path / "c.csv"
    src.write_text("threads,regs,smem\n256,128,44068\n384,168,100484\n")
    rc, out, _ = run(capsys, "--hw", SM120, "--csv", str(src), "--occupancy", "2", "--json")
    assert rc == 0
    assert [(r["blocks_per_sm"], r["hint_met"]) for r in json.loads(out)] == [(2, True), (1, False)]


def test_csv_thousands_of_rows_one_vectorised_call_same_as_scalar(tmp_path, capsys, monkeypatch):
    """The CSV path answers every row with ONE call of the vectorised model (its speed is
    bench/occupancy_speed.py's figure, not a timed test) and agrees with the scalar
    ``compute_occupancy`` row by row. The first row is the worked sm_120 case above: 384
    threads, 168 regs, 100,484 B -> 1 CTA limited by registers (tie with shared memory,
    registers named first)."""
    import tfx.cli.cmd_occupancy as cmd
    from tfx.analysis.occupancy import OccupancyLimits, Resources, compute_occupancy
    from tfx.hw import load_profile

    rng = np.random.default_rng(1)
    n = 5_000
    rows = np.column_stack([rng.integers(1, 1025, n), rng.integers(0, 256, n),
                            rng.integers(0, 101377, n)])
    rows[0] = (384, 168, 100484)
    src = tmp_path / "many.csv"
    src.write_text("threads,regs,smem\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")

    calls: list[int] = []
    vectorised = cmd.blocks_per_sm_array

    def counting(limits, threads, *rest):
        calls.append(len(threads))
        return vectorised(limits, threads, *rest)

    def no_scalar(*_a, **_k):
        raise AssertionError("the CSV path must not call the scalar model per row")

    monkeypatch.setattr(cmd, "blocks_per_sm_array", counting)
    monkeypatch.setattr(cmd, "compute_occupancy", no_scalar)
    rc, out, _ = run(capsys, "--hw", SM120, "--csv", str(src))
    monkeypatch.undo()
    assert rc == 0
    assert calls == [n]
    answered = list(csv.DictReader(io.StringIO(out)))
    assert len(answered) == n
    assert (answered[0]["blocks_per_sm"], answered[0]["limiter"]) == ("1", "registers")

    limits = OccupancyLimits.from_profile(load_profile(SM120))
    for (t, r, s), got in zip(rows.tolist(), answered):
        o = compute_occupancy(limits, Resources(t, r, s))
        assert (int(got["blocks_per_sm"]), got["limiter"]) == (o.blocks_per_sm, o.limiter), (t, r, s)


# --------------------------------------------------------------------------- compiler output

def test_ptxas_json_row_per_function(capsys):
    """k64 at 256 threads on an H200: 64*32 = 2048 registers per warp, 65536 // 2048
    = 32 warps, 256 threads = 8 warps -> 4 CTAs (threads 2048 // 256 = 8)."""
    rc, out, _ = run(capsys, "--hw", H200, "--ptxas", str(DATA / "ptxas_v_sm90a.txt"),
                     "--threads", "256", "--json")
    assert rc == 0
    functions = json.loads(out)["functions"]
    assert len(functions) == 18
    k64 = next(f for f in functions if f["function"]["base_name"] == "k64")
    assert k64["occupancy"]["256"]["blocks_per_sm"] == 4
    assert k64["occupancy"]["256"]["limiter"] == "registers"
    assert k64["occupancy"]["256"]["resources"]["origin"] == "imported"


def test_ptxas_text_without_threads_shows_block_sizes(capsys):
    rc, out, _ = run(capsys, "--hw", H200, "--ptxas", str(DATA / "ptxas_v_sm90a.txt"))
    assert rc == 0
    assert "18 functions" in out
    assert "@128" in out and "@1024" in out
    assert "k232" in out


def test_ptxas_text_writes_occupancy_as_every_surface(capsys):
    """The table's occupancy column with one decimal of a percent, as the headline writes it
    ('1 CTA/SM (12 of 48 warps, 25.0%)', fmt.percent): k255 at 256 threads on an H200, 255
    registers -> 256 a thread (granularity 8) x 32 = 8,192 a warp, 65,536 // 8,192 = 8 warps =
    one CTA of 256 / 32 = 8 warps: 8 of 64 warps = 12.5% (the column wrote '12%', .0f rounding
    12.5 to even)."""
    rc, out, _ = run(capsys, "--hw", H200, "--ptxas", str(DATA / "ptxas_v_sm90a.txt"), "--threads", "256")
    assert rc == 0
    row = next(line for line in out.splitlines() if line.startswith("k255 "))
    assert row.rstrip().endswith(" 12.5%")


def test_res_usage_text_with_hint(capsys):
    rc, out, _ = run(capsys, "--hw", SM120, "--res-usage",
                     str(DATA / "res_usage_sm120_sm90a.txt"), "--threads", "256",
                     "--occupancy", "2")
    assert rc == 0
    assert "gemm_occupancy2" in out and "layers::attention" in out
    assert "met" in out


def test_malformed_ptxas_exits_2_with_location(tmp_path, capsys):
    src = tmp_path / "bad.txt"
    src.write_text("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                   "ptxas info    : Used many registers\n")
    rc, _, err = run(capsys, "--hw", SM120, "--ptxas", str(src))
    assert rc == 2
    assert f"{src}:2:17: error:" in err


def test_the_result_names_its_knobs(capsys):
    """--knob occupancy.max_blocks_per_sm=1 caps the SM at one CTA: 256 threads are 8 warps,
    8 of 64 = 12.5%; the text header and the JSON both name the knob as given."""
    rc, out, _ = run(capsys, "--hw", "h200_sxm", "--threads", "256", "--regs", "32",
                     "--knob", "occupancy.max_blocks_per_sm=1")
    assert rc == 0
    assert out.splitlines()[0].startswith("h200_sxm with occupancy.max_blocks_per_sm=1: 256 threads")
    assert "1 CTA/SM (8 of 64 warps, 12.5%), limited by blocks" in out
    rc, out, _ = run(capsys, "--hw", "h200_sxm", "--threads", "256", "--regs", "32",
                     "--knob", "occupancy.max_blocks_per_sm=1", "--json")
    data = json.loads(out)
    assert data["knobs"] == {"occupancy.max_blocks_per_sm": "1"}
    assert data["blocks_per_sm"] == 1


def test_the_table_writes_every_byte_count_with_its_unit_and_the_json_carries_what_the_sm_has(capsys):
    """40,000 static + 3,076 dynamic = 43,076 B a CTA, + 1,024 B reserved = 44,100 -> 44,160 B
    (a multiple of 128) on an H200, whose SM has 2,048 threads, 64 warps, 32 CTAs, 65,536
    registers and 233,472 B of shared memory: the first line writes the static and dynamic parts
    as bytes (they were bare numbers), the JSON carries the SM's limits the table's 'SM has'
    column and its reserved shared memory show."""
    rc, out, _ = run(capsys, "--hw", H200, "--threads", "128", "--regs", "32",
                     "--smem", "3076", "--static-smem", "40000")
    assert rc == 0
    assert "(40,000 B static + 3,076 B dynamic)" in out
    assert "43,076 B + 1,024 reserved = 44,160 B" in out
    assert "128 threads, 32 registers/thread" in out
    rc, out, _ = run(capsys, "--hw", H200, "--threads", "128", "--regs", "32",
                     "--smem", "3076", "--static-smem", "40000", "--json")
    limits = json.loads(out)["limits"]
    assert (limits["max_threads_per_sm"], limits["max_warps_per_sm"], limits["max_blocks_per_sm"],
            limits["regs_per_sm"], limits["smem_per_sm"], limits["reserved_smem_per_block"]) == (
        2048, 64, 32, 65536, 233472, 1024)
