"""One session: a live box, the agent in it, and the executions it runs one at a time.

An execution is pumped by a task of its own from the agent into a bounded queue, so that a
caller who goes away (a dropped connection) only abandons it: the execution is interrupted and
the pump reads on to its end, keeping the link in step for the next one. The server keeps its
own clock on every execution: an agent that stays silent past the execution's time limit, the
agent's interrupt grace and a kernel restart is taken as broken, and its box killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from sandlot import events as engine_events
from sandlot.errors import SessionEnded
from sandlot.jail import Frozen, LiveBox, LiveBoxes, Pipes, RunSpec
from sandlot.sessions import events
from sandlot.sessions.box import frames
from sandlot.sessions.link import AgentGone, AgentLink, AgentSilent
from sandlot.tenancy import Owner

log = logging.getLogger("sandlot.sessions")
START_TIMEOUT = 90.0  # seconds a box's agent and kernel may take to be ready (a loaded machine)
# Beyond an execution's own time limit: the agent's interrupt grace, then a kernel restart.
AGENT_ALLOWANCE = 2.0 + START_TIMEOUT
QUEUE = 64  # events waiting for a slow reader before the agent is made to wait
READER_PATIENCE = 60.0  # seconds a reader may leave the queue full before it counts as gone
# A snapshot's ops (save, load, rebase) and the agent's answer to each; the agent gives each up
# to 300 s (pickling a large namespace), the server a little more.
KEEP_ANSWERS = {"save": "saved", "load": "loaded", "rebase": "rebased"}
KEEP_TIMEOUT = 330.0


@dataclass(frozen=True, slots=True)
class SessionLimits:
    memory: int  # bytes, everything in the box
    idle_timeout: float  # seconds without a request before the session ends
    lifetime: float  # seconds from creation (or from being taken from the pool) to the end
    cpu_time: float  # CPU seconds of everything in the box, over its life
    output: int  # bytes of output per execution
    pause_after: float = 0.0  # seconds without a request before it is paused (0: never)


class Session:
    def __init__(self, box: LiveBox, link: AgentLink, language: str, limits: SessionLimits):
        self.id = ""
        self.owner: Owner | None = None  # set when it is taken for a session (not a notebook)
        self.box = box
        self.link = link
        self.language = language
        self.limits = limits
        self.kernel: dict[str, str] = {}
        now = time.monotonic()
        self.created = now
        self.created_at = time.time()
        self.last_active = now
        self.execution_count = 0
        self.ended: str | None = None
        self.lock = asyncio.Lock()
        self.restarted = False  # the kernel was replaced since the last execution
        self.cpu_base = 0
        self.op_out = False  # the execution holding the lock has sent its op to the agent
        self.interrupt_due = False  # an interrupt came before that op was out: it follows it
        self.resumed = False  # started again from its pause since the last execution
        self.resumes = 0
        self.restore_error: str | None = None  # its state, read from a snapshot, was not
        self._closing: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls, live: LiveBoxes, spec: RunSpec, language: str, limits: SessionLimits,
        lowers: tuple[Frozen, ...] = (), background: bool = False,
    ) -> Session:  # fmt: skip
        """A session in a new box (its work dir over `lowers`, with layers), once its agent is
        ready; `background`: at the lowest CPU priority, until its box's `foreground`."""
        opening = live.submit(spec, lowers, background)
        try:
            box, pipes = await asyncio.wrap_future(opening)
        except asyncio.CancelledError:
            opening.add_done_callback(_discard)  # it may be built yet: nobody will use it
            raise
        link = AgentLink(pipes)
        session = cls(box, link, language, limits)
        try:
            link.open()
            ready = await link.recv(START_TIMEOUT)
            if ready["type"] != "ready":
                raise AgentGone(f"the agent said {ready['type']} before it was ready")
        except BaseException:
            await session.close("start failed")
            raise
        session.kernel = {"name": ready["kernel"], "language_version": ready["language_version"]}
        return session

    # -- state ---------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.lock.locked()

    @property
    def expires(self) -> float:
        return self.created + self.limits.lifetime

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def begin(self, limits: SessionLimits) -> None:
        """Taken from the pool: its own limits and clocks start now."""
        self.limits = limits
        self.created = self.last_active = time.monotonic()
        self.created_at = time.time()
        self.box.set_memory(limits.memory)
        self.cpu_base = self.box.reading().cpu_ns  # the kernel's own start is not the user's

    def why_end(self, now: float) -> str | None:
        """Why the session must end now (the reaper asks), or None."""
        if now >= self.expires:
            return f"it reached its lifetime of {self.limits.lifetime:g} s"
        if not self.busy and now - self.last_active >= self.limits.idle_timeout:
            return f"it was idle for {self.limits.idle_timeout:g} s"
        if self.cpu_used() > self.limits.cpu_time:
            return f"it used its {self.limits.cpu_time:g} s of CPU time"
        if not self.box.alive():
            return "its box ended"
        return None

    def cpu_used(self) -> float:
        """CPU seconds of everything in the box since the session began."""
        return (self.box.reading().cpu_ns - self.cpu_base) / 1e9

    # -- executions ----------------------------------------------------------------------------

    async def execute(self, code: str, timeout: float, output: int | None = None) -> Execution:
        """Start an execution (after the one under way); iterate it for its events. `output`:
        bytes of output it may have, at most the session's limit."""
        cap = min(output, self.limits.output) if output is not None else self.limits.output
        execution = Execution(self, code, timeout, cap)
        await self.lock.acquire()
        if self.ended:  # it ended while this waited
            self.lock.release()
            raise SessionEnded(f"session {self.id} has ended: {self.ended}")
        self.interrupt_due = False  # from here on, an interrupt is this execution's
        execution.task = asyncio.create_task(execution.pump())
        return execution

    async def run(self, code: str, timeout: float, output: int | None = None) -> events.Result:
        """One execution to its end, folded."""
        execution = await self.execute(code, timeout, output)
        result = events.Result()
        try:
            async for event in execution:
                result.add(event)
        finally:
            execution.abandon()
        return result

    def interrupt(self) -> bool:
        """Interrupt the execution under way; False if there is none."""
        if not self.busy or self.ended:
            return False
        if not self.op_out:  # sent now, it would reach the agent before the execution does
            self.interrupt_due = True
            return True
        with contextlib.suppress(AgentGone):
            self.link.send({"op": "interrupt"})
        return True

    async def restart(self) -> None:
        """A fresh kernel or shell in the same box (files stay; variables go)."""
        self.interrupt()
        async with self.lock:
            try:
                if self.ended:
                    raise AgentGone(self.ended)
                self.link.send({"op": "restart"})
                while (await self.link.recv(START_TIMEOUT))["type"] != "restarted":
                    pass  # the end of an execution the restart cut short, if there was one
            except AgentGone as exc:
                await self.close(self.ended or f"its agent failed ({exc})")
                raise SessionEnded(f"session {self.id} has ended: {self.ended}") from None
            self.restarted = True
            self.touch()

    async def keep(self, op: str, **fields: Any) -> dict[str, Any]:
        """A snapshot's op (`save`, `load`, `rebase`) done by the agent, while no execution
        runs (the caller holds the lock, or the session is not yet anyone's): the agent's
        answer, its `error` set if it failed. AgentGone if the agent fails or says otherwise.
        Its wall time and its box's CPU time go to the metrics (the box's, as its cgroup
        counts: not what the agent says)."""
        began, cpu = time.monotonic(), self._cpu_ns()
        self.link.send({"op": op, "path": frames.STATE, **fields})
        while True:
            event = await self.link.recv(KEEP_TIMEOUT)
            if event["type"] == "restarted":  # the kernel had died while idle: a new one
                self.restarted = True
                continue
            if event["type"] != KEEP_ANSWERS[op]:
                raise AgentGone(f"the agent said {event['type']} to {op}")
            if event["died"]:
                self.restarted = True
            self.touch()
            after = self._cpu_ns()
            if cpu is not None and after is not None:
                engine_events.state_kept(op, time.monotonic() - began, (after - cpu) / 1e9)
            return event

    def _cpu_ns(self) -> int | None:
        """The CPU time of everything in the box so far (None: its cgroup is gone)."""
        try:
            return self.box.reading().cpu_ns
        except OSError:
            return None

    async def close(self, reason: str) -> None:
        """End the session: kill its box, remove all it had. Safe to call more than once."""
        if self.ended is None:
            self.ended = reason
        if self._closing is None:
            self.link.close()
            self._closing = asyncio.create_task(asyncio.to_thread(self.box.close))
        await asyncio.shield(self._closing)

    def info(self) -> dict[str, Any]:
        now = time.monotonic()
        reading = self.box.reading() if not self.box.closed else None
        return {
            "id": self.id,
            "language": self.language,
            "status": "ended" if self.ended else ("busy" if self.busy else "idle"),
            "kernel": self.kernel,
            "created_at": self.created_at,
            "expires_in": max(0.0, self.expires - now),
            "idle_timeout": self.limits.idle_timeout,
            "idle_for": now - self.last_active,
            "execution_count": self.execution_count,
            "memory_limit_MB": self.limits.memory >> 20,
            "memory_bytes": reading.memory_usage if reading else None,
            "cpu_time": (reading.cpu_ns - self.cpu_base) / 1e9 if reading else None,
            "ended": self.ended,
            "resumes": self.resumes,
            "restore_error": self.restore_error,
        }


def _discard(opened: Future[tuple[LiveBox, Pipes]]) -> None:
    if opened.cancelled() or opened.exception() is not None:
        return
    box, pipes = opened.result()
    for fd in (pipes.stdin, pipes.stdout, pipes.stderr):
        os.close(fd)
    box.close()


class Execution:
    """One execution's events, from a pump task, in order, ending with exactly one `end`."""

    def __init__(self, session: Session, code: str, timeout: float, output: int) -> None:
        self.session = session
        self.code = code
        self.timeout = timeout
        self.output = output
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE)
        self.abandoned = False
        self.task: asyncio.Task[None] | None = None

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            event = await self.queue.get()
            yield event
            if event["type"] == "end":
                return

    def abandon(self) -> None:
        """Nobody reads on: interrupt it (if it has not ended) and let the pump drop the rest."""
        if not self.abandoned:
            self.abandoned = True
            if self.task is not None and not self.task.done():
                self.session.interrupt()
            while not self.queue.empty():
                self.queue.get_nowait()

    async def _put(self, event: dict[str, Any]) -> None:
        if self.abandoned:
            return
        try:
            await asyncio.wait_for(self.queue.put(event), READER_PATIENCE)
        except TimeoutError:
            self.abandon()  # its reader is gone without saying so

    async def pump(self) -> None:
        s = self.session
        started = time.monotonic()
        end: dict[str, Any] = {}
        outputs, sent, over = 0, False, False
        try:
            before = s.box.reading()
            s.link.send({"op": "execute", "code": self.code, "timeout": self.timeout,
                         "max_output": self.output})  # fmt: skip
            s.op_out = True
            if s.interrupt_due:
                s.interrupt()
            deadline = started + self.timeout + AGENT_ALLOWANCE
            while True:
                event = await s.link.recv(max(0.0, deadline - time.monotonic()))
                kind = event["type"]
                if kind == "end":
                    end, error = self._finish(event, before, over)
                    if error is not None:
                        await self._put(error)
                    break
                if kind == "restarted":  # it died while idle: this execution has a new kernel
                    s.restarted = True
                    continue
                if kind not in events.OUTPUT_TYPES:
                    raise AgentGone(f"the agent said {kind} during an execution")
                outputs += events.size(event)
                if outputs > self.output:  # the agent should have stopped it: make it
                    over = True
                    if not sent:
                        sent = s.interrupt()
                    continue
                await self._put(event)
        except AgentGone as exc:
            timed_out = isinstance(exc, AgentSilent)
            # What the agent wrote on stderr (its own traceback, naming sandlot's files) is the
            # operator's, not the client's: logged, never in the reason the client reads.
            if tail := s.link.stderr_tail[-300:]:
                log.warning("session %s: its agent failed (%s): %s", s.id, exc, tail)
            reason = s.ended or f"its agent failed ({exc})"
            await s.close(reason)
            end = {"status": "error", "execution_count": None, "exit_code": None,
                   "limit": "time" if timed_out else None, "kernel_restarted": True,
                   "truncated": over, "session_ended": s.ended}  # fmt: skip
        finally:
            end.setdefault("status", "error")
            end["execution_time"] = round(time.monotonic() - started, 6)
            end["resumed"], s.resumed = s.resumed, False
            s.touch()
            s.op_out = False
            s.lock.release()
            if end.get("execution_count") is not None:
                s.execution_count = end["execution_count"]
        await self._put({"type": "end", **end})

    def _finish(
        self, event: dict[str, Any], before: Any, over: bool
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The server's end of an execution: the agent's, with the limits as the box's cgroup
        saw them; and the error to report first if the kernel died (its state is gone)."""
        s = self.session
        oom = s.box.reading().oom_kills > before.oom_kills
        truncated = over or event["truncated"]
        limit = ("memory" if oom else "time" if event["timed_out"]
                 else "output" if truncated else None)  # fmt: skip
        restarted = event["restarted"] or s.restarted
        s.restarted = False
        error = None
        if event["died"] and s.language == "python":
            mib = s.limits.memory >> 20
            ename, evalue = (
                ("MemoryError", f"the kernel went over the memory limit of {mib} MiB")
                if oom
                else ("DeadKernelError", "the kernel died")
            )
            evalue += "; a new kernel was started: variables are lost"
            error = {"type": "error", "ename": ename, "evalue": evalue, "traceback": []}
        end = {"status": event["status"], "execution_count": event["execution_count"],
               "exit_code": event["exit_code"], "limit": limit, "kernel_restarted": restarted,
               "truncated": truncated, "session_ended": None}  # fmt: skip
        return end, error
