"""A refused command-line argument is one line in the form of every refused input:
``where: error: what was expected[, found 'TEXT']``, exit 2.

``where`` is the option and the name it assigns (``--set BM``, ``--knob hbm.bandwidth``), as
``file:key`` names a key, or the option alone when no name can be read from the text; argparse's
own refusals say which help to read. Before, the same mistakes came in three forms:
``error: --set BM=abc: expected an integer``, ``--knob: error: knob hbm.bandwidth=zz: ...`` and
``--set BM: error: ...`` (tfx.errors.argument_error and tfx.cli.common.usage_error_line now build
them all). Each expected line below is the rule applied to the input by hand.
"""

from __future__ import annotations

import pytest

from tfx.bundled import bundled_kernel
from tfx.cli.main import main

GEMM = str(bundled_kernel("gemm.tile"))

CASES = [
    # NAME=VALUE assignments (tfx.assignments): no '=' names nothing, so the option alone
    (["analyze", GEMM, "--set", "BM"], "--set: error: expected NAME=VALUE, found 'BM'"),
    (["analyze", GEMM, "--set", "=64"], "--set: error: expected NAME=VALUE, found '=64'"),
    (["analyze", GEMM, "--set", "BM=abc"], "--set BM: error: expected an integer, found 'abc'"),
    # several in one item, comma-separated: a piece without '=' is a list of values, which is a
    # sweep's (the piece is what is shown; a trailing comma leaves an empty piece: the whole item)
    (["analyze", GEMM, "--set", "BM=64,128"],
     "--set: error: expected NAME=VALUE pairs separated by commas (A=1,B=2), one value a name "
     "(a list of values is tfx explore's sweep), found '128'"),
    (["analyze", GEMM, "--set", "BM=64,"],
     "--set: error: expected NAME=VALUE pairs separated by commas (A=1,B=2), one value a name "
     "(a list of values is tfx explore's sweep), found 'BM=64,'"),
    (["analyze", GEMM, "--set", "BM=64,BN=abc"], "--set BN: error: expected an integer, found 'abc'"),
    (["analyze", GEMM, "--knob", "hbm.bandwidth=x2,qqq=1"], "--knob qqq: error: unknown fact in profile h200_sxm"),
    (["analyze", GEMM, "--set", "BM=064"],
     "--set BM: error: expected an integer without leading zeros, found '064'"),
    (["analyze", GEMM, "--set", f"BM={2 ** 63}"],          # one past INT64_MAX
     f"--set BM: error: does not fit a 64-bit integer, found '{2 ** 63}'"),
    # the parameter's declared domain (gemm.tile: BM in 16..512 step x2) and its name
    (["analyze", GEMM, "--set", "BM=48"], "--set BM: error: BM=48 is outside its declared domain 16..512 step x2"),
    (["analyze", GEMM, "--set", "ZZ=1"],
     "--set ZZ: error: kernel gemm has no parameter 'ZZ' (parameters: M, N, K, BM, BN, BK, WARPS, STAGES, GROUP_M)"),
    # knobs (tfx.hw.knobs)
    (["analyze", GEMM, "--knob", "hbm.bandwidth"], "--knob: error: expected NAME=VALUE, found 'hbm.bandwidth'"),
    (["analyze", GEMM, "--knob", "hbm.bandwidth=zz"],
     "--knob hbm.bandwidth: error: expected a number (1.2e12, 3.2TB/s) or a factor (x2, /2), found 'zz'"),
    (["analyze", GEMM, "--knob", "hbm.bandwidth=x0"],
     "--knob hbm.bandwidth: error: a factor must be a finite number > 0, found 'x0'"),
    (["analyze", GEMM, "--knob", "qqq=1"], "--knob qqq: error: unknown fact in profile h200_sxm"),
    # sweeps (tfx.explore.space)
    (["explore", GEMM, "--sweep", "BM="], "--sweep: error: expected NAME=VALUES, or NAME for its declared sweep, found 'BM='"),
    (["explore", GEMM, "--sweep", "BM=64,x"], "--sweep BM: error: expected an integer, found 'x'"),
    (["explore", GEMM, "--sweep", "BM=64,,128"],
     "--sweep BM: error: expected V1,V2,... without an empty value, found '64,,128'"),
    (["explore", GEMM, "--sweep", "BM=64", "--sweep", "BM=128"], "--sweep BM: error: given twice"),
    (["explore", GEMM, "--sweep", "BM=8..4"], "--sweep BM: error: range '8..4' is empty (end below start)"),
    (["explore", GEMM, "--knob-sweep", "qqq=x1,x2"], "--knob-sweep qqq: error: unknown fact in profile h200_sxm"),
    # a bad swept value names the option it came from, as a bad swept path does
    (["explore", GEMM, "--knob-sweep", "hbm.bandwidth=x1,zz"],
     "--knob-sweep hbm.bandwidth: error: expected a number (1.2e12, 3.2TB/s) or a factor (x2, /2), found 'zz'"),
    (["explore", GEMM, "--objective", "speed"],
     "--objective: error: expected one of time, smem, regs, traffic, cost, found 'speed'"),
    # the commands' own checks
    (["analyze", GEMM, "--resources", "bogus=1"],
     "--resources: error: expected one of local_bytes, regs, smem, spills, static_smem, threads, found 'bogus'"),
    (["analyze", GEMM, "--resources", "regs=-1"], "--resources regs: error: expected a whole number >= 0, found '-1'"),
    (["analyze", GEMM, "--resources", "threads=0"],
     "--resources threads: error: expected a whole number >= 1, found '0'"),
    (["validate", GEMM, "--set", "BM=64"],
     "--set: error: expected only with --ncu (a measurements CSV names its parameters in columns)"),
    (["open", "--ctx", "4096"], "--ctx: error: expected with --model (the model screen)"),
    # argparse's refusals (tfx.cli.common.usage_error_line), naming the help to read
    (["analyze", GEMM, "--occupancy", "x"], "--occupancy: error: expected an integer, found 'x' (see tfx analyze --help)"),
    (["analyze", GEMM, "--occupancy", "0"],       # int_arg(1, 2 ** 20)
     "--occupancy: error: expected a whole number in 1..1,048,576, found '0' (see tfx analyze --help)"),
    (["analyze", GEMM, "--set"], "--set: error: expected one argument (see tfx analyze --help)"),
    # a chunk under 1,024 configurations only multiplies the per-chunk analysis (cmd_explore.MIN_CHUNK:
    # --chunk 1 made gemm.tile's 7,200-configuration sweep 7,200 analyses, about 17 minutes)
    (["explore", GEMM, "--chunk", "1"],        # int_arg(1024, 2 ** 24)
     "--chunk: error: expected a whole number in 1,024..16,777,216, found '1' (see tfx explore --help)"),
    (["model", "latency", "--model", "llama3-8b", "--mode", "x"],
     "--mode: error: expected one of decode, prefill, found 'x' (see tfx model latency --help)"),
    (["analyze"], "tfx analyze: error: the following arguments are required: file (see tfx analyze --help)"),
    # an argument no parser takes: the command it was given to (it said `tfx: ... see tfx --help`)
    (["analyze", GEMM, "--bogus"], "tfx analyze: error: unrecognized arguments: --bogus (see tfx analyze --help)"),
    (["--bogus"], "tfx: error: unrecognized arguments: --bogus (see tfx --help)"),
    # a subcommand's extra argument is that subcommand's (session 12: `tfx model: ... see tfx model
    # --help` for hw-sweep, which takes no --tp)
    (["model", "hw-sweep", "--model", "llama3.1-8b", "--tp", "3"],
     "tfx model hw-sweep: error: unrecognized arguments: --tp 3 (see tfx model hw-sweep --help)"),
    (["hw", "show", "h200_sxm", "--bogus"], "tfx hw show: error: unrecognized arguments: --bogus (see tfx hw show --help)"),
    # refusals that named no place (session 12): the command, or the options that made the value
    (["model", "compare"], "tfx model compare: error: nothing to compare: expected FILEs or --config"),
    (["occupancy", "--threads", "128"], "tfx occupancy: error: --regs required (or --csv, --ptxas, --res-usage)"),
    # tp 2 on h200_nvl8 (8 GPUs a node) is 2 devices x cp 1 x pp 1 x dp 1
    (["model", "latency", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--tp", "2", "--devices", "4"],
     "--devices: error: tp2 cp1 pp1 dp1 ep1 uses 2 devices, found '4'"),
    # llama3.1-8b is dense (no experts): ep 2 is refused, and named with --tp beside it
    (["model", "memory", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--tp", "2", "--ep", "2"],
     "--tp, --ep: error: parallelism tp2 cp1 pp1 dp1 ep2 is not meaningful here: ep > 1 on a dense model"),
    (["model", "serve", "--model", "llama3.1-8b", "--pp", "2"],
     "--pp: error: the serving view prices one model instance: give tp/cp/ep (replicas are more instances)"),
]


@pytest.mark.parametrize("argv, line", CASES, ids=[" ".join("gemm.tile" if x == GEMM else x for x in a) for a, _ in CASES])
def test_refused_argument_is_one_line_naming_the_option(argv, line, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    assert (rc, out, err) == (2, "", line + "\n")


def test_objective_list_in_the_message_is_the_table():
    """The objective line above lists tfx.explore.evaluate.OBJECTIVES in its order: a new
    objective changes the expected line here, not silently the message."""
    from tfx.explore.evaluate import OBJECTIVES
    assert list(OBJECTIVES) == ["time", "smem", "regs", "traffic", "cost"]
