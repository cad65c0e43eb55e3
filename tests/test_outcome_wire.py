"""The analysis worker's outcome crosses to the app every keystroke (tfx.tui.core.Outcome.__reduce__):
its module travels as the places of its objects in the module parsed from the same text, which the
app parsed for its first analysis, and its profile as the job's profile name and knobs; the rest of
the analysis (the scope tree, the launches, the terms) as before."""
import os
import pickle
import pickletools
import subprocess
import sys
from pathlib import Path

from tfx.tui import core

ROOT = Path(__file__).resolve().parent.parent
GEMM = str(ROOT / "kernels" / "gemm.tile")


def gemm_outcome():
    return core.run_job(core.Job(1, GEMM, Path(GEMM).read_text(), None, "h200_sxm", later_hint=True))


def test_the_module_comes_back_as_the_one_this_process_parsed():
    """kernels/gemm.tile's walk has 6 ops (zeros, load A, load B, mma, cast, store): the op nodes of
    the scope tree that comes back hold the 6 ops of the module parsed here from the same text (the
    same objects, not copies), and the profile is the H200's that this process loaded for the job (the
    same object: _job_profile keeps it while its files are unchanged; 132 SMs, gmem at 4.8e12 B/s)."""
    out = gemm_outcome()
    back = pickle.loads(pickle.dumps(out))
    module = core._parse(GEMM, out.source_text)
    assert back.analysis.module is module and back.analysis.kernel is module.kernel("gemm")
    ops = module._ops_of("gemm")
    assert [op.opcode for op in ops] == ["zeros", "load", "load", "mma", "cast", "store"]
    nodes = [n.op for n in back.analysis.root.walk() if n.kind == "op" and n.op is not None]
    assert len(nodes) == 6 and all(any(op is node for node in nodes) for op in ops)
    assert back.analysis.profile is out.analysis.profile is core._job_profile("h200_sxm", ())
    assert back.analysis.profile.units_of("sm") == 132
    assert back.analysis.profile.get("memory.gmem.bandwidth") == 4.8e12
    assert back.analysis.metrics == out.analysis.metrics


def test_no_object_of_the_language_or_the_profile_travels():
    """The outcome's own bytes name no class of tfx.ir (Module, Kernel, Op, expressions), tfx.errors
    (SourceLocation) or tfx.hw (Profile, Fact): each is a place or the profile's name."""
    names = {arg.split(".")[1] for op, arg, _ in pickletools.genops(core._outcome_wire(gemm_outcome()))
             if isinstance(arg, str) and arg.startswith("tfx.")}
    assert "analysis" in names and not names & {"ir", "errors", "hw", "lang"}


def test_an_error_travels_as_its_line():
    """A job that fails (an unknown profile) has no analysis: its outcome pickles as plain data."""
    out = core.run_job(core.Job(3, GEMM, None, None, "no_such_profile"))
    back = pickle.loads(pickle.dumps(out))
    assert back.error == out.error and "'no_such_profile'" in back.error
    assert back.analysis is None and back.generation == 3


SENDER = """
import pickle, sys
from pathlib import Path
from tfx.tui import core
from tfx.present.analysis_report import render_text
outs = []
for path in sorted(Path('kernels').glob('*.tile')):
    out = core.run_job(core.Job(1, str(path), path.read_text(), None,
                                'sip' if path.name.startswith('sip_') else 'h200_sxm', later_hint=True))
    outs.append((pickle.dumps(out), render_text(out.analysis)))
pickle.dump(outs, sys.stdout.buffer)
"""

RECEIVER = """
import pickle, sys
from tfx.present.analysis_report import render_text
bad = [text for wire, text in pickle.load(sys.stdin.buffer) if render_text(pickle.loads(wire).analysis) != text]
print(len(bad))
"""


def test_another_process_with_other_string_hashes_reads_the_same_reports():
    """Every bundled kernel's outcome, pickled in a process and read in another whose string hashes
    differ (PYTHONHASHSEED 1 and 2: a set's order differs, a parse's does not), renders the same
    report there (the receiver parses each text itself)."""
    def env(seed):
        return {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    wire = subprocess.run([sys.executable, "-c", SENDER], cwd=ROOT, env=env("1"), capture_output=True, check=True)
    got = subprocess.run([sys.executable, "-c", RECEIVER], cwd=ROOT, env=env("2"), input=wire.stdout,
                         capture_output=True, check=True)
    assert got.stdout.decode().strip() == "0"


PROFILE = """base = "h200_sxm"
kind = "gpu"
description = "the H200 with another DRAM bandwidth"

[memory.gmem]
bandwidth = {{ value = {tbps}, unit = "TB/s", origin = "estimated", source = "a test" }}
"""


def test_a_job_s_profile_is_kept_while_its_files_are_unchanged(tmp_path):
    """A job's profile (a file based on h200_sxm, which is based on h100_sxm: three files) is loaded
    once and kept for the next keystroke; a knob makes a profile of its own, kept too (gmem x2: 4.0 x 2
    = 8.0e12 B/s); writing the file again (4.0 -> 4.25 TB/s: its size and time change) loads both
    again (4.25e12, x2 8.5e12 B/s)."""
    path = tmp_path / "mine.toml"
    path.write_text(PROFILE.format(tbps="4.0"))
    first = core._job_profile(str(path), ())
    assert [f.name for f in first.source_files()] == ["mine.toml", "h200_sxm.toml", "h100_sxm.toml"]
    assert first.get("memory.gmem.bandwidth") == 4.0e12
    assert core._job_profile(str(path), ()) is first
    knobbed = core._job_profile(str(path), (("memory.gmem.bandwidth", "x2"),))
    assert knobbed is not first and knobbed.get("memory.gmem.bandwidth") == 8.0e12
    assert core._job_profile(str(path), (("memory.gmem.bandwidth", "x2"),)) is knobbed
    path.write_text(PROFILE.format(tbps="4.25"))
    again = core._job_profile(str(path), ())
    assert again is not first and again.get("memory.gmem.bandwidth") == 4.25e12
    assert core._job_profile(str(path), (("memory.gmem.bandwidth", "x2"),)).get("memory.gmem.bandwidth") == 8.5e12
