"""How far apart a spilling row kernel stores and reloads each spilled word: the LRU reuse
distances of its compiled local traffic, and the share of its reloads an LRU L2 would serve at
each ratio of the machine's frames to L2's capacity, if every thread ran the same instruction
stream in lock step (one wave).

Reads the SASS files measure_row_spill_sass.py leaves in ROW_SASS_DIR (the kernels are
loop-free, so the static order is each thread's dynamic order):

    ROW_SASS_DIR=/tmp/rs python3 bench/h200/measure_row_spill_sass.py family,N,BLOCK_M,WARPS ... > /dev/null
    python3 bench/h200/row_spill_reuse.py /tmp/rs/*.sass > reuse_lru.csv

A warp's spilled word is one 128-B line (local memory interleaves a word across the 32 lanes), so a
thread's words stand for the warp's lines. For each LDL of a word, its distance is the distinct
words a thread touched (loads and stores) since the word's STL plus the global bytes it loaded or
stored since (read once or written once: every one a new line; rmsnorm's weight row, shared by every
CTA, is counted too, which lengthens its distances by at most 1 / BLOCK_M of its loads). The machine's
distance is that x its threads, and its frames are the distinct words x 4 B x its threads, so a
reload hits an LRU L2 of C bytes while frames / C < frame bytes / distance: its ``threshold``.
Output: one row a kernel, the share of reloaded bytes whose threshold is past each ratio."""
import re
import sys
from pathlib import Path

RATIOS = (0.5, 0.7, 0.9, 1.1, 1.35, 1.75, 2.5, 4.0)
WIDTH = {".128": 16, ".64": 8}
LOCAL = re.compile(r"\b(LDL|STL|LDG|STG)((?:\.\w+)*)\s+(.*?);")
OFFSET = re.compile(r"\[R1(?:\+(0x[0-9a-f]+))?\]")


def _width(mods: str) -> int:
    return next((w for suffix, w in WIDTH.items() if suffix in mods), 4)


def events(sass: str):
    """(op, words or bytes) in program order: LDL/STL with the 4-B stack words they touch,
    LDG/STG with their bytes a thread."""
    out = []
    for line in sass.splitlines():
        m = LOCAL.search(line)
        if not m:
            continue
        op, mods, args = m.groups()
        width = _width(mods)
        if op in ("LDL", "STL"):
            at = OFFSET.search(args)
            base = int(at.group(1), 16) if at and at.group(1) else 0
            out.append((op, [base + 4 * i for i in range(width // 4)]))
        else:
            out.append((op, width))
    return out


def thresholds(sass: str):
    """(frame bytes a thread, [threshold of each reloaded 4-B word])."""
    evs = events(sass)
    frame = 4 * len({w for op, x in evs if op in ("LDL", "STL") for w in x})
    touched = []                 # stack words in touch order
    global_bytes = 0
    stored = {}                  # word -> (index into touched at its STL, global bytes then)
    out = []
    for op, x in evs:
        if op in ("LDG", "STG"):
            global_bytes += x
            continue
        for word in x:
            if op == "LDL" and word in stored:
                at, g0 = stored[word]
                distance = 4 * len(set(touched[at + 1:]) - {word}) + global_bytes - g0
                out.append(frame / max(distance, 1))
            if op == "STL":
                stored[word] = (len(touched), global_bytes)
            touched.append(word)
    return frame, out


def main(argv) -> int:
    print("kernel,frame_bytes_per_thread,reloaded_words," + ",".join(f"hit_at_{r}" for r in RATIOS))
    for path in argv:
        frame, out = thresholds(Path(path).read_text())
        if not out:
            continue
        shares = [sum(t > r for t in out) / len(out) for r in RATIOS]
        print(f"{Path(path).stem},{frame},{len(out)}," + ",".join(f"{s:.3f}" for s in shares))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
