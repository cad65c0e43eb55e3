"""`tfx run`: exit codes, the .npz, --json, --against and --reference."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from tfx.cli.main import main

GEMM = "kernels/gemm.tile"
SMALL = ["--set", "M=64", "--set", "N=64", "--set", "K=64", "--set", "BM=32", "--set", "BN=32",
         "--set", "BK=32"]
SIP = "kernels/sip_decode_attention.tile"
SIP_SMALL = ["--set", "CTX=8192", "--set", "HQ=8", "--set", "HKV=2", "--set", "BLOCK=256"]

REFERENCE = '''
import numpy as np

def gemm(inputs, params):
    return {"C": inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)}

def off_by_one(inputs, params):
    c = inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)
    c[3, 5] += 1000.0
    return {"C": c}

def boom(inputs, params):
    raise ValueError("no")

def unknown(inputs, params):
    return {"Z": 1}
'''


def test_run_saves_every_tensor(tmp_path, capsys):
    out = tmp_path / "g.npz"
    assert main(["run", GEMM, *SMALL, "--seed", "5", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "gemm (M=64, N=64, K=64" in text and "seed 5" in text
    data = np.load(out)
    assert sorted(data.files) == ["A", "B", "C"]
    assert data["A"].dtype == np.float32 and data["A"].shape == (64, 64)
    # C is the bf16 rounding of the f32 product of the saved (bf16-exact) inputs.
    exact = data["A"].astype(np.float64) @ data["B"].astype(np.float64)
    assert np.allclose(data["C"], exact, rtol=2 ** -7, atol=1e-3)


def test_reference_pass_fail_and_bad_input(tmp_path, monkeypatch, capsys):
    (tmp_path / "myref.py").write_text(REFERENCE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    gemm = str(Path(__file__).parent.parent / GEMM)
    assert main(["run", gemm, *SMALL, "--reference", "myref:gemm"]) == 0
    assert "pass: 1 of 1 outputs within tolerance" in capsys.readouterr().out
    # One element of the reference moved by 1000: exit 1, naming C[3, 5] and both values.
    assert main(["run", gemm, *SMALL, "--reference", "myref:off_by_one", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    (check,) = report["checks"]
    assert report["pass"] is False and check["worst"]["index"] == [3, 5]
    assert check["worst"]["want"] - check["worst"]["got"] > 999
    # 4 x 2^-7 (bf16) + 64 x 2^-23 (f32 sums of up to 64 terms: the largest extent)
    assert check["rtol"] == 0.03125 + 64 * 2.0 ** -23
    for spec, words in (("myref:boom", "raised ValueError: no"), ("myref:unknown", "'Z' is not an output"),
                        ("myref:nothing", "has no function"), ("nomodule:f", "cannot import nomodule"),
                        ("bad", "expected MODULE:FUNCTION")):
        assert main(["run", gemm, *SMALL, "--reference", spec]) == 2, spec
        assert words in capsys.readouterr().err
    sys.modules.pop("myref", None)


def test_against_the_single_op_twin(capsys):
    assert main(["run", SIP, "--kernel", "decode_attention_composite", "--against",
                 "decode_attention_single_op", *SIP_SMALL, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pass"] is True
    (check,) = report["checks"]
    assert check["name"] == "O" and check["max_abs_error"] == 0.0


def test_bad_input_exits_2(capsys):
    assert main(["run", GEMM]) == 2
    err = capsys.readouterr().err
    assert "too big to run on a CPU" in err and "--set" in err
    assert main(["run", GEMM, *SMALL, "--set", "BKK=1"]) == 2
    assert "did you mean BK" in capsys.readouterr().err
    assert main(["run", GEMM, *SMALL, "--dist", "A=cauchy"]) == 2
    assert "unknown distribution 'cauchy'" in capsys.readouterr().err
    assert main(["run", GEMM, *SMALL, "--dist", "C=uniform"]) == 2
    assert "C is an out bf16 tensor: --dist draws float inputs only" in capsys.readouterr().err
    assert main(["run", GEMM, *SMALL, "--dist", "A=uniform", "--json"]) == 0
    capsys.readouterr()
    assert main(["run", GEMM, *SMALL, "--against", "nope"]) == 2
    assert "no kernel named 'nope'" in capsys.readouterr().err
    assert main(["run", GEMM, *SMALL, "--out", "/nonexistent/dir/x.npz"]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_against_a_kernel_of_another_file(capsys):
    """Split-K (K = 2048 over 8 cubes) against the plain sip GEMM on the same A and B."""
    argv = ["run", "kernels/sip_splitk_gemm.tile", "--against", "kernels/sip_gemm.tile:sip_gemm",
            "--set", "M=64", "--set", "N=256", "--set", "K=2048", "--set", "TM=64", "--set", "TN=128",
            "--set", "TK=64", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["against"] == "kernel sip_gemm" and report["pass"] is True
    assert main(argv[:3] + ["kernels/sip_gemm.tile:nope"] + argv[4:]) == 2
    assert "no kernel named 'nope'" in capsys.readouterr().err
