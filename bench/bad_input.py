"""Feed every CLI command a fixed table of bad inputs and check how each run ends (session 9,
audit9): the systematic companion of bench/fuzz.py (random mutants).

Each case is (name, argv, place): the run must end with exit 2 and one error line (plus the
echoed source line and its caret where there is a file:line:col, and ``note:`` lines: see
bench/fuzz.py's ``classify``), no traceback, and the error line must contain ``place`` (the
file, file:key, option or parameter the refusal is about). Cases run in forked children
(bench/fuzz.py's ``run_all``), two at a time.

    python bench/bad_input.py [--only SUBSTRING] [--show-all]

Prints one line per bad case (and every case with --show-all); exit 1 when any case is bad.
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import fuzz  # noqa: E402

K = ROOT / "kernels"
HW = ROOT / "hw_profiles"
GEMM = str(K / "gemm.tile")
SIP_GEMM = str(K / "sip_gemm.tile")
COPY = str(K / "copy.tile")


# values some commands take on purpose, each with its answer: explore/suggest --top 0 (the
# summary alone; suggest: every point), analyze --occupancy 100000 (a warning: unattainable,
# an SM holds at most 32 CTAs), occupancy --threads 2000 / --regs 300 (0 CTAs/SM and why)
ACCEPTED = None
# tfx open checks its inputs before its screen starts (session 10): a refusal that wrote an
# escape sequence first started the screen (verdict 'screen drawn')
ESCAPE = "\x1b["


def write(tmp: Path, name: str, text: str | bytes) -> str:
    path = tmp / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def cases(tmp: Path) -> list[tuple[str, list[str], str]]:
    gemm_text = (K / "gemm.tile").read_text()
    h200 = (HW / "h200_sxm.toml").read_text()
    sip = (HW / "sip.toml").read_text()
    missing = str(tmp / "missing.tile")
    adir = str(tmp / "adir")
    os.mkdir(adir)
    ro = tmp / "ro"
    ro.mkdir()
    os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
    # a read-only folder stops no one running as root: then a path under a regular file
    unwritable = str(ro / "out") if os.geteuid() != 0 else write(tmp, "afile", "") + "/out"
    nodir = str(tmp / "no" / "such" / "dir" / "out")

    empty = write(tmp, "empty.tile", "")
    trunc = write(tmp, "trunc.tile", gemm_text[: len(gemm_text) // 2])
    garbled = write(tmp, "garbled.tile", gemm_text.replace("mma %a, %b, %acc", "mma %a, %b,, %acc"))
    binary = write(tmp, "binary.tile", b"\x00\xff\xfe\x89PNG\r\n" * 20)
    latin1 = write(tmp, "latin1.tile", gemm_text.replace("// Triton", "// \xe9Triton").encode("latin-1"))
    # a count of the machine (units(LEVEL)) misspelt, misplaced, or of a level h200_sxm lacks
    persistent = (K / "persistent_gemm.tile").read_text()
    units_int = write(tmp, "units_int.tile", persistent.replace("= units(sm)", "= units(132)"))
    units_unclosed = write(tmp, "units_unclosed.tile", persistent.replace("= units(sm)", "= units(sm"))
    units_mesh = write(tmp, "units_mesh.tile", persistent.replace("mesh cta[CTAS]", "mesh cta[units(sm)]"))
    units_level = write(tmp, "units_level.tile", persistent.replace("= units(sm)", "= units(cube)"))

    # profiles: a wrong key, a wrong type, a syntax error, a tiled profile with a bad value
    wrong_key = write(tmp, "wrong_key.toml", h200.replace("[memory.gmem]", "[memory.gmem]\nbandwith = 1", 1))
    wrong_type = write(tmp, "wrong_type.toml", h200.replace("kind = \"gpu\"", "kind = 3", 1))
    syntax = write(tmp, "syntax.toml", h200 + "\n[[[ broken\n")
    sip_neg = write(tmp, "sip_neg.toml", sip.replace("bandwidth = { value = 256,", "bandwidth = { value = -256,", 1))
    sip_str = write(tmp, "sip_str.toml", sip.replace("bandwidth = { value = 256,", "bandwidth = { value = \"fast\",", 1))
    empty_toml = write(tmp, "empty.toml", "")

    # CSVs
    header = "kernel,profile,measured_ms,M,N,K\n"
    csv_empty = write(tmp, "empty.csv", "")
    csv_header = write(tmp, "header.csv", header)
    csv_nocol = write(tmp, "nocol.csv", "kernel,profile,M\nkernels/gemm.tile,h200_sxm,64\n")
    csv_badnum = write(tmp, "badnum.csv", header + "kernels/gemm.tile,h200_sxm,abc,64,64,64\n")
    csv_nan = write(tmp, "nan.csv", header + "kernels/gemm.tile,h200_sxm,nan,64,64,64\n")
    csv_neg = write(tmp, "neg.csv", header + "kernels/gemm.tile,h200_sxm,-1,64,64,64\n")
    csv_badparam = write(tmp, "badparam.csv", header + "kernels/gemm.tile,h200_sxm,0.1,64,abc,64\n")
    csv_nokernel = write(tmp, "nokernel.csv", header + "kernels/nothere.tile,h200_sxm,0.1,64,64,64\n")
    csv_noprof = write(tmp, "noprof.csv", header + "kernels/gemm.tile,h999,0.1,64,64,64\n")
    csv_ragged = write(tmp, "ragged.csv", header + "kernels/gemm.tile,h200_sxm,0.1,64\n")
    csv_noprofile = write(tmp, "noprofile.csv", f"kernel,measured_ms,M,N,K\n{GEMM},0.1,64,64,64\n")
    csv_binary = write(tmp, "binary.csv", b"\xff\xfe\x00\x01" * 10)
    occ_empty = csv_empty
    occ_nocol = write(tmp, "occ_nocol.csv", "threads,smem\n128,0\n")
    occ_badnum = write(tmp, "occ_bad.csv", "threads,regs,smem\n128,abc,0\n")
    occ_neg = write(tmp, "occ_neg.csv", "threads,regs,smem\n-128,32,0\n")
    occ_huge = write(tmp, "occ_huge.csv", "threads,regs,smem\n128,32,99999999999999999999\n")
    ptxas_bad = write(tmp, "ptxas.txt", "this is not ptxas output\n")
    ncu_bad = write(tmp, "ncu.csv", "a,b,c\n1,2,3\n")
    ncu_tile = GEMM

    # JSON reports
    json_bad = write(tmp, "bad.json", "{\"kernel\": ")
    json_list = write(tmp, "list.json", "[1, 2, 3]")
    json_other = write(tmp, "other.json", "{\"hello\": 1}")
    json_empty = write(tmp, "empty.json", "")

    # a preset with a wrong key and a wrong type
    llama = (ROOT / "models" / "llama3.2-1b.toml").read_text()
    preset_key = write(tmp, "preset_key.toml", llama.replace("head_dim", "head_dims", 1))
    preset_type = write(tmp, "preset_type.toml", llama.replace("head_dim = 64", "head_dim = \"sixty\"", 1))

    model = ["--model", "llama3.2-1b"]
    c: list[tuple[str, list[str], str]] = []
    add = lambda name, argv, place: c.append((name, argv, place))  # noqa: E731

    # ---- kernel files, every command that reads one
    for cmd in ("check", "analyze", "simulate", "explore", "run", "occupancy-none"):
        if cmd == "occupancy-none":
            continue
        extra = ["--tiles", "2"] if cmd == "simulate" else (["--top", "2"] if cmd == "explore" else [])
        add(f"{cmd} missing file", [cmd, missing] + extra, missing)
        add(f"{cmd} directory", [cmd, adir] + extra, adir)
        add(f"{cmd} empty file", [cmd, empty] + extra, empty)
        add(f"{cmd} truncated", [cmd, trunc] + extra, trunc)
        add(f"{cmd} garbled", [cmd, garbled] + extra, garbled)
        add(f"{cmd} binary", [cmd, binary] + extra, binary)
        add(f"{cmd} latin-1", [cmd, latin1] + extra, latin1)
        add(f"{cmd} units of a number", [cmd, units_int] + extra, units_int)
        add(f"{cmd} units unclosed", [cmd, units_unclosed] + extra, units_unclosed)
        add(f"{cmd} units in a mesh extent", [cmd, units_mesh] + extra, units_mesh)
        if cmd != "check":      # check without --hw binds no profile; run's own would be sip's
            hw = ["--hw", "h200_sxm"] if cmd == "run" else []
            add(f"{cmd} units of a level h200_sxm lacks", [cmd, units_level] + extra + hw, units_level)
        add(f"{cmd} unknown kernel", [cmd, GEMM, "--kernel", "nope"] + extra, "nope")
        add(f"{cmd} unknown param", [cmd, GEMM, "--set", "ZZ=3"] + extra, "ZZ")
        add(f"{cmd} param abc", [cmd, GEMM, "--set", "M=abc"] + extra, "M")
        add(f"{cmd} param no =", [cmd, GEMM, "--set", "M"] + extra, "--set")
        add(f"{cmd} param zero", [cmd, GEMM, "--set", "M=0"] + extra, "M")
        add(f"{cmd} param negative", [cmd, GEMM, "--set", "BM=-64"] + extra, "BM")
        add(f"{cmd} param huge", [cmd, GEMM, "--set", "M=99999999999999999999999"] + extra, "M")
        add(f"{cmd} param nan", [cmd, GEMM, "--set", "M=nan"] + extra, "M")
        add(f"{cmd} param inf", [cmd, GEMM, "--set", "M=inf"] + extra, "M")
        add(f"{cmd} param float", [cmd, GEMM, "--set", "M=1.5"] + extra, "M")
    add("diff missing a", ["diff", missing, GEMM], missing)
    add("diff dir b", ["diff", GEMM, adir], adir)
    add("diff truncated", ["diff", trunc, GEMM], trunc)
    add("diff bad json", ["diff", json_bad, GEMM], json_bad)
    add("diff list json", ["diff", json_list, GEMM], json_list)
    add("diff other json", ["diff", json_other, GEMM], json_other)
    add("diff empty json", ["diff", json_empty, GEMM], json_empty)
    add("diff param abc", ["diff", GEMM, GEMM, "--set-b", "M=abc"], "M")
    add("diff knob abc", ["diff", GEMM, GEMM, "--knob-b", "hbm.bandwidth=abc"], "hbm.bandwidth")
    add("diff hw-b missing", ["diff", GEMM, GEMM, "--hw-b", missing + ".toml"], missing)

    # ---- knobs
    for cmd, base in (("analyze", ["analyze", GEMM]), ("simulate", ["simulate", GEMM, "--tiles", "2"]),
                      ("explore", ["explore", GEMM, "--top", "2"]), ("hw show", ["hw", "show", "h200_sxm"]),
                      ("occupancy", ["occupancy", "--threads", "128", "--regs", "32"]),
                      ("model latency", ["model", "latency"] + model),
                      ("diff", ["diff", GEMM, GEMM])):
        for value, what in (("abc", "text"), ("nan", "nan"), ("inf", "inf"), ("-1", "negative"),
                            ("0", "zero"), ("1e400", "huge"), ("x0", "x0"), ("/0", "/0"), ("", "empty")):
            knob = "occupancy.max_blocks_per_sm" if cmd == "occupancy" else "hbm.bandwidth"
            add(f"{cmd} knob {what}", base + ["--knob", f"{knob}={value}"], knob)
        add(f"{cmd} unknown knob", base + ["--knob", "hbm.bandwith=2"], "hbm.bandwith")
        add(f"{cmd} knob no =", base + ["--knob", "hbm.bandwidth"], "--knob")
    add("explore knob-sweep abc", ["explore", GEMM, "--top", "2", "--knob-sweep", "hbm.bandwidth=x1,abc"], "hbm.bandwidth")
    add("explore knob-sweep unknown", ["explore", GEMM, "--top", "2", "--knob-sweep", "hbm.bandwith=x1,x2"], "hbm.bandwith")
    add("explore sweep abc", ["explore", GEMM, "--top", "2", "--sweep", "BM=64,abc"], "BM")
    add("explore sweep unknown", ["explore", GEMM, "--top", "2", "--sweep", "ZZ=1,2"], "ZZ")
    add("explore sweep empty", ["explore", GEMM, "--top", "2", "--sweep", "BM="], "BM")
    add("explore sweep reversed", ["explore", GEMM, "--top", "2", "--sweep", "BM=256..16"], "BM")
    # a bare name is its declared sweep: a name the kernel lacks, or malformed
    add("explore sweep bare unknown", ["explore", GEMM, "--top", "2", "--sweep", "ZZ"], "ZZ")
    add("explore sweep bare spaced", ["explore", GEMM, "--top", "2", "--sweep", "B M"], "--sweep")
    add("explore objective", ["explore", GEMM, "--top", "2", "--objective", "time,speed"], "speed")
    add("explore top 0", ["explore", GEMM, "--top", "0"], ACCEPTED)
    add("explore top -1", ["explore", GEMM, "--top", "-1"], "--top")
    add("explore chunk 0", ["explore", GEMM, "--chunk", "0"], "--chunk")
    add("simulate tiles 0", ["simulate", GEMM, "--tiles", "0"], "--tiles")
    add("simulate tiles abc", ["simulate", GEMM, "--tiles", "abc"], "--tiles")
    add("simulate max-events -1", ["simulate", GEMM, "--max-events", "-1"], "--max-events")

    # ---- profiles
    for cmd, base in (("analyze", ["analyze", GEMM, "--hw"]), ("simulate", ["simulate", GEMM, "--tiles", "2", "--hw"]),
                      ("explore", ["explore", GEMM, "--top", "2", "--hw"]), ("hw show", ["hw", "show"]),
                      ("occupancy", ["occupancy", "--threads", "128", "--regs", "32", "--hw"]),
                      ("model latency", ["model", "latency"] + model + ["--hw"]),
                      ("validate", ["validate", csv_noprofile, "--hw"])):
        add(f"{cmd} hw missing name", base + ["h999"], "h999")
        add(f"{cmd} hw missing path", base + [missing + ".toml"], missing)
        add(f"{cmd} hw directory", base + [adir], adir)
        add(f"{cmd} hw wrong key", base + [wrong_key], wrong_key)
        add(f"{cmd} hw wrong type", base + [wrong_type], wrong_type)
        add(f"{cmd} hw syntax", base + [syntax], syntax)
        add(f"{cmd} hw empty", base + [empty_toml], empty_toml)
    add("analyze sip negative", ["analyze", SIP_GEMM, "--hw", sip_neg], sip_neg)
    add("analyze sip string", ["analyze", SIP_GEMM, "--hw", sip_str], sip_str)
    add("hw show sip negative", ["hw", "show", sip_neg], sip_neg)
    add("analyze sip cutlass", ["analyze", SIP_GEMM, "--hw", "sip", "--codegen", "cutlass"], "cutlass")

    # ---- analyze's own options
    add("analyze resources abc", ["analyze", GEMM, "--resources", "threads=abc"], "threads")
    add("analyze resources unknown", ["analyze", GEMM, "--resources", "thread=128"], "thread")
    add("analyze resources zero", ["analyze", GEMM, "--resources", "threads=0"], "threads")
    add("analyze resources huge regs", ["analyze", GEMM, "--resources", "regs=100000"], "regs")
    add("analyze ptxas missing", ["analyze", GEMM, "--ptxas", missing], missing)
    add("analyze ptxas wrong", ["analyze", GEMM, "--ptxas", ptxas_bad], ptxas_bad)
    add("analyze ptxas dir", ["analyze", GEMM, "--ptxas", adir], adir)
    add("analyze occupancy 0", ["analyze", GEMM, "--occupancy", "0"], "--occupancy")
    add("analyze occupancy huge", ["analyze", GEMM, "--occupancy", "100000"], ACCEPTED)
    add("analyze domain", ["analyze", GEMM, "--domain", "galaxy"], "galaxy")

    # ---- outputs that cannot be written
    add("explore csv unwritable", ["explore", GEMM, "--top", "2", "--csv", unwritable], unwritable)
    add("explore csv no dir", ["explore", GEMM, "--top", "2", "--csv", nodir], nodir)
    add("explore csv directory", ["explore", GEMM, "--top", "2", "--csv", adir], adir)
    add("simulate trace unwritable", ["simulate", GEMM, "--tiles", "2", "--trace", unwritable], unwritable)
    add("simulate trace directory", ["simulate", GEMM, "--tiles", "2", "--trace", adir], adir)
    add("run out unwritable", ["run", COPY, "--set", "N=1024", "--out", unwritable + ".npz"], unwritable)
    add("run out directory", ["run", COPY, "--set", "N=1024", "--out", adir], adir)
    add("model latency save unwritable", ["model", "latency"] + model + ["--save", unwritable], unwritable)
    add("model latency save directory", ["model", "latency"] + model + ["--save", adir], adir)

    # ---- run's own options
    add("run against missing", ["run", GEMM, "--against", missing], missing)
    add("run against unknown", ["run", GEMM, "--against", "nope"], "nope")
    add("run reference bad", ["run", GEMM, "--reference", "nosuchmodule:f"], "nosuchmodule")
    add("run reference no colon", ["run", GEMM, "--reference", "os"], "--reference")
    add("run dist bad", ["run", COPY, "--set", "N=1024", "--dist", "X=cauchy"], "cauchy")
    add("run dist unknown tensor", ["run", COPY, "--set", "N=1024", "--dist", "Z=normal"], "Z")
    add("run seed abc", ["run", GEMM, "--seed", "abc"], "--seed")

    # ---- validate
    for name, path in (("empty", csv_empty), ("header only", csv_header), ("missing column", csv_nocol),
                       ("bad number", csv_badnum), ("nan", csv_nan), ("negative", csv_neg),
                       ("bad param", csv_badparam), ("unknown kernel", csv_nokernel),
                       ("unknown profile", csv_noprof), ("ragged", csv_ragged), ("binary", csv_binary),
                       ("missing", missing + ".csv"), ("directory", adir)):
        add(f"validate csv {name}", ["validate", path], path)
    add("validate ncu wrong format", ["validate", GEMM, "--ncu", ncu_bad], ncu_bad)
    add("validate ncu is tile", ["validate", GEMM, "--ncu", ncu_tile], ncu_tile)
    add("validate ncu empty", ["validate", GEMM, "--ncu", csv_empty], csv_empty)
    add("validate ncu missing", ["validate", GEMM, "--ncu", missing + ".csv"], missing)
    add("validate ncu set abc", ["validate", GEMM, "--ncu", ncu_bad, "--set", "M=abc"], "M")

    # ---- occupancy
    for name, path in (("empty", occ_empty), ("missing column", occ_nocol), ("bad number", occ_badnum),
                       ("negative", occ_neg), ("huge", occ_huge), ("missing", missing + ".csv"), ("dir", adir)):
        add(f"occupancy csv {name}", ["occupancy", "--csv", path], path)
    add("occupancy ptxas wrong", ["occupancy", "--ptxas", ptxas_bad], ptxas_bad)
    add("occupancy res-usage wrong", ["occupancy", "--res-usage", ptxas_bad], ptxas_bad)
    add("occupancy ptxas missing", ["occupancy", "--ptxas", missing], missing)
    add("occupancy threads 0", ["occupancy", "--threads", "0", "--regs", "32"], "--threads")
    add("occupancy threads 2000", ["occupancy", "--threads", "2000", "--regs", "32"], ACCEPTED)
    add("occupancy regs 300", ["occupancy", "--threads", "128", "--regs", "300"], ACCEPTED)
    add("occupancy smem -1", ["occupancy", "--threads", "128", "--regs", "32", "--smem", "-1"], "--smem")
    add("occupancy smem huge", ["occupancy", "--threads", "128", "--regs", "32", "--smem", "1e30"], "--smem")
    add("occupancy hint 0", ["occupancy", "--threads", "128", "--regs", "32", "--occupancy", "0"], "--occupancy")
    add("occupancy no threads", ["occupancy", "--regs", "32"], "--threads")
    add("occupancy tiled", ["occupancy", "--hw", "sip", "--threads", "128", "--regs", "32"], "sip")

    # ---- model
    add("model show missing", ["model", "show", "nope"], "nope")
    add("model show missing path", ["model", "show", missing + ".toml"], missing)
    add("model show dir", ["model", "show", adir], adir)
    add("model show wrong key", ["model", "show", preset_key], preset_key)
    add("model show wrong type", ["model", "show", preset_type], preset_type)
    add("model show syntax", ["model", "show", syntax], syntax)
    for sub in ("latency", "memory", "serve"):
        add(f"model {sub} batch 0", ["model", sub] + model + ["--batch", "0"], "--batch")
        add(f"model {sub} batch abc", ["model", sub] + model + ["--batch", "abc"], "--batch")
        add(f"model {sub} ctx -1", ["model", sub] + model + ["--ctx", "-1"], "--ctx")
        add(f"model {sub} ctx huge", ["model", sub] + model + ["--ctx", "1e30"], "--ctx")
        add(f"model {sub} tp 3", ["model", sub] + model + ["--hw", "h200_nvl8", "--tp", "3"], "tp")
        add(f"model {sub} tp 0", ["model", sub] + model + ["--tp", "0"], "--tp")
        add(f"model {sub} capacity nan", ["model", sub] + model + ["--capacity", "nan"], "--capacity")
        add(f"model {sub} capacity -1", ["model", sub] + model + ["--capacity", "-1"], "--capacity")
        add(f"model {sub} launch-us nan", ["model", sub] + model + ["--launch-us", "nan"], "--launch-us")
        add(f"model {sub} preset wrong key", ["model", sub, "--model", preset_key], preset_key)
    add("model serve rate -1", ["model", "serve"] + model + ["--rate", "-1"], "--rate")
    add("model serve input 0", ["model", "serve"] + model + ["--input", "0"], "--input")
    add("model serve ttft nan", ["model", "serve"] + model + ["--ttft-ms", "nan"], "--ttft-ms")
    add("model suggest top 0", ["model", "suggest"] + model + ["--top", "0"], ACCEPTED)
    add("model suggest sensitivity bad", ["model", "suggest"] + model + ["--sensitivity", "tp=abc"], "tp")
    add("model hw-sweep factors abc", ["model", "hw-sweep"] + model + ["--factors", "1,abc"], "--factors")
    add("model hw-sweep factors 0", ["model", "hw-sweep"] + model + ["--factors", "0,1"], "--factors")
    add("model hw-sweep check -1", ["model", "hw-sweep"] + model + ["--check", "-1"], "--check")
    add("model compare bad json", ["model", "compare", json_bad], json_bad)
    add("model compare list json", ["model", "compare", json_list], json_list)
    add("model compare other json", ["model", "compare", json_other], json_other)
    add("model compare missing", ["model", "compare", missing + ".json"], missing)
    add("model compare dir", ["model", "compare", adir], adir)
    add("model compare config bad", ["model", "compare"] + model + ["--config", "tp=abc"], "tp")
    add("model compare config unknown", ["model", "compare"] + model + ["--config", "zz=2"], "zz")

    # ---- open (only refusals: a good input would start the TUI)
    add("open missing", ["open", missing], missing)
    add("open dir", ["open", adir], adir)
    add("open truncated", ["open", trunc], trunc)
    add("open param abc", ["open", GEMM, "--set", "M=abc"], "M")
    add("open knob abc", ["open", GEMM, "--knob", "hbm.bandwidth=abc"], "hbm.bandwidth")
    add("open hw missing", ["open", GEMM, "--hw", "h999"], "h999")
    add("open measured missing", ["open", GEMM, "--measured", missing + ".csv"], missing)
    add("open measured empty", ["open", GEMM, "--measured", csv_empty], csv_empty)
    add("open measured missing column", ["open", GEMM, "--measured", csv_nocol], csv_nocol)
    add("open measured bad number", ["open", GEMM, "--measured", csv_badnum], csv_badnum)
    add("open model missing", ["open", "--model", "nope"], "nope")
    add("open model config bad", ["open", "--model", "llama3.2-1b", "--config", "tp=abc"], "tp")
    add("open model batch 0", ["open", "--model", "llama3.2-1b", "--batch", "0"], "--batch")
    # session 10 (audit10): refused before the screen starts (no escape sequence: see main)
    add("open garbled", ["open", garbled], garbled)
    add("open kernel name", ["open", GEMM, "--kernel", "nope"], "nope")
    add("open knob unknown fact", ["open", GEMM, "--knob", "nosuch=x2"], "--knob nosuch")
    add("open knob zero", ["open", GEMM, "--knob", "hbm.bandwidth=0"], "--knob hbm.bandwidth")
    add("open knob huge factor", ["open", GEMM, "--knob", "hbm.bandwidth=x1e400"], "--knob hbm.bandwidth")
    add("open set outside domain", ["open", GEMM, "--set", "BM=7"], "--set BM")
    add("open hw wrong key", ["open", GEMM, "--hw", wrong_key], wrong_key)
    add("open hw syntax", ["open", GEMM, "--hw", syntax], syntax)
    add("open hw empty", ["open", GEMM, "--hw", empty_toml], empty_toml)
    add("open codegen on sip", ["open", SIP_GEMM, "--hw", "sip", "--codegen", "cutlass"], "cutlass")

    # ---- session 14 (polish14): every command that reads a kernel, a profile, a knob or a
    # file, each with the faults the sweep above gave only some of them
    bad_row = write(tmp, "garbled_row.csv", f"kernel,profile,measured_ms,M,N,K\n{garbled},h200_sxm,0.1,64,64,64\n")
    missing_row = write(tmp, "missing_row.csv", f"kernel,profile,measured_ms,M,N,K\n{missing},h200_sxm,0.1,64,64,64\n")
    add("s14 validate csv row garbled kernel", ["validate", bad_row], garbled)
    add("s14 validate csv row missing kernel", ["validate", missing_row], missing)
    add("s14 validate ncu garbled kernel", ["validate", garbled, "--ncu", ncu_bad], garbled)
    add("s14 validate ncu set zero", ["validate", GEMM, "--ncu", ncu_bad, "--set", "M=0"], "M")
    add("s14 validate hw-less row wrong key", ["validate", csv_noprofile, "--hw", wrong_key], wrong_key)
    add("s14 diff garbled b", ["diff", GEMM, garbled], garbled)
    add("s14 diff binary a", ["diff", binary, GEMM], binary)
    add("s14 diff set zero", ["diff", GEMM, GEMM, "--set", "M=0"], "M")
    add("s14 diff set-b negative", ["diff", GEMM, GEMM, "--set-b", "BM=-64"], "BM")
    add("s14 diff hw wrong key", ["diff", GEMM, GEMM, "--hw", wrong_key], wrong_key)
    add("s14 diff hw-b wrong key", ["diff", GEMM, GEMM, "--hw-b", wrong_key], wrong_key)
    add("s14 diff hw-b syntax", ["diff", GEMM, GEMM, "--hw-b", syntax], syntax)
    add("s14 diff knob-b zero", ["diff", GEMM, GEMM, "--knob-b", "hbm.bandwidth=0"], "hbm.bandwidth")
    add("s14 diff knob-b huge", ["diff", GEMM, GEMM, "--knob-b", "hbm.bandwidth=x1e400"], "hbm.bandwidth")
    add("s14 diff knob-b unknown", ["diff", GEMM, GEMM, "--knob-b", "hbm.bandwith=x2"], "hbm.bandwith")
    add("s14 check hw wrong key", ["check", GEMM, "--hw", wrong_key], wrong_key)
    add("s14 check hw missing", ["check", GEMM, "--hw", missing + ".toml"], missing)
    add("s14 check hw syntax", ["check", GEMM, "--hw", syntax], syntax)
    add("s14 run garbled", ["run", garbled], garbled)
    add("s14 run against garbled", ["run", GEMM, "--against", garbled], garbled)
    add("s14 open knob negative", ["open", GEMM, "--knob", "hbm.bandwidth=-1"], "hbm.bandwidth")
    add("s14 open knob nan", ["open", GEMM, "--knob", "hbm.bandwidth=nan"], "hbm.bandwidth")
    add("s14 open set zero", ["open", GEMM, "--set", "M=0"], "M")
    add("s14 open set huge", ["open", GEMM, "--set", "M=99999999999999999999999"], "M")
    add("s14 open binary", ["open", binary], binary)
    add("s14 open hw wrong type", ["open", GEMM, "--hw", wrong_type], wrong_type)
    add("s14 simulate garbled hw sip", ["simulate", SIP_GEMM, "--tiles", "2", "--hw", sip_neg], sip_neg)
    add("s14 explore sip string", ["explore", SIP_GEMM, "--top", "2", "--hw", sip_str], sip_str)
    add("s14 occupancy knob unknown", ["occupancy", "--threads", "128", "--regs", "32", "--knob", "occupancy.max_blocks=2"],
        "occupancy.max_blocks")
    add("s14 occupancy knob huge", ["occupancy", "--threads", "128", "--regs", "32", "--knob",
                                    "occupancy.max_blocks_per_sm=1e400"], "occupancy.max_blocks_per_sm")
    add("s14 hw show knob huge factor", ["hw", "show", "h200_sxm", "--knob", "hbm.bandwidth=x1e400"], "hbm.bandwidth")
    # absurd values inside a profile, a kernel that parses but does not check, odd knob values
    sms_zero = write(tmp, "sms_zero.toml", h200.replace("count = { value = 132,", "count = { value = 0,", 1))
    sms_frac = write(tmp, "sms_frac.toml", h200.replace("count = { value = 132,", "count = { value = 1.5,", 1))
    bw_huge = write(tmp, "bw_huge.toml", h200.replace("bandwidth = { value = 4.8,", "bandwidth = { value = 1e400,", 1))
    bw_unit = write(tmp, "bw_unit.toml", h200.replace('bandwidth = { value = 4.8, unit = "TB/s"',
                                                      'bandwidth = { value = 4.8, unit = "parsecs"', 1))
    clock_neg = write(tmp, "clock_neg.toml", h200.replace("core = { value = 1980,", "core = { value = -1980,", 1))
    base_loop = write(tmp, "base_loop.toml", h200.replace('base = "h100_sxm"', f'base = "{tmp / "base_loop.toml"}"', 1))
    base_missing = write(tmp, "base_missing.toml", h200.replace('base = "h100_sxm"', 'base = "h999"', 1))
    undefined = write(tmp, "undefined.tile", gemm_text.replace("mma %a, %b, %acc", "mma %a, %zz, %acc", 1))
    for cmd, base in (("analyze", ["analyze", GEMM]), ("simulate", ["simulate", GEMM, "--tiles", "2"]),
                      ("explore", ["explore", GEMM, "--top", "2"]),
                      ("occupancy", ["occupancy", "--threads", "128", "--regs", "32"]),
                      ("open", ["open", GEMM]), ("diff", ["diff", GEMM, GEMM])):
        for name, path in (("sms zero", sms_zero), ("sms 1.5", sms_frac), ("bandwidth 1e400", bw_huge),
                           ("unit parsecs", bw_unit), ("clock negative", clock_neg), ("base loop", base_loop),
                           ("base missing", base_missing)):
            add(f"s14 {cmd} hw {name}", base + ["--hw", path], path)
            if cmd == "analyze":
                add(f"s14 hw show {name}", ["hw", "show", path], path)
    for cmd in ("check", "analyze", "simulate", "explore", "run", "open"):
        add(f"s14 {cmd} undefined value", [cmd, undefined], undefined)
    for value in ("x-1", "x", "/", "x2x", "2 parsecs", "1e-400", "-0", "xinf", "/nan"):
        add(f"s14 analyze knob {value!r}", ["analyze", GEMM, "--knob", f"hbm.bandwidth={value}"], "hbm.bandwidth")
    add("s14 occupancy knob half a CTA", ["occupancy", "--threads", "128", "--regs", "32", "--knob",
                                          "occupancy.max_blocks_per_sm=0.5"], "occupancy.max_blocks_per_sm")
    add("s14 analyze knob count 1.5", ["analyze", GEMM, "--knob", "hierarchy.sm.count=1.5"], "hierarchy.sm.count")
    for sub in ("latency", "memory", "serve", "suggest", "hw-sweep", "compare"):
        model = ["--model", "llama3.2-1b"] + (["--config", "tp=1"] if sub == "compare" else [])
        add(f"s14 model {sub} hw wrong key", ["model", sub] + model + ["--hw", wrong_key], wrong_key)
        add(f"s14 model {sub} hw missing", ["model", sub] + model + ["--hw", missing + ".toml"], missing)
        add(f"s14 model {sub} knob zero", ["model", sub] + model + ["--knob", "hbm.bandwidth=0"], "hbm.bandwidth")
        add(f"s14 model {sub} knob abc", ["model", sub] + model + ["--knob", "hbm.bandwidth=abc"], "hbm.bandwidth")
        add(f"s14 model {sub} knob unknown", ["model", sub] + model + ["--knob", "hbm.bandwith=x2"], "hbm.bandwith")
        add(f"s14 model {sub} preset wrong type", ["model", sub] + model[2:] + ["--model", preset_type], preset_type)
        add(f"s14 model {sub} preset missing", ["model", sub] + model[2:] + ["--model", missing + ".toml"], missing)
    return c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--show-all", action="store_true")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    os.environ["TERM"] = "dumb"                         # `tfx open`: never start a screen

    import tfx.cli.main  # noqa: F401  (imported once, before forking)
    import tfx.analysis.analyze  # noqa: F401
    tmp = Path(tempfile.mkdtemp(prefix="tfx-bad-"))
    try:
        table = cases(tmp)
        if args.only:
            table = [t for t in table if args.only in t[0]]
        runs = [(name, argv) for name, argv, _ in table]
        bad = 0
        results = {}
        for i, rc, err, _ in fuzz.run_all(runs, 2, args.timeout, 3 * 2 ** 30):
            results[i] = (rc, err)
        for i, (name, argv, place) in enumerate(table):
            rc, err = results[i]
            drawn = argv[0] == "open" and ESCAPE in err
            err = err.replace(ESCAPE, "") if drawn else err
            cls = fuzz.classify(rc, err)
            first = err.strip().split("\n")[0] if err.strip() else ""
            verdict = "ok"
            if place is ACCEPTED:
                verdict = "ok" if cls == "ok" else cls
            elif cls != "refused":
                verdict = cls if cls != "ok" else "accepted"
            elif place not in first:
                verdict = "place?"
            elif drawn:
                verdict = "screen drawn"
            if verdict != "ok":
                bad += 1
            if verdict != "ok" or args.show_all:
                last = err.strip().split("\n")[-1][:220] if cls == "traceback" else first[:220]
                print(f"{verdict:<18} {name:<36} {last}")
        print(f"{len(table)} cases, {bad} bad")
        return 1 if bad else 0
    finally:
        os.chmod(tmp / "ro", stat.S_IRWXU)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
