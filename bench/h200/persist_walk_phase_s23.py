"""Reader (no GPU): how far apart a persistent walk's CTAs start their tiles, round by round,
from calibration/h200/measured/persist_walk_s20's timelines (bench/h200/measure_persist_walk_s20.py:
each tile's start and end on its SM). Session 23 (persist23), the source of
tfx.analysis.pipeline_depth.walk_transfer.

For each walk and round: the interquartile range of the CTAs' tile starts in trips (a trip = the
median tile time / its k-trips), and the mean resultant length R of the starts' phase within a
trip (start mod trip as an angle): R near 1 when the CTAs' trips are in step, near 0 when their
phases are spread over the whole trip.

    python3 bench/h200/persist_walk_phase_s23.py
"""
import collections
import csv
import glob
import math
import statistics
from pathlib import Path

DIR = Path(__file__).resolve().parent.parent.parent / "calibration" / "h200" / "measured" / "persist_walk_s20"


def main():
    for f in sorted(glob.glob(str(DIR / "walk_*.csv"))):
        rows = list(csv.DictReader(open(f)))
        name = Path(f).stem[5:]
        shape, tile = name.split("_")[0], name.split("_")[1]
        trips = int(shape.split("x")[2]) // int(tile.split("x")[2])
        trip = statistics.median(int(r["t_end_ns"]) - int(r["t_start_ns"]) for r in rows) / trips
        starts = collections.defaultdict(list)
        for r in rows:
            starts[int(r["round"])].append(int(r["t_start_ns"]))
        out = []
        for rd in sorted(starts)[:-1]:          # the last round is partial
            s = sorted(starts[rd])
            ph = [(x % trip) / trip * 2 * math.pi for x in s]
            res = math.hypot(sum(map(math.cos, ph)), sum(map(math.sin, ph))) / len(ph)
            iqr = (s[3 * len(s) // 4] - s[len(s) // 4]) / trip
            out.append(f"r{rd}: iqr {iqr:.2f} trips, R {res:.2f}")
        print(f"{name} (trip {trip:.0f} ns)\n   " + "\n   ".join(out[:3] + out[3::5]))


if __name__ == "__main__":
    main()
