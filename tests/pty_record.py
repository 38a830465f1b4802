"""Run a command under a pseudo-terminal and record when each chunk of its output arrived.

A pseudo-terminal, not a pipe: reprokit shows its live display only when stderr is a terminal, and the test of
issue #28 ("never silent for more than 2 s") is about what a user at a terminal sees.

Also a script, to measure a checkout by hand: python tests/pty_record.py REPO_ROOT -- reprokit ARGS...
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time


def record(argv: list, env: dict, cwd: str, timeout: float = 900.0, columns: int = 120) -> tuple:
    """(returncode, [(seconds since start, bytes)], seconds until exit). A terminal of `columns` columns: an
    unsized one reports 0 x 0, which no user's terminal does."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True)
    os.close(slave)
    chunks = []
    try:
        while time.monotonic() - started < timeout:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the slave side has closed it
                break
            if not data:
                break
            chunks.append((time.monotonic() - started, data))
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
    return code, chunks, time.monotonic() - started


def longest_silence(chunks: list, ended: float) -> float:
    """The longest stretch without output: from the start to the first chunk, between chunks, to the exit."""
    times = [0.0] + [t for t, _ in chunks] + [ended]
    return max(b - a for a, b in zip(times, times[1:]))


def main(args: list) -> None:
    root, sep, command = args[0], args[1], args[2:]
    assert sep == "--" and command[0] == "reprokit", "usage: pty_record.py REPO_ROOT -- reprokit ARGS..."
    env = {**os.environ, "PYTHONPATH": root, "TERM": "xterm-256color"}
    code, chunks, ended = record([sys.executable, "-m", "reprokit.cli", *command[1:]], env, os.getcwd())
    text = b"".join(c for _, c in chunks).decode("utf-8", "replace")
    gaps = sorted(((b - a, a) for (a, _), (b, _) in zip([(0.0, b"")] + chunks, chunks)), reverse=True)[:5]
    print(text[-3000:])
    print(
        f"exit {code}; {len(chunks)} chunks in {ended:.1f} s; longest silence {longest_silence(chunks, ended):.1f} s; "
        f"longest gaps (seconds, at): {[(round(g, 1), round(t, 1)) for g, t in gaps]}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
