"""bench/h200/row_spill_reuse.py: the LRU reuse distances of a loop-free kernel's spilled words,
read from its SASS (docs/analysis.md section 8, "Spilled frames at L2's capacity")."""

from tests.bench_script import load_bench

SASS = """
        /*0010*/                   STL [R1], R2 ;
        /*0020*/                   LDG.E.128 R8, desc[UR4][R10.64] ;
        /*0030*/                   STL.64 [R1+0x4], R4 ;
        /*0040*/                   LDL.64 R4, [R1+0x4] ;
        /*0050*/                   LDL R2, [R1] ;
"""


def test_thresholds_by_hand():
    """The frame is the distinct stack words 0, 4 and 8: 12 B. Word 4's LDL follows its STL with
    only word 8 touched between (4 B, no global bytes): distance 4, threshold 12 / 4 = 3.0; word 8's
    likewise (word 4's reload between): 3.0. Word 0's LDL follows its STL with words 4 and 8 touched
    (8 B) and the 16-byte LDG: distance 24, threshold 12 / 24 = 0.5."""
    mod = load_bench("h200/row_spill_reuse")
    frame, out = mod.thresholds(SASS)
    assert frame == 12
    assert out == [3.0, 3.0, 0.5]


def test_main_prints_the_shares(tmp_path, capsys):
    """Each column is the share of reloads whose threshold passes the ratio: 2 of 3 past 0.5 (0.5 is
    not past itself) up to 2.5, none past 4."""
    mod = load_bench("h200/row_spill_reuse")
    path = tmp_path / "k.sass"
    path.write_text(SASS)
    assert mod.main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("kernel,frame_bytes_per_thread,reloaded_words,hit_at_0.5")
    assert lines[1] == "k,12,3," + ",".join(["0.667"] * 7 + ["0.000"])
