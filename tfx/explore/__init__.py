"""Design-space exploration: sweep kernel parameters and hardware knobs, vectorized.

    from tfx.explore import explore
    r = explore(module, None, profile, sweeps={"BM": [64, 128]}, knob_sweeps={"hbm.bandwidth": ["x1", "x2"]})
    r.top, r.pareto, r.infeasible, r.to_json()

See docs/explore.md.
"""

from tfx.explore.evaluate import COLUMNS, OBJECTIVES
from tfx.explore.explore import ExploreResult, explore, knob_cost
from tfx.explore.pareto import dominates, pareto_2d, pareto_front, top_k
from tfx.explore.sensitivity import sensitivity
from tfx.explore.space import (DEFAULT_CHUNK, Space, build_space, parse_knob_sweeps, parse_sweeps,
                               parse_values)

__all__ = ["explore", "ExploreResult", "knob_cost", "pareto_2d", "pareto_front", "dominates", "top_k",
           "sensitivity", "Space", "build_space", "parse_sweeps", "parse_knob_sweeps", "parse_values",
           "COLUMNS", "OBJECTIVES", "DEFAULT_CHUNK"]
