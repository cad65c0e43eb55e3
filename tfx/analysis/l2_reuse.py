"""L2 reuse within a wave: which gmem reads of a launch hit L2 because co-resident CTAs of
the same wave read the same tile (docs/analysis.md, "performance"), and the window of
tiles that must stay resident in L2 for that reuse to hold.

Public: ``wave_reuse`` (the analysis and the simulator price loads with it),
``enclosing_loop``, ``loops_between`` and ``running_share``.
"""

from __future__ import annotations

from tfx.analysis.counting import ScopeNode
from tfx.analysis.numbers import emax, emin, is_array, ratio, where
from tfx.ir.nodes import MeshRegion, Window


def wave_reuse(root: ScopeNode, kernel, env, profile, blocks) -> dict:
    """Per top-level mesh: op id -> fraction of its gmem reads that miss L2 (first touches in a wave).

    A wave is ``units x resident`` consecutive positions in launch order; with a
    ``swizzle(G)`` the order walks G rows of the grid before moving a column
    (Triton's group-M order). A load whose window depends only on the row
    coordinate is re-read by every CTA of that row in the wave; only the first
    read goes to DRAM.
    """
    out: dict = {}
    if profile.kind != "gpu":
        return out
    levels = profile.memory_levels()
    l2 = next((l for l in levels.values() if l.caches), None)
    if l2 is None:
        return out
    units = profile.units_of(profile.mesh_levels().get("cta", "sm"))
    for mesh in (c for c in root.children if c.kind == "mesh"):
        region: MeshRegion = mesh.region
        extents = [e.evaluate(env) for e in region.extents]
        total = mesh.positions
        resident = blocks.get(mesh.id, 1) if isinstance(blocks, dict) else blocks
        W = emin(units * resident, total)
        W = emax(W, 1)
        g0 = extents[0]
        g1 = extents[1] if len(extents) > 1 else 1
        if region.swizzle is not None and len(extents) > 1:
            # Group-M order: groups of G rows x all g1 columns, walked column by column.
            # A wave inside one group spans G rows and ceil(W / G) columns; a wave larger
            # than a group spans whole groups' rows and every column.
            G = emax(emin(region.swizzle.evaluate(env), g0), 1)
            group = G * g1
            rows = where(W <= group, emin(G, W), emin(g0, G * -(-W // group)))
            cols = where(W <= group, emin(g1, -(-W // G)), g1)
        else:
            cols = emin(g1, W)
            rows = emin(g0, -(-W // g1))
        coords = region.coords
        per_op = {}
        window = 0
        for node in mesh.walk():
            if node.kind != "op" or node.op is None:
                continue
            windows = [o for o in node.op.operands if isinstance(o, Window)]
            if not windows or node.op.opcode not in ("load", "copy"):
                continue
            deps = set()
            for w in windows:
                for a in w.axes:
                    for part in (a.offset, a.size):
                        if part is not None:
                            deps |= part.free_names()
            used = [c for c in coords if c in deps]
            if len(coords) >= 2 and used == [coords[0]]:
                distinct = rows
            elif len(coords) >= 2 and used == [coords[1]]:
                distinct = cols
            elif not used:
                distinct = 1
            else:
                distinct = W
            per_op[node.id] = ratio(distinct, W) if not is_array(distinct, W) else distinct / W
            # The reuse needs, per k-step of the wave, each distinct tile resident in L2 while
            # the CTAs that share it read it: distinct tiles x bytes x the loop's stages, for
            # the share of the wave's CTAs that run the op at all.
            tile = sum(v for (kind, lvl, rw), v in node.per_exec.items() if kind == "traffic" and rw == "read")
            loop = enclosing_loop(mesh, node)
            stages = loop.stages if loop is not None and loop.stages is not None else 1
            window = window + distinct * running_share(mesh, node) * tile * stages
        fits = window <= l2.capacity
        if not is_array(fits) and not fits:
            per_op = {k: 1 for k in per_op}   # the window does not fit: every request goes to DRAM
        elif is_array(fits):
            per_op = {k: where(fits, v, 1) for k, v in per_op.items()}
        per_op["__window__"] = (window, l2.capacity)
        out[mesh.id] = per_op
    return out


def running_share(mesh: ScopeNode, target: ScopeNode):
    """The share of ``mesh``'s positions that execute ``target``: the product, over the loops
    between them, of min(1, the loop's mean trips per execution). A loop whose trip count is
    0 at some positions and 1 at others (gqa_decode's masked tail block, ``bound 1``) runs at
    exactly its mean share of them; one that runs at least once everywhere gives 1; a loop
    with 0 trips everywhere gives 0, so its body's tiles claim no L2 (they were counted at
    the loop's bound, inflating gqa_decode's window from 25.99 to 34.64 MB). Where a loop's
    trips are uneven and some positions skip it, this is an upper bound on the share."""
    share = 1
    for loop in loops_between(mesh, target):
        share = share * emin(loop.trips, 1)
    return share


def loops_between(mesh: ScopeNode, target: ScopeNode) -> list:
    """The loop nodes of ``mesh``'s subtree that contain ``target``, outermost first."""
    path: list = []

    def visit(node) -> bool:
        if node is target:
            return True
        for c in node.children:
            if visit(c):
                if c.kind == "loop":
                    path.append(c)
                return True
        return False

    visit(mesh)
    return path[::-1]


def enclosing_loop(mesh: ScopeNode, target: ScopeNode):
    """The innermost loop node of ``mesh``'s subtree that contains ``target``."""
    found = None

    def visit(node, loop):
        nonlocal found
        if node is target:
            found = loop
            return True
        for c in node.children:
            if visit(c, c if c.kind == "loop" else loop):
                return True
        return False

    visit(mesh, None)
    return found
