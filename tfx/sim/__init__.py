"""The pipeline simulator: one kernel on one profile, event by event (integer ns).

```python
from tfx.sim import simulate
a = analyze(module, None, profile, params=...)
r = simulate(a)                    # representative unit per launch, waves extrapolated
r = simulate(a, full=True)         # every unit of the device
r.makespan_ns, r.engines, r.stalls, r.commands, r.pipeline_efficiency
r.to_json(); r.chrome_trace(); r.timeline.events_in(t0, t1, unit=0)
```

See docs/simulator.md for the model.
"""

from __future__ import annotations

from tfx.sim.result import SimResult, Timeline
from tfx.sim.run import simulate

__all__ = ["simulate", "SimResult", "Timeline"]
