"""tfx.analysis.measured (the measurements reader and the accuracy figures) and `tfx validate`.

Every expected number is derived by hand in the test's comment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfx.analysis.measured import (Compared, MeasuredRow, figures, read_measurements, read_ncu, spearman,
                                   ranks)
from tfx.bundled import bundled_kernel
from tfx.cli.main import main
from tfx.errors import SourceLocation, TfxError

ROOT = Path(__file__).resolve().parent.parent
GEMM = str(ROOT / "kernels" / "gemm.tile")


def _write(tmp_path, text, name="m.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_ranks_share_ties():
    # 5, 5, 7: the two fives hold positions 1 and 2 -> both rank 1.5; 7 is rank 3
    assert ranks([5.0, 5.0, 7.0]) == [1.5, 1.5, 3.0]


def test_spearman_by_hand():
    # ranks x = 1 2 3 4, y = 1 3 2 4: d^2 = 0 + 1 + 1 + 0 = 2; rho = 1 - 6*2 / (4*(16-1)) = 1 - 12/60 = 0.8
    assert spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    # reversed order: d^2 = 9 + 1 + 1 + 9 = 20; rho = 1 - 120/60 = -1
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2], [1, 2]) is None          # fewer than 3 rows
    assert spearman([1, 1, 1], [1, 2, 3]) is None    # a constant side has no ranking


def _c(pred, meas, spills=0):
    row = MeasuredRow(SourceLocation("x.csv", 2, 1), Path(GEMM), None, meas, {}, spills=spills)
    return Compared(row, pred, bool(spills))


def test_figures_regret_and_errors():
    # predicted 1.0 / 2.0 / 3.0 ms, measured 1.5 / 1.0 / 3.0 ms
    # errors: (1-1.5)/1.5 = -1/3, (2-1)/1 = +1, 0 -> |.| sorted 0, 1/3, 1: median 1/3; signed median 0
    # ranked first: the 1.0 ms prediction, measured 1.5; best measured 1.0 -> regret 1.5/1.0 - 1 = 0.5
    rows = [_c(1.0, 1.5), _c(2.0, 1.0), _c(3.0, 3.0)]
    g = figures("f", "s", rows)
    assert g.median_abs_error == pytest.approx(1 / 3)
    assert g.median_error == pytest.approx(0.0)
    assert g.regret == pytest.approx(0.5)
    # ranks pred 1 2 3, measured 2 1 3: d^2 = 1 + 1 + 0 = 2 -> rho = 1 - 12/(3*8) = 0.5
    assert g.spearman == pytest.approx(0.5)
    assert not g.spill_ranked_first_wrongly


def test_spilling_config_ranked_first_is_flagged():
    # the spilling row is predicted fastest (0.5 ms) but measures 4.0; a clean row measures 1.0
    g = figures("f", "s", [_c(0.5, 4.0, spills=100), _c(1.0, 1.0)])
    assert g.spill_ranked_first_wrongly
    assert g.n_spilling == 1
    assert g.spilling_median_abs_error == pytest.approx(abs(0.5 - 4.0) / 4.0)   # 0.875


def test_read_measurements_columns(tmp_path):
    p = _write(tmp_path, f"kernel,profile,measured_ms,M,BM,regs,spills,smem_bytes,family,status\n"
                         f"{GEMM},h200_sxm,0.25,1024,,168,0,49152,g,ok\n"
                         f"{GEMM},h200_sxm,0.50,1024,64,,,,g,out_of_resources\n")
    rows = read_measurements(p)
    assert len(rows) == 1                        # the out_of_resources row is skipped
    r = rows[0]
    assert r.params == {"M": 1024}               # an empty BM means the default
    assert (r.regs, r.spills, r.smem_bytes) == (168, 0, 49152)
    assert r.resources() == {"regs": 168, "spills": 0, "smem": 49152}
    assert r.family == "g" and r.where.line == 2
    assert len(read_measurements(p, all_status=True)) == 2


def test_read_measurements_takes_the_compiled_local_bytes(tmp_path):
    """``local_bytes`` (LDL + STL bytes a thread of the SASS) is a compiled resource like spills:
    read as a whole number, handed to analyze under the same name; empty means not given."""
    p = _write(tmp_path, f"kernel,measured_ms,M,regs,spills,smem_bytes,local_bytes\n"
                         f"{GEMM},0.25,1024,32,1150,8,13632\n"
                         f"{GEMM},0.25,1024,168,0,8,\n")
    a, b = read_measurements(p)
    assert a.local_bytes == 13632 and b.local_bytes is None
    assert a.resources() == {"regs": 32, "spills": 1150, "smem": 8, "local_bytes": 13632}
    assert "local_bytes" not in b.resources()


@pytest.mark.parametrize("text, where, words", [
    ("kernel,BM\nx,1\n", ":1:1", "missing column 'measured_ms'"),
    (f"kernel,measured_ms,local_bytes\n{GEMM},1.0,-4\n", ":2:3", "column 'local_bytes' must not be negative"),
    (f"kernel,measured_ms,FOO\n{GEMM},1.0,3\n", ":2:3", "column 'FOO' is neither a parameter"),
    (f"kernel,measured_ms\n{GEMM},-1\n", ":2:2", "positive time"),
    (f"kernel,measured_ms,BM\n{GEMM},1.0,12.5\n", ":2:3", "not a whole number"),
    ("kernel,measured_ms\nnope.tile,1.0\n", ":2:1", "not found"),
    (f"kernel,measured_ms\n{GEMM},1.0,7\n", ":2:1", "3 fields, the header has 2"),
])
def test_read_measurements_errors_name_the_cell(tmp_path, text, where, words):
    p = _write(tmp_path, text)
    with pytest.raises(TfxError) as exc:
        read_measurements(p)
    assert str(exc.value.where).endswith(where)
    assert words in exc.value.message


def test_a_missing_kernel_that_tfx_ships_is_named_in_a_note(tmp_path, monkeypatch):
    """A CSV written on the machine that measured it names ``kernels/gemm.tile``; read from a
    folder where no such file is (the working directory and the CSV's folders), the error keeps
    its cell and says where tfx's own gemm.tile is, as `tfx analyze` does for a missing path; a
    name tfx does not ship gets no note."""
    monkeypatch.chdir(tmp_path)
    p = _write(tmp_path, "kernel,measured_ms\nkernels/gemm.tile,1.0\nkernels/nope.tile,1.0\n")
    with pytest.raises(TfxError) as exc:
        read_measurements(p)
    assert str(exc.value.where).endswith(":2:1")
    assert exc.value.notes == (f"tfx ships gemm.tile as {bundled_kernel('gemm.tile')}",)
    q = _write(tmp_path, "kernel,measured_ms\nkernels/nope.tile,1.0\n", "q.csv")
    with pytest.raises(TfxError) as exc:
        read_measurements(q)
    assert exc.value.notes == ()


NCU = ('"ID","Kernel Name","Block Size","Grid Size","gpu__time_duration.sum","launch__registers_per_thread",'
       '"launch__shared_mem_per_block_dynamic","launch__shared_mem_per_block_static"\n'
       '"","","","","usecond","register/thread","Kbyte/block","byte/block"\n'
       '"0","matmul_kernel","(256, 1, 1)","(224, 1, 1)","175.74","207","147","1,024"\n')


def test_read_ncu_units(tmp_path):
    p = _write(tmp_path, "==PROF== Connected\n" + NCU, "n.csv")
    (launch,) = read_ncu(p)
    # 175.74 usecond = 0.17574 ms; 147 Kbyte = 147000 B dynamic + 1,024 B static = 148024 B
    assert launch.measured_ms == pytest.approx(0.17574)
    assert launch.regs == 207
    assert launch.smem_bytes == 148024
    assert launch.where.line == 4                # the ==PROF== line counts
    assert launch.kernel_name == "matmul_kernel"


def test_read_ncu_refuses_unknown_unit(tmp_path):
    p = _write(tmp_path, NCU.replace('"usecond"', '"fortnight"'), "n.csv")
    with pytest.raises(TfxError, match="unit 'fortnight'"):
        read_ncu(p)


def test_validate_cli_json_and_errors(tmp_path, capsys):
    p = _write(tmp_path, f"kernel,measured_ms,M,N,K,BM,BN\n{GEMM},0.30,4096,4096,4096,128,128\n"
                         f"{GEMM},0.40,4096,4096,4096,64,64\n{GEMM},0.90,4096,4096,4096,32,32\n")
    assert main(["validate", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (g,) = out["groups"]
    assert g["rows"] == 3 and g["shape"] == "M=4096 N=4096 K=4096"   # grouped by the problem size
    assert len(out["rows"]) == 3
    bad = _write(tmp_path, "kernel,measured_ms\n", "bad.csv")
    assert main(["validate", str(bad)]) == 2
    assert "no rows" in capsys.readouterr().err


def test_validate_names_estimate_in_its_json_and_header(tmp_path, capsys):
    """--estimate prices the rows without the CSV's compiled regs/spills/smem_bytes: the JSON did
    not say so and the header read '3 rows, 1 groups' for both (session 12, audit12)."""
    p = _write(tmp_path, f"kernel,measured_ms,M,N,K,BM,BN\n{GEMM},0.30,4096,4096,4096,128,128\n"
                         f"{GEMM},0.40,4096,4096,4096,64,64\n{GEMM},0.90,4096,4096,4096,32,32\n")
    assert main(["validate", str(p), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["estimate"] is False
    assert main(["validate", str(p), "--json", "--estimate"]) == 0
    assert json.loads(capsys.readouterr().out)["estimate"] is True
    assert main(["validate", str(p), "--estimate"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{p}: 3 rows, 1 group (profile h200_sxm where the CSV names none), compiled as triton, timed after an L2 "
        "clear; resources estimated by tfx (--estimate: the regs, spills and smem_bytes columns ignored)")


def test_validate_header_names_the_profiles_that_priced_the_rows(tmp_path, capsys):
    """The header said '(profile h200_sxm where the CSV names none)' for a file whose every row names h100_sxm
    (run86), as if --hw had priced them: it names the rows' own profile, and --hw's only for the rows naming none."""
    both = _write(tmp_path, f"kernel,profile,measured_ms,M,N,K,BM,BN\n{GEMM},h100_sxm,0.30,4096,4096,4096,128,128\n"
                            f"{GEMM},h100_sxm,0.40,4096,4096,4096,64,64\n", "named.csv")
    assert main(["validate", str(both)]) == 0
    assert "(profile h100_sxm, as its rows name it)" in capsys.readouterr().out.splitlines()[0]
    mixed = _write(tmp_path, f"kernel,profile,measured_ms,M,N,K,BM,BN\n{GEMM},h100_sxm,0.30,4096,4096,4096,128,128\n"
                             f"{GEMM},,0.40,4096,4096,4096,64,64\n", "mixed.csv")
    assert main(["validate", str(mixed)]) == 0
    assert ("(profiles h100_sxm as its rows name them, h200_sxm for the 1 row naming none)"
            in capsys.readouterr().out.splitlines()[0])


def test_validate_ncu(tmp_path, capsys):
    p = _write(tmp_path, NCU, "n.csv")
    assert main(["validate", GEMM, "--ncu", str(p), "--set", "BM=128", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rows"][0]["measured_ms"] == pytest.approx(0.17574)
    # Nsight Compute flushes the caches before each replay: its rows are priced from a clean L2
    assert out["timing"] == "clean"
    assert main(["validate", GEMM, "--ncu", str(p), "--set", "NOPE=1"]) == 2


def test_validate_text_writes_times_by_the_one_unit_policy(tmp_path, capsys):
    """Measured 0.30 ms = 300,000 ns: the text writes it 300.00 us (as analyze writes a
    prediction), not '0.3 ms'; with one row that row is both ranked first and best; the --rows
    table writes the measured time the same way."""
    p = _write(tmp_path, f"kernel,measured_ms,M,N,K,BM,BN\n{GEMM},0.30,4096,4096,4096,128,128\n")
    assert main(["validate", str(p), "--rows"]) == 0
    out = capsys.readouterr().out
    assert "(300.00 us measured), best measured " in out and out.count("(300.00 us)") == 1
    row = next(line for line in out.splitlines() if line.lstrip().startswith(f"{p}:2:1"))
    assert row.split()[-3:-1] == ["300.00", "us"]


def test_validate_warns_of_a_row_faster_than_its_roofline(tmp_path, capsys):
    """gemm.tile 4096^3 at its defaults (128 x 128 x 64 tiles, 4 warps, 3 stages) on h200_sxm: its
    roofline is the shared memory's, 65,536 trips x (49,152 B of wgmma operand reads + 32,768 B
    of copies) = 5,368,709,120 B / 33,454.08 B/ns = 160,479.4 -> 160,480 ns (tests/test_present.py),
    the least time any schedule needs. A row measured 0.150 ms = 150,000 ns is under it: a wrong
    unit, profile or rate, which validate names with the row; 0.300 ms (64 x 64 tiles) is not."""
    p = _write(tmp_path, f"kernel,measured_ms,M,N,K,BM,BN\n{GEMM},0.150,4096,4096,4096,128,128\n"
                         f"{GEMM},0.300,4096,4096,4096,64,64\n")
    assert main(["validate", str(p)]) == 0
    out = capsys.readouterr().out
    assert (f"  warning: 1 row ran faster than its roofline, the least time the profile's peak rates allow "
            f"({p}:2:1: measured 150.00 us, roofline 160.48 us)") in out
    assert main(["validate", str(p), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["roofline_ms"], r["faster_than_roofline"]) for r in rows][0] == (0.16048, True)
    assert rows[1]["faster_than_roofline"] is False
