"""A built tfx carries the files it reads at run time (setup.py, MANIFEST.in, tfx.bundled).

The repository keeps kernels/, hw_profiles/, models/ and calibration/ at its top level, outside
the tfx package; before setup.py copied them into tfx/bundled_data/, a non-editable install had
none of them and `tfx hw list` listed nothing. This test builds the sdist from a copy of the
tree with setuptools' own backend (offline, no wheel package needed), runs build_py from the
unpacked sdist (the step that fills a wheel, so a file missing from MANIFEST.in fails here as it
would for a wheel built from the sdist), and runs the built tfx from outside the repository.
bench/install_check.py does the whole `pip install .` into a fresh venv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tfx.bundled import BUNDLED_FILES, REPO_ROOT

# What the sdist needs to build: the package, the bundled folders and the build files; of
# calibration/ (9 MB) the folder the campaigns are in and two files that must NOT ship
# (the whole of it would only make the copy slower).
TREE = ["tfx", "kernels", "hw_profiles", "models", "calibration/h200/measured/issue15"]
TREE_FILES = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "calibration/h200/measured/launch.csv",
              "calibration/h200/measured/README.md", "calibration/h200/bandwidth.csv"]


def bundled_relpaths() -> list[str]:
    out = []
    for pattern in BUNDLED_FILES:
        matches = sorted(p for p in REPO_ROOT.glob(pattern) if p.is_file())
        assert matches, f"BUNDLED_FILES pattern {pattern!r} matches nothing in the repository"
        out.extend(p.relative_to(REPO_ROOT).as_posix() for p in matches)
    return out


def test_manifest_includes_exactly_the_bundled_patterns():
    """MANIFEST.in (the sdist) and tfx.bundled.BUNDLED_FILES (the wheel) name the same globs."""
    lines = (REPO_ROOT / "MANIFEST.in").read_text().splitlines()
    included = [ln.split(None, 1)[1] for ln in lines if ln.startswith("include ")]
    assert sorted(set(included) - {"setup.py"}) == sorted(BUNDLED_FILES)


def test_the_five_bundled_kinds_are_there():
    """Each kind of file the code reads by name is bundled: every shipped kernel, profile and
    preset, the launch cost tfx.model.system reads, and a `tfx validate` example."""
    rel = set(bundled_relpaths())
    for folder, suffix in (("kernels", ".tile"), ("hw_profiles", ".toml"), ("models", ".toml")):
        shipped = {p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / folder).glob(f"*{suffix}")}
        assert shipped and shipped <= rel, folder
    assert "calibration/h200/measured/launch.csv" in rel
    assert "calibration/h200/measured/issue15/run4/gemm.csv" in rel


def _run(cmd: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd[1:3]} failed: {done.stderr[-1500:]}"
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(sdist member names, build_lib) of a build from a copy of the repository."""
    tmp = tmp_path_factory.mktemp("pkg")
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "bundled_data")
    for name in TREE:
        shutil.copytree(REPO_ROOT / name, src / name, ignore=ignore)
    for name in TREE_FILES:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, src / name)
    dist = tmp / "dist"
    dist.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(dist)!r})"],
         src, env)
    (sdist,) = dist.glob("tfx-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp / "unpacked", filter="data")
    (root,) = (tmp / "unpacked").iterdir()
    lib = tmp / "lib"
    _run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)], root, env)
    prefix = root.name + "/"
    return {n[len(prefix):] for n in names if n.startswith(prefix)}, lib


def test_sdist_and_build_carry_every_bundled_file(built):
    members, lib = built
    for rel in bundled_relpaths():
        assert rel in members, f"{rel} is missing from the sdist"
        copy = lib / "tfx" / "bundled_data" / rel
        assert copy.read_bytes() == (REPO_ROOT / rel).read_bytes(), rel
    # nothing else lands in bundled_data: bench/, docs/, tests/ and the other calibration
    # folders stay in the repository
    shipped = {p.relative_to(lib / "tfx" / "bundled_data").as_posix()
               for p in (lib / "tfx" / "bundled_data").rglob("*") if p.is_file()}
    assert shipped == set(bundled_relpaths())


# Runs tfx.cli.main.main on each argv in ONE interpreter (an interpreter start with numpy costs
# about a second a command), each command's stdout and stderr captured apart.
RUNNER = """
import contextlib, io, json, sys
from tfx.cli.main import main
out = []
for argv in json.loads(sys.argv[1]):
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        rc = main(argv)
    out.append([rc, o.getvalue(), e.getvalue()])
import tfx
print(json.dumps({"tfx": tfx.__file__, "runs": out}))
"""


def _tfx(lib: Path, cwd: Path, *argvs: list[str]):
    import json
    env = dict(os.environ, PYTHONPATH=str(lib))
    done = _run([sys.executable, "-c", RUNNER, json.dumps(list(argvs))], cwd, env)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["tfx"] == str(lib / "tfx" / "__init__.py")    # the build's tfx, not the checkout's
    return result["runs"]


def test_built_tfx_reads_its_own_copy_from_outside_the_repository(built, tmp_path):
    _, lib = built
    data = lib / "tfx" / "bundled_data"
    kernel = data / "kernels" / "gemm.tile"
    csv_path = data / "calibration" / "h200" / "measured" / "issue15" / "run3" / "gemm_m480.csv"  # 8 rows: quick
    shown, listed, analyzed, validated, latency = _tfx(
        lib, tmp_path, ["hw", "show", "h200_sxm"], ["hw", "list"], ["analyze", str(kernel)],
        ["validate", str(csv_path)], ["model", "latency", "--model", "llama3-8b", "--hw", "h200_sxm", "--json"])
    for rc, _, err in (shown, listed, analyzed, validated, latency):
        assert (rc, err) == (0, "")

    assert f"file: {data / 'hw_profiles' / 'h200_sxm.toml'}" in shown[1].splitlines()

    # (a description wraps under its column, indented, where COLUMNS is narrow: xdist sets 80)
    names = [ln.split()[0] for ln in listed[1].splitlines() if ln.strip() and not ln.startswith(" ")]
    assert sorted(names) == sorted(p.stem for p in (REPO_ROOT / "hw_profiles").glob("*.toml"))

    assert analyzed[1].splitlines()[0] == f"kernel gemm ({kernel}) on h200_sxm, compiled as triton"

    # the CSV names kernels/gemm.tile: it resolves beside the bundled copy, not in the cwd
    rows = sum(1 for ln in csv_path.read_text().splitlines()[1:] if ln.strip())
    assert validated[1].startswith(f"{csv_path}: {rows} rows, ")

    # launch.csv is found: the launch note is the measured one, not the estimate
    assert "(calibration/h200/measured/launch.csv, triton_empty cuda_graph_100)" in latency[1]


def test_missing_kernel_path_names_the_shipped_copy(tmp_path, monkeypatch, capsys):
    """`tfx analyze kernels/gemm.tile` outside the repository (the README's commands, typed
    where an installed tfx keeps its kernels under tfx/bundled_data): the refusal says where
    tfx's own gemm.tile is; a name tfx does not ship gets the plain refusal."""
    from tfx.bundled import bundled_kernel
    from tfx.cli.main import main
    monkeypatch.chdir(tmp_path)
    assert main(["analyze", "kernels/gemm.tile"]) == 2
    assert capsys.readouterr().err == ("kernels/gemm.tile: error: no such file\n"
                                       f"  note: tfx ships gemm.tile as {bundled_kernel('gemm.tile')}\n")
    assert main(["analyze", "kernels/not_shipped.tile"]) == 2
    assert capsys.readouterr().err == "kernels/not_shipped.tile: error: no such file\n"
