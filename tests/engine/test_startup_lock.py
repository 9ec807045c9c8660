"""One run at a time (an OS file lock that dies with its holder) and a clean stop on SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pm_agent.engine.runlock import lock_holder, run_lock
from pm_agent.engine.stopping import Stopped, child_process_groups, run_until_signal
from pm_agent.errors import InputError

HOLD = textwrap.dedent(
    """\
    import sys, time
    from pathlib import Path
    from pm_agent.engine.runlock import run_lock
    with run_lock(Path(sys.argv[1]), "run"):
        print("locked", flush=True)
        time.sleep(120)
    """
)


def test_a_second_holder_is_refused_with_the_live_pid_until_the_first_dies(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        assert lock_holder(tmp_path) is not None
        assert lock_holder(tmp_path)["pid"] == holder.pid  # type: ignore[index]
        with pytest.raises(InputError) as info, run_lock(tmp_path, "resume"):
            pass
        message = str(info.value)
        assert f"another pm-agent run is working on this repository (pid {holder.pid} since " in message
        assert f"`pm-agent status -C {tmp_path}`" in message
        holder.send_signal(signal.SIGKILL)  # no clean-up at all: the kernel drops the lock
        holder.wait(timeout=10)
    finally:
        holder.kill()
        holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
    assert lock_holder(tmp_path) is None
    with run_lock(tmp_path, "run"):
        assert lock_holder(tmp_path) is not None  # same process, other open file: seen as held
    assert lock_holder(tmp_path) is None


def test_child_process_groups_are_the_ones_our_children_lead() -> None:
    own = subprocess.Popen(["sleep", "30"], start_new_session=True)
    shared = subprocess.Popen(["sleep", "30"])
    try:
        groups = child_process_groups()
        assert own.pid in groups
        assert shared.pid not in groups
        assert os.getpgrp() not in groups
    finally:
        for proc in (own, shared):
            proc.kill()
            proc.wait(timeout=10)


def test_a_signal_cancels_the_work_and_ends_commands_in_flight() -> None:
    seen: list[signal.Signals] = []
    gate = subprocess.Popen(["sleep", "60"], start_new_session=True)  # like a gate command, in its own group

    async def work() -> str:
        await asyncio.to_thread(gate.wait)  # a thread blocked on the command, as gates run
        return "finished"

    async def main() -> str | Stopped:
        asyncio.get_running_loop().call_later(0.3, os.kill, os.getpid(), signal.SIGTERM)
        return await run_until_signal(work(), seen.append)

    started = time.monotonic()
    try:
        result = asyncio.run(main())
    finally:
        gate.kill()
        gate.wait(timeout=10)
    assert result == Stopped(signal.SIGTERM)
    assert seen == [signal.SIGTERM]
    assert gate.returncode == -signal.SIGTERM, "the command's group was ended, not left to run 60 s"
    assert time.monotonic() - started < 20
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, "handlers are removed afterwards"


def test_work_that_ends_by_itself_returns_its_result() -> None:
    async def work() -> int:
        await asyncio.sleep(0.01)
        return 7

    assert asyncio.run(run_until_signal(work())) == 7
