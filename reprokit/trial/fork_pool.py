"""The runner's side of the fork worker (reprokit.trial.forkserver): start it once, run trials as forks of it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable

from reprokit.trial import reaper


class ForkSetupFailed(Exception):
    """A fork of the fork worker could not prepare torch for its trial (reprokit's problem, not the trial's):
    run the trial cold. The message says why."""


class ForkPool:
    """One pre-imported server process; each trial is a fresh fork of it, in its own session."""

    def __init__(self, env: dict, python: str = sys.executable, cpu: bool = False, imports: tuple[str, ...] = ()):
        """cpu: the worker also asks inductor's C++ backend once which vector ISAs work (no GPU to compile for);
        imports: the script's own imports, loaded in the worker where they may be (trial/preload.py)."""
        self.env = env
        self._dir = tempfile.mkdtemp(prefix="reprokit-warm-")
        reaper.watch_folder(self._dir)  # its socket: removed by close(), or by the reaper if reprokit is killed
        self.path = os.path.join(self._dir, "sock")
        # stdin is a pipe we never write: when this process dies, the server sees EOF and exits.
        # Inductor asks torch.cuda.is_available() at import; answered through the driver, that poisons every fork
        # for CUDA ("Cannot re-initialize CUDA in forked subprocess"). NVML answers it without that.
        server_env = {**env, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}
        self.proc = subprocess.Popen(
            [
                python,
                "-m",
                "reprokit.trial.forkserver",
                self.path,
                *(["--cpu"] if cpu else []),
                *(["--import", ",".join(imports)] if imports else []),
            ],
            env=server_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        reaper.watch(self.proc.pid)
        assert self.proc.stdout is not None and self.proc.stdin is not None  # pipes, as asked
        self.ready = self.proc.stdout.readline().strip() == b"ready"
        self._lock = threading.Lock()

    def alive(self) -> bool:
        return self.ready and self.proc.poll() is None

    def fork_trial(
        self, argv: list, env: dict, cwd: str, stdout: str, stderr: str, limit: Callable[[], float], on_timeout
    ) -> tuple[int | None, bool]:
        """(returncode, timed_out) of one forked trial. limit() is the seconds it may run, asked again while it
        runs; on_timeout(pid) dumps stacks and kills its group. Raises ForkSetupFailed when the fork could not
        prepare torch for the trial (nothing of the trial ran)."""
        setup_error = os.path.join(self._dir, f"setup-{uuid.uuid4().hex}.txt")
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(self.path)
        conn.sendall(
            json.dumps(
                {"argv": argv, "env": env, "cwd": cwd, "stdout": stdout, "stderr": stderr, "setup_error": setup_error}
            ).encode()
            + b"\n"
        )
        buf = bytearray()

        def read_line(deadline: Callable[[], float]) -> bytes | None:
            """One reply line, or None when the deadline passes first (a makefile() cannot resume after that)."""
            while b"\n" not in buf:
                left = deadline() - time.monotonic()
                if left <= 0:
                    return None
                conn.settimeout(min(left, 1.0))
                try:
                    chunk = conn.recv(4096)
                except TimeoutError:
                    continue  # the deadline may have moved meanwhile
                if not chunk:
                    return b""
                buf.extend(chunk)
            line, _, rest = bytes(buf).partition(b"\n")
            buf[:] = rest
            return line

        started = time.monotonic()
        pid = json.loads(read_line(lambda: started + 60) or b"{}").get("pid")
        if pid is None:
            conn.close()
            return None, False
        reaper.watch(pid)  # a forked trial is its own group, the worker's child: it too dies with reprokit
        timed_out = False
        try:
            line = read_line(lambda: started + limit())
            if line is None:
                timed_out = True
                on_timeout(pid)
                killed = time.monotonic()
                line = read_line(lambda: killed + 30) or b""  # the server reaps it and reports
        except BaseException:
            _killpg(pid)
            raise
        finally:
            _killpg(pid)  # workers the trial left behind go with it
            reaper.unwatch(pid)
            conn.close()
        self._raise_setup_failure(setup_error)
        return (json.loads(line)["returncode"] if line else None), timed_out

    def _raise_setup_failure(self, path: str) -> None:
        """ForkSetupFailed when the fork wrote why it could not start the trial; the worker is then not used
        again (every fork of it would fail the same way)."""
        if not os.path.exists(path):
            return
        with open(path) as f:
            reason = f.read().strip()
        os.unlink(path)
        self.ready = False
        raise ForkSetupFailed(reason)

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:  # a pipe, as asked
                self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except Exception:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        reaper.unwatch(self.proc.pid)
        shutil.rmtree(self._dir, ignore_errors=True)
        reaper.unwatch_folder(self._dir)


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
