"""Which tile-parameter values tfx's campaigns timed (tfx.analysis.coverage), and what tfx explore says when its
top pick sets one they never did. The lists are the campaigns' own: calibration/h200/measured/issue15's rows time
flash_attention.tile at WARPS 4 and 8 only (bench/h200/measure_accuracy.py draws attention tiles from BLOCK_M
{64, 128}, WARPS {4, 8}), gemm.tile at GROUP_M 1 and 8."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tfx.cli.main import main
from tfx.explore import explore
from tfx.analysis.coverage import MEASURED_VALUES, Unmeasured, campaign_kernel, unmeasured
from tfx.hw import load_profile
from tfx.lang import parse_file, parse_text
from tfx.present.formatting import unmeasured_sentence

ROOT = Path(__file__).resolve().parent.parent


def test_the_table_is_the_campaigns():
    """bench/campaign_coverage.py reads every campaign row; the module's table must say the same."""
    sys.path.insert(0, str(ROOT / "bench"))
    from campaign_coverage import measured_values
    assert MEASURED_VALUES == measured_values()


def test_values_the_campaigns_never_timed():
    # flash_attention.tile: WARPS 4, 8 timed; 2 not; BLOCK_M 64 timed
    got = unmeasured("flash_attention.tile", {"B": 8, "WARPS": 2, "BLOCK_M": 64}, "h200_sxm")
    assert got == [Unmeasured("flash_attention.tile", "WARPS", 2, (4, 8), "H200")]
    # a profile no campaign measured is judged by the H200's lists; the H100's has its own (no gemm_fp8_kn)
    assert unmeasured("gemm.tile", {"GROUP_M": 16}, "a100_sxm")[0].device == "H200"
    assert unmeasured("gemm_fp8_kn.tile", {"GROUP_M": 16}, "h100_sxm") == []
    assert unmeasured("moe_grouped.tile", {"WARPS": 2}, "h200_sxm") == []
    assert unmeasured_sentence(got) == ("the top pick's WARPS=2 is a value tfx's H200 campaigns never timed for "
                                        "flash_attention.tile (they timed WARPS 4, 8): its rank is unchecked")
    two = unmeasured("flash_prefill.tile", {"BLOCK_M": 32, "WARPS": 2}, "h100_sxm")
    assert unmeasured_sentence(two) == ("the top pick's BLOCK_M=32, WARPS=2 are values tfx's H100 campaigns never "
                                        "timed for flash_prefill.tile (they timed BLOCK_M 64, 128; WARPS 4, 8): its "
                                        "rank is unchecked")


def test_only_the_bundled_text_is_the_campaigns_kernel(tmp_path):
    text = (ROOT / "kernels" / "flash_attention.tile").read_text()
    assert campaign_kernel(parse_file(ROOT / "kernels" / "flash_attention.tile")) == "flash_attention.tile"
    copy = tmp_path / "flash_attention.tile"
    copy.write_text(text)
    assert campaign_kernel(parse_file(copy)) == "flash_attention.tile"          # a copy anywhere
    edited = text.replace("sweep {4, 8}", "sweep {2, 4, 8}")
    assert edited != text
    assert campaign_kernel(parse_text(edited, "flash_attention.tile")) is None  # another kernel now
    assert campaign_kernel(parse_file(ROOT / "kernels" / "moe_grouped.tile")) is None


def test_explore_says_when_its_top_pick_is_unchecked(capsys):
    """flash_attention.tile with WARPS fixed at 2 (Triton's warp mma on sm_90, which no campaign times; an
    H100 set, calibration/h100/measured/attn_warp_s56, prices it a median 5.0% fast since session 57, 21.7%
    before): every configuration sets WARPS=2, so the top pick does, and the text and JSON say so; with WARPS
    8 nothing is said, nor under cutlass, which no campaign compiled. BLOCK_M 64 and 128 are both timed values,
    so the top pick's only unchecked value is WARPS whichever of the two ranks first."""
    args = ["explore", "kernels/flash_attention.tile", "--set", "WARPS=2", "--sweep", "BLOCK_M=64,128", "--top", "2"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["unmeasured"]["values"] == [{"kernel": "flash_attention.tile", "param": "WARPS", "value": 2,
                                            "measured": [4, 8], "device": "H200"}]
    # every row sets WARPS=2: each is marked ?
    assert {e["params"]["BLOCK_M"]: e["unmeasured"] for e in out["top"]} == {64: ["WARPS"], 128: ["WARPS"]}
    assert main([*args[:-4], "--sweep", "BLOCK_M=32", "--top", "1", "--json"]) == 0
    # BLOCK_M 32 is not timed either (64 and 128 were): both values are named
    assert json.loads(capsys.readouterr().out)["top"][0]["unmeasured"] == ["BLOCK_M", "WARPS"]
    sentence = ("the top pick's WARPS=2 is a value tfx's H200 campaigns never timed for flash_attention.tile "
                "(they timed WARPS 4, 8): its rank is unchecked (? marks each such row)")
    assert out["unmeasured"]["summary"] == sentence
    assert main(args) == 0
    assert sentence in " ".join(capsys.readouterr().out.split())
    module = parse_file(ROOT / "kernels" / "flash_attention.tile")
    h200 = load_profile("h200_sxm")
    assert explore(module, None, h200, sweeps={"BLOCK_M": [64, 128]}, fixed={"WARPS": 8}).unmeasured == []
    assert explore(module, None, h200, sweeps={"BLOCK_M": [64]}, fixed={"WARPS": 2},
                   codegen="cutlass").unmeasured == []
    assert main(["explore", "kernels/flash_attention.tile", "--sweep", "BLOCK_M=64", "--top", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unmeasured"] is None


def test_rows_below_a_checked_top_pick_are_marked(capsys):
    """flash_attention.tile swept over WARPS 2, 4, 8 at its defaults (B4 H32 S4096 D128, BLOCK_M 128): the
    rows on 2 warps set a value the campaigns never timed and are marked ?, the others are not; where the top
    pick is not among them the line says what ? means."""
    args = ["explore", "kernels/flash_attention.tile", "--sweep", "WARPS=2,4,8", "--top", "3", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    marks = {e["params"]["WARPS"]: e.get("unmeasured") for e in out["top"]}
    assert marks == {2: ["WARPS"], 4: None, 8: None}
    assert out["top"][0]["params"]["WARPS"] != 2
    assert out["unmeasured"]["values"] == []
    assert out["unmeasured"]["summary"] == ("? marks a row with values tfx's campaigns never timed for this "
                                            "kernel: its rank is unchecked")


@pytest.mark.parametrize("hw, device", [("h200_sxm", "H200"), ("h100_sxm", "H100")])
def test_the_explore_pane_shows_the_same_sentence(hw, device):
    from tfx.tui import core
    path = ROOT / "kernels" / "flash_attention.tile"
    job = core.ExploreJob(str(path), path.read_text(), "flash_attention", hw, (), ("BLOCK_M",), (("WARPS", 2),))
    out = core.run_explore(job)
    assert out.error is None
    assert unmeasured_sentence(out.unmeasured) == (
        f"the top pick's WARPS=2 is a value tfx's {device} campaigns never timed for flash_attention.tile "
        "(they timed WARPS 4, 8): its rank is unchecked")


def test_accuracy_reports_the_off_path_set_by_path(capsys):
    """bench/accuracy.py's tables of the attn_warp sets, each by path. calibration/<device>/measured/attn_warp_s56:
    run_s56.sh times 12 tiles at each of 3 shapes, 7 of them on the warp mma (32x32 w2, 32x64 w2, 64x32 w2, 64x64
    w2 at 2 and 3 stages, 32x64 w4, 32x32 w4) and 5 warpgroup twins (64x64 w4, 64x32 w4, 128x64 w8, 128x64 w4,
    128x128 w8): 3 x 7 = 21 and 3 x 5 = 15 rows, on both parts. The H100's attn_warp_s58 (run_s58b.sh): 9 tiles at
    4 shapes, 6 on the warp mma (16x32 w1, 32x32 w1, 32x32 w2, 32x64 w2, 64x32 w2, 64x64 w2) and 3 warpgroup ones
    (64x64 w4, 64x32 w4, 128x64 w8): 4 x 6 = 24 and 4 x 3 = 12. The H200's attn_warp_s57 (run_s57.sh): 10 tiles at
    4 shapes, 7 and 3: 28 and 12."""
    sys.path.insert(0, str(ROOT / "bench"))
    import accuracy
    for hw, sets in (("h100_sxm", {"s56": (21, 15), "s58": (24, 12)}), ("h200_sxm", {"s56": (21, 15), "s57": (28, 12)})):
        accuracy.off_path_report(hw)
        out = " ".join(capsys.readouterr().out.split())
        for name, (warp, group) in sets.items():
            table = out.split(f"calibration/{hw.split('_')[0]}/measured/attn_warp_{name}/attention.csv")[1].split("off the")[0]
            assert f"warp mma (1-2 warps, or BLOCK_M 32) {warp} rows" in table
            assert f"warpgroup mma {group} rows" in table


def test_an_analysis_off_the_lists_says_its_prediction_is_unchecked():
    """tfx analyze of flash_attention.tile at WARPS=2 (the campaigns timed 4 and 8) warns; at its defaults
    (WARPS 8, BLOCK_M 128: timed) it does not, nor priced as cutlass (no campaign compiled it), nor an edited
    copy (another kernel)."""
    from tfx.analysis.analyze import analyze
    module = parse_file(ROOT / "kernels" / "flash_attention.tile")
    h200 = load_profile("h200_sxm")
    warning = ("WARPS=2 is a value tfx's H200 campaigns never timed for flash_attention.tile (they timed WARPS 4, "
               "8): this prediction is unchecked")
    assert warning in analyze(module, None, h200, {"WARPS": 2, "BLOCK_M": 64}).warnings
    assert not any("never timed" in w for w in analyze(module, None, h200, {}).warnings)
    assert not any("never timed" in w for w in
                   analyze(module, None, h200, {"WARPS": 2, "BLOCK_M": 64}, codegen="cutlass").warnings)
    edited = parse_text((ROOT / "kernels" / "flash_attention.tile").read_text() + "\n// mine\n",
                        "flash_attention.tile")
    assert not any("never timed" in w for w in analyze(edited, None, h200, {"WARPS": 2, "BLOCK_M": 64}).warnings)


def test_the_fastest_row_of_timed_values_is_named():
    """best_checked: the first row (fastest first) without unmeasured values, and how much slower than the top
    pick it is predicted: rows of 100, 100.5 and 101 ns, the first two unchecked: rank 3, 101 / 100 - 1 = 1.0%;
    a gap under 0.1% gets two decimals (100.02 / 100 - 1 = 0.02%)."""
    from tfx.explore.explore import best_checked
    rows = [{"predicted_ns": 100, "unmeasured": ["GROUP_M"]}, {"predicted_ns": 100.5, "unmeasured": ["STAGES"]},
            {"predicted_ns": 101}]
    rank, slower = best_checked(rows)
    assert rank == 3 and slower == pytest.approx(0.01, abs=1e-12)
    assert best_checked(rows[:2]) is None
    got = unmeasured("gemm.tile", {"GROUP_M": 16}, "h200_sxm")
    assert unmeasured_sentence(got, True, (3, 0.01)).endswith("(? marks each such row); the fastest row of timed "
                                                               "values, #3, is 1.0% slower")
    assert unmeasured_sentence(got, True, (4, 0.0002)).endswith("#4, is 0.02% slower")


def test_explore_names_the_fastest_checked_row(capsys):
    """gemm.tile's default sweep: its top pick sets GROUP_M 16 (never timed); the JSON names the first row with
    every value timed, every row above it is marked, and it is not."""
    assert main(["explore", "kernels/gemm.tile", "--top", "6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rank = out["unmeasured"]["best_checked"]["rank"]
    assert all(e.get("unmeasured") for e in out["top"][:rank - 1]) and not out["top"][rank - 1].get("unmeasured")
    assert f"the fastest row of timed values, #{rank}, is" in out["unmeasured"]["summary"]
