"""The one job runner of both explorer apps (``tfx open`` and ``tfx open --model``).

Work that takes longer than a keystroke (an analysis, a sweep, a simulation, a
latency model run) is a *job*: a top-level, picklable function and its plain-data
argument, run in a worker process so keystrokes never wait behind it (pure Python
in a thread would hold the GIL). The runner

* keeps one ``ProcessPoolExecutor`` per *lane* (the kernel explorer has one for
  analyses, one for sweeps and one for simulations, so none waits behind another);
* numbers each request of a *kind* with a generation; a result whose generation is
  no longer the latest of its kind is dropped (the user has moved on);
* replaces a broken pool (a worker killed, out of memory) and runs that job in a
  thread, so the app never dies of its workers;
* posts a ``JobDone`` message (kind, generation, outcome) to the app when a job
  finishes; the app's ``on_job_done`` dispatches it by kind;
* runs every job inline with ``sync=True`` (tests), delivering at once.

Start-up: a pool created while the process has one thread is forked (cheap, and the
worker inherits what is already imported); ``start`` does that before Textual starts
its threads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import os
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from textual.message import Message


def worker_init() -> None:
    """Run in each worker process of the kernel explorer: its stdout and stderr go to
    /dev/null, since they are the terminal the app draws on (a stray warning would
    scribble over the screen); what a forked worker inherited is frozen out of the
    garbage collector's passes, and the collector, which a worker forked while the app
    starts inherits paused (``tfx.tui.open_command.collector_paused``), runs again.
    Here, not in ``tfx.tui.core``: the workers are forked before the first frame, and
    the core (its job types, the presentation layer) is imported after it."""
    import gc
    gc.freeze()
    gc.enable()
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    except OSError:
        pass


def noop() -> None:
    """Submitted once to start a worker process early (a fork-context pool forks at the
    first submit)."""


class JobDone(Message):
    """A job finished and is still the latest of its kind."""

    def __init__(self, kind: str, generation: int, outcome: Any) -> None:
        super().__init__()
        self.kind = kind
        self.generation = generation
        self.outcome = outcome


class JobRunner:
    """Worker pools by lane, generations by kind, stale results dropped (see the module)."""

    def __init__(self, lanes: dict[str, int], routes: dict[str, str], sync: bool = False,
                 initializer: Callable[[], None] | None = None, start_method: str = "auto") -> None:
        self.lanes = dict(lanes)              # lane -> worker processes
        self.routes = dict(routes)            # kind -> lane
        self.sync = sync
        self.initializer = initializer
        self.start_method = start_method      # auto: fork while single-threaded, else spawn
        self.generation: dict[str, int] = {k: 0 for k in routes}
        self.shown: dict[str, int] = {k: -1 for k in routes}
        self.running: dict[str, int] = {k: 0 for k in routes}   # jobs in flight per kind
        self.pools: dict[str, cf.ProcessPoolExecutor | None] = {lane: None for lane in lanes}
        self.failed = False                   # no pool can be had: jobs run in threads
        self.app = None
        if not sync and start_method == "spawn":
            # The resource tracker hands sys.stderr's fd to its process: start it now,
            # before Textual replaces sys.stderr with a capture that has no descriptor.
            try:
                from multiprocessing import resource_tracker
                resource_tracker.ensure_running()
            except Exception:  # noqa: BLE001 - no tracker: no pool; jobs run in threads
                self.failed = True

    # ---------------------------------------------------------------- pools
    def _new_pool(self, lane: str) -> cf.ProcessPoolExecutor | None:
        import multiprocessing
        import threading
        fork = (self.start_method == "fork" or (self.start_method == "auto"
                and sys.platform.startswith("linux") and threading.active_count() == 1))
        try:
            if not fork:
                # The resource tracker hands sys.stderr's fd to its process; Textual's
                # replacement stderr has none, so a failure here means: no pool.
                from multiprocessing import resource_tracker
                resource_tracker.ensure_running()
            ctx = multiprocessing.get_context("fork" if fork else "spawn")
            return cf.ProcessPoolExecutor(max_workers=self.lanes[lane], mp_context=ctx,
                                          initializer=self.initializer)
        except Exception:  # noqa: BLE001 - no pool: the app still works, more slowly
            self.failed = True
            return None

    def pool(self, lane: str) -> cf.ProcessPoolExecutor | None:
        if self.sync:
            return None
        if self.pools[lane] is None and not self.failed:
            self.pools[lane] = self._new_pool(lane)
        return self.pools[lane]

    def start(self, warm: dict[str, tuple] | None = None) -> None:
        """Create every lane's pool now and start its workers with ``warm[lane]`` =
        ``(fn, *args)`` (a fork-context pool forks at its first submit)."""
        if self.sync:
            return
        for lane in self.lanes:
            pool = self.pool(lane)
            task = (warm or {}).get(lane)
            if pool is not None and task is not None:
                self._fire(pool, task)

    def warm(self, lane: str, fn: Callable, *args) -> None:
        """Run ``fn(*args)`` in ``lane``'s worker for its side effects (imports, caches)."""
        pool = self.pools.get(lane)
        if pool is not None:
            self._fire(pool, (fn, *args))

    @staticmethod
    def _fire(pool: cf.ProcessPoolExecutor, task: tuple) -> None:
        try:
            pool.submit(*task)
        except (RuntimeError, BrokenProcessPool):
            pass

    def shutdown(self) -> None:
        for pool in self.pools.values():
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)

    # ---------------------------------------------------------------- jobs
    def next_generation(self, kind: str) -> int:
        self.generation[kind] += 1
        return self.generation[kind]

    def is_latest(self, kind: str, generation: int) -> bool:
        return generation == self.generation[kind]

    def busy(self, kind: str) -> bool:
        return self.running[kind] > 0

    def submit(self, kind: str, fn: Callable, job: Any, generation: int | None = None,
               in_thread: bool = False) -> int:
        """Run ``fn(job)`` as the latest ``kind`` job; returns its generation. The outcome
        comes back as ``JobDone`` unless a newer job of the kind was submitted meanwhile.
        ``in_thread``: run it in a thread of this process (while a spawned pool is still
        importing, a thread answers sooner)."""
        generation = self.next_generation(kind) if generation is None else generation
        if self.sync:
            self.deliver(kind, generation, fn(job))
        else:
            self.running[kind] += 1
            self.app.run_worker(self._run(kind, generation, fn, job, in_thread), group=kind,
                                exit_on_error=False)
        return generation

    async def call(self, lane: str, fn: Callable, job: Any) -> Any:
        """``fn(job)`` in ``lane``'s worker process (a thread when there is no pool)."""
        loop = asyncio.get_running_loop()
        pool = self.pool(lane)
        if pool is not None:
            try:
                return await loop.run_in_executor(pool, fn, job)
            except (BrokenProcessPool, RuntimeError):
                # a worker died (or the pool is shutting down): a new pool next time,
                # and this job in a thread now
                self._drop(lane, pool)
        return await loop.run_in_executor(None, fn, job)

    def _drop(self, lane: str, pool: cf.ProcessPoolExecutor | None) -> None:
        current = self.pools.get(lane)
        if current is not None and (pool is None or current is pool):
            current.shutdown(wait=False, cancel_futures=True)
            self.pools[lane] = None

    async def _run(self, kind: str, generation: int, fn: Callable, job: Any, in_thread: bool) -> None:
        try:
            if in_thread:
                out = await asyncio.get_running_loop().run_in_executor(None, fn, job)
            else:
                out = await self.call(self.routes[kind], fn, job)
        finally:
            self.running[kind] -= 1
        self._finish(kind, generation, out)

    def _finish(self, kind: str, generation: int, out: Any) -> None:
        if not self.is_latest(kind, generation):
            return                              # stale: a newer job of this kind is on its way
        self.app.post_message(JobDone(kind, generation, out))

    def deliver(self, kind: str, generation: int, out: Any) -> None:
        """Hand an outcome to the app now (sync mode, and the first analysis run in the app)."""
        if self.is_latest(kind, generation):
            self.app.on_job_done(JobDone(kind, generation, out))

    def mark_shown(self, kind: str, generation: int) -> None:
        self.shown[kind] = max(self.shown[kind], generation)

    async def wait_shown(self, kind: str, generation: int | None = None, timeout: float = 30) -> None:
        """Tests and the bench: wait until ``generation`` (default the latest) of ``kind``
        has been shown."""
        generation = self.generation[kind] if generation is None else generation
        deadline = time.monotonic() + timeout
        while self.shown[kind] < generation:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{kind} generation {generation} not shown")
            await asyncio.sleep(0.005)
