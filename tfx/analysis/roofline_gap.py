"""Which terms of the predicted time put it above the roofline, and by how much.

The roofline (tfx.analysis.roofline) prices the kernel's work at the device's aggregate
peak rates; the prediction (tfx.analysis.performance) is a launch overhead, one memory latency,
the waves and a tail wave. The gap between them is attributed first to the rates: the same
work at the fractions of peak the profile says a long run sustains (``Roofline.attainable_ns``,
split by what lowers each rate, ``Roofline.attainable_terms``: "dram below peak (88.3%)", "vector
below peak (50.0%: one flop a lane-cycle)"), which the prediction's engines run at; then to
the bytes the launches read from DRAM again ("dram re-reads": their own DRAM bytes,
``LaunchTime.dram_bytes``, at ``Roofline.dram_rate``, past the attainable roofline, which moves
each byte once); then to the shared-memory port where it binds the waves ("smem port (as
scheduled)", ``smem_port_ns``) and to the copy engine where it does ("copy engine (as
scheduled)": its L2 bytes at each SM's share, its DRAM bytes at the copy's fraction); then, where the tensor engine binds, to its mmas' padding to the
instruction shape ("mma padding", ``LaunchTime.tensor_pad_ns``: a decode's 4 query rows run as a
32-row instruction); then to the terms whose ns the roofline does not price
(``Term.beyond_roofline``: launch, fill, an uneven tail, a persistent kernel's last round, the
serial chain's and the loads' waits inside the waves), to a straight body's first full wave,
whose CTAs start together and run in lock step past a batch's time ("first wave in lock step",
``LaunchTime.first_wave_excess_ns``), and to the tail wave's quantization: a
last wave of ``tail`` CTAs over ``slots`` would take ``tail / slots`` of a full wave at the full
waves' rate, and takes ``tail_ns``; the rest is its excess. Last, the waves' time past their
busiest engine ("latency past the engines", ``latency_past_engines_ns``: a latency-bound
launch's chain, a CTA's first loads, a split-K reduction's link latency), and where the tensor
engine binds them, its time past its mmas' work and the other compute units' ("mma chain waits",
``mma_chain_waits_ns``: a command processor's carried accumulator waiting each trip's completion
latency, one CTA's bookkeeping in series with its mma and softmax), each at most what the gap
still leaves (the named waits inside the waves are part of them). What these terms do not cover
is said as not attributed, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfx.analysis.numbers import is_array, to_plain


@dataclass
class RooflineGap:
    gap_ns: float                                  # predicted - roofline (0 at the roofline)
    terms: list = field(default_factory=list)      # (name, ns) beyond the roofline, largest first
    not_attributed_ns: float = 0.0                 # gap - the terms' sum (negative where they overlap)

    def to_json(self) -> dict:
        return {"gap_ns": to_plain(self.gap_ns),
                "terms": [{"name": n, "ns": to_plain(ns)} for n, ns in self.terms],
                "not_attributed_ns": to_plain(self.not_attributed_ns)}


def tail_excess_ns(lt) -> float:
    """The tail wave's ns over its share of a full wave: ``tail_ns - tail / slots * batch_ns``
    (0 without a tail, or where the tail runs at the full waves' rate or faster)."""
    slots = lt.units * lt.resident
    if not lt.tail_positions or not slots:
        return 0.0
    return max(float(lt.tail_ns) - float(lt.tail_positions) / float(slots) * float(lt.batch_ns), 0.0)


def bound_engine_ns(launches, engine: str) -> float:
    """``engine``'s time over the launches whose waves it binds (``bound_engine == engine``): each
    launch's engine time a full wave (``engines[engine]``) x its waves, positions / slots (the tail
    at its share of a wave, as ``tail_excess_ns`` counts it); 0 where no launch is bound by it.
    The shared-memory port's (``"smem"``: every warpgroup's operand reads per instruction,
    bank-conflicted transposes, the copies' writes, at the port's rate under mma) and the tensor
    engine's (``"tensor"``, its padding included) are the gap's."""
    return sum(float(lt.engines.get(engine, 0)) * float(lt.waves) for lt in launches
               if getattr(lt, "bound_engine", None) == engine and not is_array(lt.waves))


def smem_port_ns(launches) -> float:
    """The shared-memory port's time over the launches whose waves it binds (``bound_engine_ns``)."""
    return bound_engine_ns(launches, "smem")


def mma_chain_waits_ns(launches) -> float:
    """The tensor engine's time past its mmas' work over the launches whose waves it binds
    (``bound_engine == "tensor"``; not where one CTA's serial chain outlasts every engine,
    ``latency_from == "chain"``, whose wait latency_past_engines_ns names; a launch latency-bound
    by its rounds keeps the chain inside the tensor engine's time, ``latency_from == "round"``,
    and counts here): its time a full wave x the waves
    (``bound_engine_ns``) less ``LaunchTime.tensor_work_ns``, the mmas at the engine's rate,
    padding included, and less the vector and special-function engines' time over the waves,
    which the roofline already adds to the tensor's (its compute units add) and the rates' terms
    price. What the engine then waits on is its chain: a command processor's carried accumulator,
    each trip's mma dispatched a completion latency after the last one ends (sip); one CTA's trip,
    its bookkeeping and the next tile's copies in series with the mma and the softmax, where no
    other CTA's work fills it (a GPU's attention at 1 CTA an SM)."""
    total = 0.0
    for lt in launches:
        work = getattr(lt, "tensor_work_ns", None)
        chain_bound = getattr(lt, "bound_by", None) == "latency" and getattr(lt, "latency_from", None) != "round"
        if work is None or chain_bound or is_array(lt.waves, work):
            continue
        simt = sum(float(lt.engines.get(e, 0)) for e in ("vector", "special")) * float(lt.waves)
        total += max(bound_engine_ns([lt], "tensor") - float(work) - simt, 0.0)
    return total


def latency_past_engines_ns(launches) -> float:
    """The waves' time past their busiest engine: (a full wave's time - its busiest engine's) x
    positions / slots, over every launch: what a wave waits on that no engine's throughput sets
    (a latency-bound launch's chain, ``bound_by == "latency"``: one CTA's serial chain outlasts the
    engines, or a loop's round is a trip's load, wait and compute in series; elsewhere a CTA's
    first loads, a split-K reduction's link latency, an epilogue after its loop)."""
    total = 0.0
    for lt in launches:
        if getattr(lt, "engines", None) is None or is_array(lt.waves, lt.batch_ns):
            continue
        busiest = max((float(v) for v in lt.engines.values()), default=0.0)
        total += max(float(lt.batch_ns) - busiest, 0.0) * float(lt.waves)
    return total


def attribute(launches, predicted_ns, ideal_ns, roofline=None) -> RooflineGap | None:
    """The gap of ``predicted_ns`` over ``ideal_ns`` by term, largest first; None for swept
    (array) values. ``roofline``: the kernel's (tfx.analysis.roofline.Roofline): its attainable
    roofline's excess over ``ideal_ns`` is the rates' terms (``attainable_terms``, or one named by
    its note), and its ``dram_rate`` prices the launches' DRAM bytes for the re-reads' term; each
    of the floors (rates, re-reads, the smem port, the copy engine, mma padding) takes at most
    what the gap leaves after the ones before it, and the latency past the engines and the mma
    chain's waits what the gap leaves after all the others. Without it, every term but the
    rates' and the re-reads'."""
    if is_array(predicted_ns, ideal_ns) or any(is_array(lt.total_ns) for lt in launches):
        return None
    gap = max(float(predicted_ns) - float(ideal_ns), 0.0)
    if not gap:
        return RooflineGap(0.0)
    sums: dict[str, float] = {}
    note = getattr(roofline, "attainable_note", None)
    if note and not is_array(roofline.attainable_ns):
        rates = max(min(float(roofline.attainable_ns) - float(ideal_ns), gap), 0.0)
        # by what lowers each rate (a compute unit's fraction, DRAM's), largest first, each at
        # most what the rates' term leaves; one term by the note where the roofline has no split
        for name, ns in getattr(roofline, "attainable_terms", None) or [(note, rates)]:
            take = min(float(ns), rates - sum(sums.values()))
            if take > 0:
                sums[name] = take

    def past_floors(ns: float) -> float:
        # a floor's time past the roofline and the terms named before it, at most what the gap leaves
        return min(ns - float(ideal_ns) - sum(sums.values()), gap - sum(sums.values()))

    rate = getattr(roofline, "dram_rate", None)
    if rate is not None and not is_array(rate) and float(rate) > 0:
        # the launches' own DRAM bytes (their L2 misses, each re-read as often as it misses) at
        # the rate DRAM sustains: a floor the waves cannot beat; past the attainable roofline
        # (which moves each byte once) it is the bytes read again
        again = past_floors(sum(float(getattr(lt, "dram_bytes", 0) or 0) for lt in launches) / float(rate) * 1e9)
        if again > 0:
            sums["dram re-reads"] = again
    # the shared-memory port and the copy engine as the waves schedule them, past the floors above
    over = past_floors(smem_port_ns(launches))
    if over > 0:
        sums["smem port (as scheduled)"] = over
    over = past_floors(bound_engine_ns(launches, "copy"))
    if over > 0:
        sums["copy engine (as scheduled)"] = over
    pad = sum(float(getattr(lt, "tensor_pad_ns", 0) or 0) for lt in launches
              if getattr(lt, "bound_engine", None) == "tensor")
    if pad > 0:
        # the tensor engine's work padded to its instruction shape, where the tensor engine binds:
        # the padding, at most what the engine's time over the launches sits past the floors above
        over = min(pad, past_floors(bound_engine_ns(launches, "tensor")))
        if over > 0:
            sums["mma padding"] = over
    for lt in launches:
        for t in lt.terms:
            if t.beyond_roofline and float(t.ns) > 0:
                sums[t.name] = sums.get(t.name, 0.0) + float(t.ns)
        first = getattr(lt, "first_wave_excess_ns", 0)
        if not is_array(first) and float(first) > 0:
            # a straight body's first full wave, its CTAs started together, in lock step past a
            # batch's time (the waves line's; the engines' terms price every wave at a batch's)
            sums["first wave in lock step"] = sums.get("first wave in lock step", 0.0) + float(first)
        tail = min(tail_excess_ns(lt), gap - sum(sums.values()))
        if tail > 0:
            # named apart from the breakdown's "tail wave" (the whole tail): this is its excess only,
            # at most what the gap leaves (a roofline that spreads a short launch's special-function
            # work over every SM already holds part of the idle SMs' share)
            sums["tail-wave excess"] = sums.get("tail-wave excess", 0.0) + tail
    # last: the named waits inside the waves (a load wait, a pipeline's depth) and the rates of
    # the work in the chain are part of these; each takes at most what the gap still leaves
    for name, ns in (("latency past the engines", latency_past_engines_ns(launches)),
                     ("mma chain waits", mma_chain_waits_ns(launches))):
        take = min(ns, gap - sum(sums.values()))
        if take >= 1:        # (whole ns: a rounding's remainder names nothing)
            sums[name] = take
    terms = sorted(sums.items(), key=lambda kv: -kv[1])
    return RooflineGap(gap, terms, gap - sum(ns for _, ns in terms))
