"""``tfx open --model NAME``: the model screen, a transformer deployed on many devices.

Named ``deployment`` (not ``model``) so it is not mistaken for ``tfx.model``, the
layer it renders: this package holds screens, that one holds the latency model.

One transformer preset on many devices: the physical layout of the shards,
suggested parallelism, memory per device, per-stage latency, saved
configurations side by side and the hardware co-design sweep, all over
``tfx.model`` (``latency``, ``suggest``, ``hw_sweep``, ``compare_results``).

``tfx.tui.deployment.core`` is plain Python (jobs, the worker function, every row
and line the tabs show) and is tested without a screen; ``app``, ``panes`` and
``commands`` import Textual.
"""
