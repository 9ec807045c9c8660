"""Starting git does not stop pm-agent's other threads (the event loop's) while the child is not yet running."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

STALL = textwrap.dedent(
    """
    import os, sys, threading, time
    from pm_agent.vcs import _spawn
    fifo = sys.argv[1]

    def writer():
        time.sleep(0.3)  # the spawn is under way by then; waking up needs the GIL
        fd = os.open(fifo, os.O_WRONLY)
        os.write(fd, b"x")
        os.close(fd)

    threading.Thread(target=writer, daemon=True).start()
    # The child opens the FIFO before it execs, so the parent waits in vfork until the writer comes.
    actions = [(os.POSIX_SPAWN_OPEN, 0, fifo, os.O_RDONLY, 0), (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
    pid = _spawn.spawner()("cat", ["cat"], dict(os.environ), actions)
    os.waitpid(pid, 0)
    print("spawned")
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the GIL-free spawn is Linux's")
def test_other_threads_run_while_a_spawn_waits(tmp_path: Path) -> None:
    # os.posix_spawnp keeps the GIL while the child has not exec'd: here that is a deadlock (the writer the
    # child waits for cannot wake up), on a loaded machine a stall of every thread. The spawner must not.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    try:
        done = subprocess.run(
            [sys.executable, "-c", STALL, str(fifo)], capture_output=True, text=True, timeout=20, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the spawn kept the GIL: the thread the child waited for never ran")
    assert done.stdout.strip() == "spawned", done.stderr
