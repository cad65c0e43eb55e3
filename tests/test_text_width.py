"""Text outputs fit an 80-column terminal (COLUMNS=80); a pipe (no COLUMNS, not a terminal:
tfx.cli.common.WIDE_OUTPUT = 200 columns) keeps the wide form, as tfx explore's tables do."""

from __future__ import annotations

from pathlib import Path

from tfx.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
GEMM = str(ROOT / "kernels" / "gemm.tile")


def _out(capsys, monkeypatch, columns, *argv):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    assert main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def test_hw_list_wraps_descriptions_under_their_column(capsys, monkeypatch):
    """Names pad to the longest, a100_40gb_hgx8 (14), then 2 spaces, the kind in 5, 2 spaces: the
    description starts at column 14 + 2 + 5 + 2 = 23 and has 80 - 23 = 57 at 80 columns. sip's
    'SIP tiled accelerator (reference design): 8 cubes x 8 PEs, per-PE HBM 256 B/ns and 1 MiB TCM'
    (92 characters; 23 + 92 = 115 columns on one line) breaks after '... 8 cubes x 8' (53; adding
    ' PEs,' makes 58 > 57): 23 + 53 = 76, then 23 spaces + 'PEs, per-PE HBM 256 B/ns and 1 MiB TCM'
    (38) = 61. A pipe keeps the 115-column line."""
    out = _out(capsys, monkeypatch, 80, "hw", "list")
    at = out.index("sip" + " " * 11 + "  tiled  SIP tiled accelerator (reference design): 8 cubes x 8")
    assert out[at + 1] == " " * 23 + "PEs, per-PE HBM 256 B/ns and 1 MiB TCM"
    assert max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, None, "hw", "list")
    sip = next(line for line in out if line.startswith("sip "))
    assert len(sip) == 115 and sip.endswith("8 cubes x 8 PEs, per-PE HBM 256 B/ns and 1 MiB TCM")

