"""Counts in the tfx model text carry thousands separators, as every count a person reads
(tfx.hw.units.format_count; session 12, audit12): the latency header printed 'batch 1024, context
131072' and '1044 launches', hw-sweep '3125 hardware points', serve 'input 16384 ... (chunk 2048)'
beside '2,048 prompt tokens per step' on the same line."""

from __future__ import annotations

from dataclasses import replace

from tfx.cli.main import main
from tfx.cli.model_latency import render
from tfx.model.latency import latency
from tfx.model.system import Parallelism, Workload


def _out(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_latency_header_and_launches():
    r = latency("llama3.2-1b", "h200_sxm", Workload("decode", 131072, 1024), Parallelism())
    lines = render(replace(r, launches=1234.0))
    assert lines[0].startswith("llama3.2-1b on h200_sxm: decode, batch 1,024, context 131,072, weights bf16")
    assert "; 1,234 launches; " in lines[2]


def test_hw_sweep_counts_its_hardware_points(capsys):
    # five knobs (memory capacity, compute, memory bandwidth, intra- and inter-node links), each at
    # the five default factors: 5^5 = 3,125 hardware points
    first = _out(capsys, "model", "hw-sweep", "--model", "llama3.2-1b", "--hw", "h200_nvl8").splitlines()[0]
    assert " configurations x 3,125 hardware points = " in first
    # the device limit is named (default 64), in the text and the JSON, as suggest names its own
    assert first.startswith("llama3.2-1b on h200_nvl8 (<= 64 devices): ")
    import json
    data = json.loads(_out(capsys, "model", "hw-sweep", "--model", "llama3.2-1b", "--hw", "h200_nvl8",
                           "--devices", "4", "--json"))
    assert data["max_devices"] == 4


def test_serve_writes_every_token_count_alike(capsys):
    # chunked prefill of 16,384 prompt tokens in chunks of 2,048: ceil(16384 / 2048) = 8 chunk steps
    # of ceil(16384 / 8) = 2,048 tokens
    text = _out(capsys, "model", "serve", "--model", "llama3.2-1b", "--hw", "h200_sxm", "--input", "16384",
                "--output", "2048", "--concurrency", "1024", "--chunk", "2048")
    lines = text.splitlines()
    assert lines[0].startswith("llama3.2-1b on h200_sxm: chunked serving, tp1 cp1 pp1 dp1 ep1 (1 GPU), ")
    assert lines[1].startswith("  requests: input 16,384, output 2,048, concurrency 1,024 -> decode batch ")
    assert lines[1].endswith(" prompt tokens per step (chunk 2,048)")
    assert "note: 8 chunk steps of 2,048 prompt tokens per request; " in text


def test_the_launch_and_capacity_notes_state_their_values():
    """The notes said 'launch cost: given' and 'capacity: given' / 'capacity: memory.gmem.capacity'
    with no value (the JSON's notes too). --launch-us 5 is 5,000 ns, written '5 us' (three
    significant digits, as the model's formulas); --capacity 80 is 80e9 B = '80.00 GB'; h200_sxm
    states memory.gmem.capacity 141 GB = 141e9 B = '141.00 GB'."""
    from tfx.model.system import load_system
    given = load_system("h200_sxm", launch_ns=5e3, capacity=80e9)
    assert given.launch_note == "given, 5 us per kernel (--launch-us)"
    assert given.capacity_note == "given, 80.00 GB per device (--capacity)"
    assert load_system("h200_sxm").capacity_note == "141.00 GB per device (memory.gmem.capacity)"
