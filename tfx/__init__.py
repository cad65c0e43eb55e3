"""tfx: a terminal explorer for the performance of tile kernels.

The headless core (lang, ir, hw, analysis, sim, explore, model, cli) never
imports Textual; only ``tfx.tui`` does.
"""

__version__ = "0.1.0"
