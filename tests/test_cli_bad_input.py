"""Bad input found by bench/bad_input.py (session 9, audit9): each case ends with exit 2 and
one line naming the place (file:line:col, file:key or the option) and what was expected, no
traceback. Each expected line is written from the input by hand."""

from __future__ import annotations

import json
from pathlib import Path

from tfx.bundled import bundled_dir, bundled_kernel
from tfx.cli.main import main

GEMM = str(bundled_kernel("gemm.tile"))


def refusal(argv, capsys) -> list[str]:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err
    return err.rstrip("\n").split("\n")


def test_validate_names_the_key_of_a_bad_hw_profile_not_the_csv_row(tmp_path, capsys):
    """validate --hw P.toml, P with an unknown key 'bandwith' under [memory.gmem]: the line names
    P.toml:memory.gmem.bandwith (as analyze, simulate, hw show do), not the CSV row that first
    needed the profile (was 'rows.csv:2:1: error: unknown key ...'); the row is a note."""
    text = (bundled_dir("hw_profiles") / "h200_sxm.toml").read_text()
    profile = tmp_path / "p.toml"
    profile.write_text(text.replace("[memory.gmem]", "[memory.gmem]\nbandwith = 1", 1))
    rows = tmp_path / "rows.csv"
    rows.write_text(f"kernel,measured_ms,M,N,K\n{GEMM},0.1,64,64,64\n")
    lines = refusal(["validate", str(rows), "--hw", str(profile)], capsys)
    assert lines[0].startswith(f"{profile}:memory.gmem.bandwith: error: unknown key 'bandwith' in memory.gmem")
    assert lines[1:] == [f"  note: the profile of row {rows}:2:1"]


def test_model_compare_refuses_json_that_is_no_saved_result(tmp_path, capsys):
    """model compare reads latency_ns, stages and memory of each saved result: any other JSON was
    an AttributeError ([1, 2]) or KeyError ({"hello": 1}) traceback with exit 1."""
    a_list = tmp_path / "list.json"
    a_list.write_text("[1, 2]")
    assert refusal(["model", "compare", str(a_list)], capsys) == [
        f"{a_list}: error: expected a result saved by tfx model latency --save/--json (a JSON object), "
        "found a JSON list"]
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    assert refusal(["model", "compare", str(other)], capsys) == [
        f"{other}: error: expected a result saved by tfx model latency --save/--json: no key 'latency_ns'"]
    text = tmp_path / "text.json"
    text.write_text('{"latency_ns": "fast", "stages": [], "memory": {}}')
    assert refusal(["model", "compare", str(text)], capsys) == [
        f"{text}:latency_ns: error: expected a result saved by tfx model latency --save/--json: "
        'latency_ns a finite number >= 0, found "fast"']
    # JSON that does not parse: file:line:col of the fault ('{"kernel": ' ends at column 12 of line 1)
    broken = tmp_path / "broken.json"
    broken.write_text('{"kernel": ')
    assert refusal(["model", "compare", str(broken)], capsys) == [f"{broken}:1:12: error: not JSON: Expecting value"]


def test_model_compare_still_reads_a_saved_result(tmp_path, capsys):
    saved = tmp_path / "s.json"
    assert main(["model", "latency", "--model", "llama3.2-1b", "--save", str(saved)]) == 0
    capsys.readouterr()
    assert main(["model", "compare", str(saved), str(saved)]) == 0
    out = capsys.readouterr().out
    assert "#2" in out and "latency" in out


def test_model_compare_names_what_each_column_priced(tmp_path, capsys):
    """The JSON had the columns' labels and rows only: two saved results on different profiles or
    knobs read 'tp1 cp1 pp1 dp1 ep1' and 'tp1 cp1 pp1 dp1 ep1 #2', nothing else. Each column now
    names its model, profile, knobs and workload (session 12, audit12), in the JSON and a line each."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["model", "latency", "--model", "llama3.2-1b", "--save", str(a)]) == 0
    assert main(["model", "latency", "--model", "llama3.2-1b", "--knob", "hbm.bandwidth=x2", "--ctx", "16384",
                 "--save", str(b)]) == 0
    capsys.readouterr()
    assert main(["model", "compare", str(a), str(b), "--json"]) == 0
    priced = json.loads(capsys.readouterr().out)["priced"]
    assert [(p["column"], p["hw"], p["knobs"], p["workload"]["context"]) for p in priced] == [
        ("tp1 cp1 pp1 dp1 ep1", "h200_sxm", {}, 8192),
        ("tp1 cp1 pp1 dp1 ep1 #2", "h200_sxm", {"memory.gmem.bandwidth": "x2"}, 16384)]
    assert main(["model", "compare", str(a), str(b)]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "tp1 cp1 pp1 dp1 ep1: llama3.2-1b on h200_sxm: decode, batch 1, context 8,192, weights bf16, kv bf16",
        "tp1 cp1 pp1 dp1 ep1 #2: llama3.2-1b on h200_sxm with memory.gmem.bandwidth=x2: decode, batch 1, "
        "context 16,384, weights bf16, kv bf16"]


def test_model_compare_refuses_knobs_that_are_no_object(tmp_path, capsys):
    saved = tmp_path / "k.json"
    saved.write_text('{"latency_ns": 1, "stages": [], "memory": {"total": 1}, "knobs": [1, 2]}')
    assert refusal(["model", "compare", str(saved)], capsys) == [
        f"{saved}:knobs: error: expected a result saved by tfx model latency --save/--json: knobs an object"]


def test_model_hw_sweep_refuses_factors_that_are_no_positive_numbers(capsys):
    """--factors 1,abc was a ValueError traceback (exit 1); --factors 0,1 divided by zero (a numpy
    RuntimeWarning on stderr) and printed a sweep. A factor scales every knob: finite and > 0."""
    base = ["model", "hw-sweep", "--model", "llama3.2-1b"]
    for text, bad in (("1,abc", "abc"), ("0,1", "0"), ("1,-2", "-2"), ("inf", "inf"), ("1,", "")):
        assert refusal(base + ["--factors", text], capsys) == [
            f"--factors: error: expected finite numbers > 0 separated by commas, found {bad!r} "
            "(see tfx model hw-sweep --help)"]
    # 2 factors for each of the knobs: the sweep runs (the default, 5 factors, as well)
    assert main(base + ["--factors", "1,2", "--json"]) == 0
    assert main(base + ["--json"]) == 0


def test_open_model_bounds_batch_and_ctx_as_tfx_model_does(capsys):
    """tfx open --model M --batch 0 said 'error: context and batch must be >= 1, got 8192, 0'
    (no option named); tfx model latency names --batch and its range 1..2**24 = 16,777,216.
    Both now take the same bounds (tfx.assignments.BATCH_RANGE, CONTEXT_RANGE: 1..2**31 - 1 =
    2,147,483,647)."""
    for cmd in (["open"], ["model", "latency"]):
        help_of = " ".join(["tfx"] + cmd)
        assert refusal(cmd + ["--model", "llama3.2-1b", "--batch", "0"], capsys) == [
            f"--batch: error: expected a whole number in 1..16,777,216, found '0' (see {help_of} --help)"]
        assert refusal(cmd + ["--model", "llama3.2-1b", "--ctx", "-1"], capsys) == [
            f"--ctx: error: expected a whole number in 1..2,147,483,647, found '-1' (see {help_of} --help)"]


def test_run_refuses_a_set_value_outside_its_domain_by_name(capsys):
    """copy.tile declares N in 1..1099511627776 (2**40) and gemm.tile BM in 16..512 step x2: run
    --set N=0 said 'copy.tile:15:3: error: mesh cta extent 0 is 0' (the mesh, not the --set that
    made it 0); run now refuses as check and analyze do."""
    copy = str(bundled_kernel("copy.tile"))
    assert refusal(["run", copy, "--set", "N=0"], capsys) == [
        "--set N: error: N=0 is outside its declared domain 1..1099511627776"]
    assert refusal(["check", copy, "--set", "N=0"], capsys) == [
        "--set N: error: N=0 is outside its declared domain 1..1099511627776"]
    assert refusal(["run", GEMM, "--set", "M=64", "--set", "BM=48"], capsys) == [
        "--set BM: error: BM=48 is outside its declared domain 16..512 step x2"]


def test_explore_text_piped_shows_every_time_whole_and_as_its_json_says(capsys, monkeypatch):
    """Piped (not a terminal), rich assumed 80 columns: a sweep of six parameters squeezed the
    table until the time column read '212.… us'. Piped text now has room: each top row's time
    is fmt.ns of the predicted_ns the JSON of the same sweep gives, and nothing is elided."""
    import json

    from tfx.present import formatting as fmt
    monkeypatch.delenv("COLUMNS", raising=False)
    argv = ["explore", GEMM, "--sweep", "BM=64,128", "--sweep", "BN=128", "--sweep", "BK=64", "--sweep", "WARPS=4",
            "--sweep", "STAGES=3", "--sweep", "GROUP_M=8", "--top", "2"]
    assert main(argv + ["--json"]) == 0
    top = json.loads(capsys.readouterr().out)["top"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    rows = [line for line in out.split("\n") if line.startswith("│")][:2]
    for row, entry in zip(rows, top):
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert cells[1:7] == [str(entry["params"][p]) for p in ("BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M")]
        assert cells[7] == fmt.ns(entry["predicted_ns"])


def test_a_folder_given_for_a_file_is_named_a_folder_everywhere(tmp_path, capsys):
    """check/analyze/... say 'is a directory, expected a .tile file' for a folder; --hw FOLDER
    said 'no such hardware profile file' and tfx open FOLDER 'no such file' (it exists)."""
    folder = tmp_path / "adir"
    folder.mkdir()
    assert refusal(["analyze", str(folder)], capsys) == [f"{folder}: error: is a directory, expected a .tile file"]
    assert refusal(["open", str(folder)], capsys) == [f"{folder}: error: is a directory, expected a .tile file"]
    for argv in (["hw", "show", str(folder)], ["analyze", GEMM, "--hw", str(folder)],
                 ["occupancy", "--threads", "128", "--regs", "32", "--hw", str(folder)]):
        assert refusal(argv, capsys) == [f"{folder}: error: is a directory, expected a hardware profile (.toml) file"]
    # a path that is not there is still 'no such ... file'
    assert refusal(["hw", "show", str(tmp_path / "p.toml")], capsys) == [
        f"{tmp_path / 'p.toml'}: error: no such hardware profile file"]


def test_run_refusal_writes_bytes_in_decimal_units(capsys):
    """copy.tile at its default N = 268,435,456: X and Y held as float32, twice (inputs kept):
    2 tensors x N x 4 B x 2 = 4,294,967,296 B = 4.29 GB, over the limit 2 x 2**30 =
    2,147,483,648 B = 2.15 GB. The line said '4.0 GiB of tensors (limit 2 GiB)', binary units
    beside every other surface's decimal ones."""
    lines = refusal(["run", str(bundled_kernel("copy.tile"))], capsys)
    assert "; 4.29 GB of tensors (limit 2.15 GB); " in lines[0]
    assert "GiB" not in lines[0]


def test_a_profile_value_out_of_range_names_its_unit(tmp_path, capsys):
    """h200_sxm.toml with ``core = { value = -1980, unit = "MHz" }``: the canonical value is
    -1980 x 1e6 = -1.98e9 Hz, written with %g as '-1.98e+09'. The refusal said 'got -1.98e+09',
    a number in no unit the file wrote; it names the canonical unit now (session 14's sweep of
    bench/bad_input.py, 139 new cases: this was the one line that read wrong)."""
    text = (bundled_dir("hw_profiles") / "h200_sxm.toml").read_text()
    assert "core = { value = 1980," in text
    profile = tmp_path / "p.toml"
    profile.write_text(text.replace("core = { value = 1980,", "core = { value = -1980,", 1))
    assert refusal(["analyze", GEMM, "--hw", str(profile)], capsys) == [
        f"{profile}:clock.core.value: error: core must be a number > 0, got -1.98e+09 Hz"]
    # a knob's value in the canonical unit (B/s) says so too
    assert refusal(["analyze", GEMM, "--knob", "hbm.bandwidth=-1"], capsys) == [
        "--knob hbm.bandwidth: error: bandwidth must be a number > 0, got -1 B/s"]
