"""Every kernel command falls back to the same profile when --hw is left out.

tfx analyze always defaulted to tfx.bundled.DEFAULT_PROFILE ("h200_sxm"); simulate and
explore used to refuse to run without --hw. The expected profile below is that constant's
value, not anything the commands print.
"""

import json

from tfx.bundled import DEFAULT_PROFILE, bundled_kernel
from tfx.cli.main import main

GEMM = str(bundled_kernel("gemm.tile"))
# A small GEMM so the simulation is quick: 256^3 in 128x128x64 tiles = 2 x 2 = 4 CTAs.
SMALL = ["--set", "M=256", "--set", "N=256", "--set", "K=256"]


def test_default_profile_is_h200_sxm():
    assert DEFAULT_PROFILE == "h200_sxm"


def test_simulate_without_hw_uses_default_profile(capsys):
    assert main(["simulate", GEMM, *SMALL, "--json", "--no-events"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["profile"] == "h200_sxm"


def test_explore_without_hw_uses_default_profile(capsys):
    assert main(["explore", GEMM, *SMALL, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["profile"] == "h200_sxm"


def test_every_kernel_command_has_the_same_default(capsys):
    for cmd in ("analyze", "simulate", "explore"):
        assert main([cmd, GEMM, *SMALL, "--json"] + (["--no-events"] if cmd == "simulate" else [])) == 0
        assert json.loads(capsys.readouterr().out)["profile"] == DEFAULT_PROFILE, cmd
