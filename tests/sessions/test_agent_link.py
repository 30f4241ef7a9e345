"""The server's end of an agent's pipes (sessions/link.py) on real pipes, under both event loops
the server may run on: asyncio's own and uvloop (uvicorn picks uvloop when it is installed)."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
import uvloop

from sandlot.jail.live import Pipes
from sandlot.sessions import box
from sandlot.sessions.box import frames
from sandlot.sessions.link import READ_BUFFER, AgentGone, AgentLink

CYCLES = 300
AGENT = str(Path(box.__file__).with_name("agent.py"))
LOOPS = {"asyncio": asyncio.run, "uvloop": uvloop.run}


class Agent:
    """The box's side: the other ends of the three pipes."""

    def __init__(self) -> None:
        self.stdin_r, stdin_w = os.pipe()
        stdout_r, self.stdout_w = os.pipe()
        stderr_r, self.stderr_w = os.pipe()
        self.pipes = Pipes(stdin=stdin_w, stdout=stdout_r, stderr=stderr_r)

    def say(self, event: dict[str, Any]) -> None:
        os.write(self.stdout_w, frames.encode(event))

    def close(self) -> None:
        for fd in (self.stdin_r, self.stdout_w, self.stderr_w):
            if fd >= 0:
                os.close(fd)
        self.stdin_r = self.stdout_w = self.stderr_w = -1


@pytest.fixture(params=sorted(LOOPS))
def run(request) -> Callable[[Coroutine[Any, Any, Any]], Any]:
    return LOOPS[request.param]


@pytest.fixture
def agent():
    a = Agent()
    yield a
    a.close()


CHURN = r"""
#include <unistd.h>
/* Open, use and close pipes until *stop is set, as the live boxes' thread does while links
   close on the event loop; the uses that failed. Called through ctypes, without the GIL. */
long churn(volatile int *stop) {
    long failed = 0;
    char c = 'x';
    while (!*stop) {
        int p[2];
        if (pipe(p) != 0) continue;
        if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1) failed++;
        close(p[0]);
        close(p[1]);
    }
    return failed;
}
"""


@pytest.fixture(scope="module")
def churn(tmp_path_factory) -> ctypes.CDLL:
    src = tmp_path_factory.mktemp("churn") / "churn.c"
    src.write_text(CHURN)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", f"{src}.so", src], check=True)
    lib = ctypes.CDLL(f"{src}.so")
    lib.churn.restype = ctypes.c_long
    return lib


def test_a_closed_link_closes_each_descriptor_once(run, churn):
    """uvloop's pipe transports close their descriptor twice (uvloop#763): the second close
    takes whatever another thread was given that number meanwhile, in the server the next live
    box's pipes (a session that failed to start with EBADF). Here a thread opens and uses pipes
    all the while links open and close; under the transports, about a third of 300 links broke
    one of its pipes."""
    stop, failed = ctypes.c_int(0), []
    thread = threading.Thread(target=lambda: failed.append(churn.churn(ctypes.byref(stop))))

    async def main() -> None:
        for _ in range(CYCLES):
            agent = Agent()
            try:
                link = AgentLink(agent.pipes)
                link.open()
                agent.say({"type": "ready", "kernel": "python3", "language_version": "3.11"})
                assert (await link.recv(5))["type"] == "ready"
                link.close()
                await asyncio.sleep(0)
            finally:
                agent.close()

    thread.start()
    try:
        run(main())
    finally:
        stop.value = 1
        thread.join()
    assert failed == [0]


def test_ops_out_events_in_and_an_op_larger_than_a_pipe_holds(run, agent):
    """An op larger than the pipe's buffer goes out while the agent reads it, without blocking
    the event loop."""
    code = "x" * (1 << 20)
    got = bytearray()

    def read_op() -> None:
        while len(got) < len(frames.encode({"op": "execute", "code": code})):
            got.extend(os.read(agent.stdin_r, 1 << 16))
        agent.say({"type": "stdout", "text": "done"})

    async def main() -> dict[str, Any]:
        link = AgentLink(agent.pipes)
        link.open()
        reader = threading.Thread(target=read_op)
        reader.start()
        try:
            link.send({"op": "execute", "code": code})
            return await link.recv(30)
        finally:
            link.close()
            await asyncio.to_thread(reader.join)

    assert run(main())["text"] == "done"
    assert bytes(got) == frames.encode({"op": "execute", "code": code})


def test_an_agent_that_exits_ends_the_link_with_its_stderr(run, agent):
    async def main() -> tuple[str, str]:
        link = AgentLink(agent.pipes)
        link.open()
        os.write(agent.stderr_w, b"Traceback: it broke\n")
        agent.close()
        with pytest.raises(AgentGone) as gone:
            await link.recv(5)
        for _ in range(5):  # the stderr pipe's end may come a turn later
            await asyncio.sleep(0)
        try:
            return str(gone.value), link.stderr_tail
        finally:
            link.close()

    reason, tail = run(main())
    assert reason == "the agent exited"
    assert tail == "Traceback: it broke\n"


def test_an_agent_that_stopped_reading_its_ops_is_gone(run, agent):
    """Its stdin closed: the next op fails instead of waiting for ever."""

    async def main() -> str:
        link = AgentLink(agent.pipes)
        link.open()
        os.close(agent.stdin_r)
        agent.stdin_r = -1
        try:
            with pytest.raises(AgentGone) as gone:
                for _ in range(3):
                    link.send({"op": "interrupt"})
                    await asyncio.sleep(0)
            return str(gone.value)
        finally:
            link.close()

    assert "pipe" in run(main())


def test_a_flood_waits_in_the_pipe_not_in_the_server(run, agent):
    """Output nobody reads stops being read at a bounded buffer: the agent's writes block."""
    written = 0
    chunk = b"\0" * (1 << 16)

    def flood() -> None:
        nonlocal written
        os.set_blocking(agent.stdout_w, False)
        while written < 16 * READ_BUFFER:
            try:
                written += os.write(agent.stdout_w, chunk)
            except BlockingIOError:
                return

    async def main() -> int:
        link = AgentLink(agent.pipes)
        link.open()
        try:
            for _ in range(50):
                flood()
                await asyncio.sleep(0.002)
            return len(link._reader._buffer)
        finally:
            link.close()

    buffered = run(main())
    assert buffered <= 2 * READ_BUFFER + (1 << 16)
    assert written < 16 * READ_BUFFER


def read_events(stream: IO[bytes]) -> Iterator[dict[str, Any]]:
    while header := stream.read(frames.HEADER.size):
        (size,) = frames.HEADER.unpack(header)
        yield json.loads(stream.read(size))


@pytest.fixture
def bash_agent() -> Iterator[subprocess.Popen[bytes]]:
    """The agent outside a box, in bash mode (a shell needs nothing else); the private dir it
    makes in /tmp is removed after."""
    agent = subprocess.Popen(
        [sys.executable, AGENT, "bash"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    yield agent
    agent.kill()
    agent.wait()
    for pipe in (agent.stdin, agent.stdout, agent.stderr):
        pipe.close()
    shutil.rmtree(frames.PRIVATE, ignore_errors=True)


def execute(code: str) -> bytes:
    return frames.encode({"op": "execute", "code": code, "timeout": 300, "max_output": 1 << 20})


def test_the_agent_keeps_an_interrupt_read_with_its_execution(bash_agent):
    """Both ops in one read, before the execution has started: the interrupt is the
    execution's, not dropped as if the agent were idle."""
    events = read_events(bash_agent.stdout)
    assert next(events)["type"] == "ready"
    bash_agent.stdin.write(execute("sleep 120") + frames.encode({"op": "interrupt"}))
    bash_agent.stdin.flush()  # one write, read at once: under PIPE_BUF, it is atomic
    end = next(e for e in events if e["type"] == "end")
    assert end["exit_code"] == 130 and not end["timed_out"]  # not a sleep run to its end


def test_an_interrupt_racing_the_start_of_a_cell_never_costs_the_shell(bash_agent):
    """An interrupt sent as bash reads the cell's command line would drop part of the line and
    run the rest, or lose the line and its status together, so that only a restart (and the
    shell's state with it) could end the execution. Each of many such races ends in an
    interrupt, and the variable set before them is still there."""
    events = read_events(bash_agent.stdout)
    assert next(events)["type"] == "ready"
    bash_agent.stdin.write(execute("kept=yes"))
    bash_agent.stdin.flush()
    assert next(e for e in events if e["type"] == "end")["exit_code"] == 0
    for _ in range(20):
        bash_agent.stdin.write(execute("sleep 120") + frames.encode({"op": "interrupt"}))
        bash_agent.stdin.flush()
        end = next(e for e in events if e["type"] == "end")
        assert end["exit_code"] == 130 and "restarted" not in end
    bash_agent.stdin.write(execute("echo $kept"))
    bash_agent.stdin.flush()
    said = []
    for event in events:
        if event["type"] == "end":
            break
        said.append(event.get("text", ""))
    assert "".join(said) == "yes\n"
