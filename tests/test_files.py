"""The one atomic writer (tfx.files) and the commands that write files through it (issue 13
defects 10 and 25)."""

from __future__ import annotations

import json
import os

import pytest

from tfx.cli.main import main
from tfx.errors import TfxError
from tfx.files import (atomic_open, check_writable, next_free_path, safe_file_stem, write_json_atomic,
                       write_text_atomic)


def test_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old contents that are longer\n")
    write_text_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_failure_inside_block_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("keep me\n")
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write("half")
            raise RuntimeError("stop")
    assert target.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_new_file_gets_umask_mode_and_old_file_keeps_its_mode(tmp_path):
    old = os.umask(0o022)
    try:
        fresh = write_text_atomic(tmp_path / "fresh.txt", "x")
        # 0o666 & ~0o022 = 0o644, what open(..., "w") gives
        assert fresh.stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "kept.txt"
        kept.write_text("y")
        kept.chmod(0o600)
        write_text_atomic(kept, "z")
        assert kept.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


def test_unwritable_targets_are_one_line_errors(tmp_path):
    with pytest.raises(TfxError) as err:
        write_text_atomic(tmp_path / "missing" / "x.json", "{}")
    assert "no such directory" in err.value.headline()
    with pytest.raises(TfxError) as err:
        write_text_atomic(tmp_path, "{}", what="the CSV")
    assert err.value.headline() == f"{tmp_path}: error: cannot write the CSV: is a directory"
    with pytest.raises(TfxError):
        check_writable(tmp_path / "missing" / "x.csv")


def test_special_file_is_written_in_place_not_replaced():
    write_text_atomic("/dev/null", "discarded")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_json_atomic(link, {"a": 1})
    assert link.is_symlink()
    assert json.loads(real.read_text()) == {"a": 1}


@pytest.mark.parametrize("label, stem", [
    ("/home/me/profiles/my h200.toml", "my_h200"),  # a path keeps its last name, no suffix
    ("h200_sxm", "h200_sxm"),
    ("../../etc/passwd", "passwd"),
    ("..", "tfx"),                                   # nothing usable left: the fallback
    ("a/b/", "b"),
    (".hidden", "hidden"),
    ("x" * 200, "x" * 80),                           # STEM_MAX_CHARS = 80
])
def test_safe_file_stem(label, stem):
    assert safe_file_stem(label) == stem


def test_next_free_path_never_reuses_a_name(tmp_path):
    first = next_free_path(tmp_path, "/some/dir/h200.toml", ".json")
    assert first == tmp_path / "h200.json"
    first.write_text("1")
    second = next_free_path(tmp_path, "h200", ".json")
    assert second == tmp_path / "h200-2.json"


@pytest.mark.parametrize("argv", [
    ["explore", "kernels/gemm.tile", "--hw", "h200_sxm", "--csv", "/nonexistent/x.csv"],
    ["explore", "kernels/gemm.tile", "--hw", "h200_sxm", "--csv", "."],
    ["model", "latency", "--model", "llama3.1-8b", "--hw", "h200_sxm", "--save", "/nonexistent/x.json"],
    ["simulate", "kernels/gemm.tile", "--hw", "h200_sxm", "--trace", "/nonexistent/t.json"],
])
def test_unwritable_outputs_exit_2_with_one_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write" in err[0]


def test_model_latency_save_writes_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["model", "latency", "--model", "llama3.1-8b", "--hw", "h200_sxm", "--save", str(out)]) == 0
    assert json.loads(out.read_text())["model"]
