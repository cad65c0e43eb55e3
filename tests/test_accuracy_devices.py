"""bench/accuracy.py reads each device's own campaigns (``--hw``, DEVICE_CALIBRATION): the H200's
under calibration/h200, the H100's under calibration/h100; a device with none, or the reference
tables (measured on the H200 only) priced on another profile, is one line and exit 2."""

from __future__ import annotations

import subprocess
import sys

from bench_script import ROOT, load_bench

bench = load_bench("accuracy")


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "bench" / "accuracy.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_each_profile_reads_its_own_device_folder():
    assert bench.DEVICE_CALIBRATION["h200_sxm"] == ROOT / "calibration" / "h200"
    assert bench.DEVICE_CALIBRATION["h100_sxm"] == ROOT / "calibration" / "h100"
    # the H100's campaigns are there, each row naming the H100's profile
    rows = (ROOT / "calibration" / "h100" / "measured" / "issue15" / "run61" / "rows.csv").read_text().splitlines()
    assert rows[1].split(",")[1] == "h100_sxm"


def test_a_device_without_campaigns_is_one_line_and_exit_2():
    out = run("--measured-only", "--hw", "a100_sxm", "--only", "softmax")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "accuracy: --hw: error: no issue 15 campaigns measured on 'a100_sxm' (measured: h200_sxm, h100_sxm)"]


def test_the_references_are_the_h200s_only():
    out = run("--hw", "h100_sxm")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert "the reference measurements are the H200's" in out.stderr and "--measured-only" in out.stderr


def test_the_h100s_softmax_rows_are_priced_on_its_profile():
    """run61's 4 softmax rows (116736 x 8192, the campaign's time ran out at its first softmax shape)
    come out under calibration/h100, one shape of 4 rows."""
    out = run("--measured-only", "--split", "all", "--hw", "h100_sxm", "--runs", "run61", "--only", "softmax")
    assert out.returncode == 0, out.stderr
    assert "calibration/h100/measured/issue15" in out.stdout
    line = next(x for x in out.stdout.splitlines() if x.startswith("  softmax ") and "116736x8192" in x)
    assert line.split()[2] == "4"


def test_estimated_resources_drop_the_compiled_counts(monkeypatch, capsys):
    """--estimated-regs prices each row without its compiled regs and spills but with its compiled
    shared memory; --estimated-smem drops that too (every resource as tfx explore has it). run82's
    four gqa_decode shapes: each priced row reaches the predictor with those fields None, the rest
    kept."""
    from tfx.analysis import measured
    seen = []
    real = measured.Predictor.compare

    def spy(self, rows):
        seen.append(list(rows))
        return real(self, rows)

    monkeypatch.setattr(measured.Predictor, "compare", spy)
    for flags, smem_kept in (({"estimated_regs": True}, True), ({"estimated_smem": True}, False)):
        seen.clear()
        bench.measured_families("all", ["gqa_decode"], ["run82"], **flags)
        rows = [r for batch in seen for r in batch]
        assert rows and all(r.regs is None and r.spills is None for r in rows)
        assert all((r.smem_bytes is not None) == smem_kept for r in rows)
    out = capsys.readouterr().out
    assert "priced with the estimated registers, spills and shared memory, not the compiled ones" in out
