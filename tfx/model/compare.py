"""Side-by-side comparison of saved latency results (``LatencyResult.to_json()``)."""

from __future__ import annotations


def compare_results(results: list[dict]) -> dict:
    """Rows: latency, attention, ffn, memory, devices, then every stage; the best (lowest) marked."""
    cols = [f"{r.get('label', '?')}" for r in results]
    seen = {}
    for i, c in enumerate(cols):
        if c in seen:
            cols[i] = f"{c} #{i + 1}"
        seen[c] = True
    rows = []

    def add(name, values, unit="ns", lower_better=True):
        present = [v for v in values if v is not None]
        best_v = (min(present) if lower_better else max(present)) if present else None
        rows.append({"name": name, "unit": unit, "values": values,
                     "best": [v is not None and best_v is not None and v == best_v and len(present) > 1
                              for v in values]})

    add("latency", [r["latency_ns"] for r in results])
    add("attention", [r.get("attention_ns") for r in results])
    add("ffn", [r.get("ffn_ns") for r in results])
    add("devices", [r.get("devices") for r in results], unit="count")
    add("memory/device", [r["memory"].get("total") for r in results], unit="B")
    names = []
    for r in results:
        for s in r["stages"]:
            if s["name"] not in names:
                names.append(s["name"])
    for n in names:
        vals = []
        for r in results:
            st = next((s for s in r["stages"] if s["name"] == n), None)
            vals.append(st["total_ns"] if st else None)
        if all(v in (None, 0) for v in vals):
            continue
        add(n, vals)
    # what each column priced, as every result names it: model, profile, knobs, workload and
    # parallelism (the JSON had the columns' labels only, and 'tp1 cp1 pp1 dp1 ep1 #2' of two saved
    # results told neither their profiles nor their knobs apart)
    priced = [{"column": c, "model": r.get("model"), "hw": r.get("hw"), "knobs": dict(r.get("knobs") or {}),
               "workload": dict(r.get("workload") or {}), "parallelism": r.get("parallelism")}
              for c, r in zip(cols, results)]
    return {"columns": cols, "priced": priced, "rows": rows}
