#!/usr/bin/env python3
"""A timing rule for the share of the SMs' L2 read sectors that the L2 Request Coalescer merges in front of
the slices (lrc_s23: Nsight's lrc coalesced / coalescable equals the slices' merged share within 0.03 in
five launches), against every stored launch of bench/l2_merge_rule.py (docs/analysis.md, "A timing rule for
the L2 Request Coalescer (session 23, lrcrule23)").

The rule: a sector is coalesced when another request for it is pending in the LRC when it arrives. The
co-readers of a tile are the first wave's CTAs that read it (Triton's group-M order, a walk's row-major
tiles; the wave is 132 x CTAs an SM positions, l2_merge_rule's `wave` group): if every co-reader's request
for a step were pending together, all copies but one would merge (`wave`). Each CTA keeps stages - 1 tiles
in flight, so a request stays pending about stages - 1 of its steps (Little's law in a copy-bound loop: the
pending time is the in-flight tiles x the step time); a co-reader's request for the same step meets it when
the two CTAs' phases lie within that many steps. With phases spread over D steps the share is
    lin:  wave x min(1, (stages - 1) / D)
    exp:  wave x (1 - exp(-(stages - 1) / d))  (n co-readers' phases spread over n x d steps, the
          clusters of n uniform points whose gaps exceed (stages - 1) / (n d): 1 + (n - 1) e^-(s-1)/d)
D (or d) is the one constant, each of lrc_s23's five launches solved for it and the median taken; the
other launches check it. `pair` is main's rule (l2_merge_rule's pair group) for comparison.

Usage: python3 bench/l2_lrc_rule.py [--no-model]"""
import math
import statistics
import sys

sys.path.insert(0, "bench")
import l2_merge_rule as R  # noqa: E402

LRC = f"{R.HERE}/lrc_s23/lrc_s23.csv"


def lrc_launches():
    import csv
    rows = {}
    for r in csv.DictReader(open(LRC)):
        rows.setdefault(r["config"], {})[r["metric"]] = float(r["value"].replace(",", ""))
    for cfg, m in rows.items():
        parts = cfg.split("_")
        kernel = parts[0]
        M, N, K, BM, BN, BK, W, S, last = (int(x) for x in parts[1:])
        r = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, WARPS=W, STAGES=S)
        if kernel == "persistent":
            r.update(NUM_SMS=last, GROUP_M=1)
        else:
            r.update(GROUP_M=last)
        r = {k: str(v) for k, v in r.items()}
        yield "lrc23", kernel, r, m["lts__t_sectors_srcunit_tex_op_read.sum"] * 32


def lin_share(wave, stages, D):
    """wave x min(1, (stages - 1) / D): a co-reader's request meets another's when their phases lie within
    the stages - 1 steps a request stays pending, phases spread over D steps."""
    return wave * min(1, (stages - 1) / D)


def exp_share(wave, stages, d):
    """wave x (1 - exp(-(stages - 1) / d)): n co-readers' phases uniform over n x d steps; the requests
    that reach the slices are the clusters, 1 + (n - 1) (1 - (s - 1) / (n d))^n -> 1 + (n - 1) e^-(s-1)/d."""
    return wave * (1 - math.exp(-(stages - 1) / d))


def window_of(wave, stages, merged):
    """The D that makes lin_share give a launch's measured merged share: (stages - 1) x wave / merged."""
    return (stages - 1) * wave / merged


def main():
    ctx = R.model_context() if "--no-model" not in sys.argv else None
    order = R.dispatch_order()
    rows = []
    for tag, kernel, r, served in list(R.launches()) + list(lrc_launches()):
        # lrc_s23's README: one CTA an SM at 5 stages
        x = R.launch_geometry(kernel, r, ctx, ctas_per_sm=1 if tag == "lrc23" and int(r["STAGES"]) == 5 else None)
        shares = R.rule_shares(x.g0, x.g1, x.G, x.a, x.b, x.W, order)
        pair = shares["pair"]
        if kernel == "persistent" and int(r["NUM_SMS"]) in R.ON_ONE_TPC:
            pair *= R.ON_ONE_TPC[int(r["NUM_SMS"])]
        merged = 1 - served / x.copies
        rows.append(dict(tag=tag, name=x.name, c=x.c, waves=x.g0 * x.g1 / x.W, merged=merged, pair=pair,
                         wave=shares["wave"], s=x.STAGES))
    # the one constant from lrc_s23's five launches
    cal = [x for x in rows if x["tag"] == "lrc23"]
    D = statistics.median(window_of(x["wave"], x["s"], x["merged"]) for x in cal)
    d = statistics.median((x["s"] - 1) / -math.log(1 - x["merged"] / x["wave"]) for x in cal)
    print(f"from lrc_s23: D = median of (s - 1) x wave / merged = {D:.2f} steps "
          f"({', '.join('%.2f' % ((x['s'] - 1) * x['wave'] / x['merged']) for x in cal)}); "
          f"d = {d:.2f} ({', '.join('%.2f' % ((x['s'] - 1) / -math.log(1 - x['merged'] / x['wave'])) for x in cal)})")
    print(f"{'set':5s} {'launch':44s} {'c':>2s} {'waves':>5s} {'merged':>6s} {'pair':>6s} {'wave':>6s} {'lin':>6s} {'exp':>6s}")
    errs = {k: [] for k in ("pair", "wave", "lin", "exp")}
    for x in rows:
        x["lin"] = lin_share(x["wave"], x["s"], D)
        x["exp"] = exp_share(x["wave"], x["s"], d)
        print(f"{x['tag']:5s} {x['name']:44s} {x['c']:2d} {x['waves']:5.1f} {x['merged']:6.3f} "
              + " ".join(f"{x[k]:6.3f}" for k in errs))
        if x["tag"] != "lrc23":
            for k in errs:
                errs[k].append(abs(x[k] - x["merged"]))
    print(f"{len(errs['pair'])} stored launches (lrc_s23's five not counted); |rule - measured|: " + "; ".join(
        f"{k} median {statistics.median(v):.3f}, max {max(v):.3f}, within 0.05 {sum(e <= 0.05 for e in v)}" for k, v in errs.items()))
    for lo, hi, label in ((0, 1.5, "one wave"), (1.5, 1e9, "more waves")):
        sub = [x for x in rows if x["tag"] != "lrc23" and lo <= x["waves"] < hi]
        print(f"  {label} ({len(sub)}): " + "; ".join(
            f"{k} median {statistics.median(abs(x[k] - x['merged']) for x in sub):.3f}" for k in errs))


if __name__ == "__main__":
    main()
