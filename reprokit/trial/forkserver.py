"""The fork worker (REPROKIT_WARM): imports torch, Dynamo and inductor once, then forks one fresh child per trial.

Invoked as `python -m reprokit.trial.forkserver SOCKET [--cpu] [--import MODULES]` (--cpu: also probe inductor's CPU
codegen once; --import: the script's own imports, comma-separated, loaded too where they may be: trial/preload.py).
Single-threaded on purpose: fork() in a process with other threads can copy a lock one of them holds, and a child
would hang on it. The server never touches CUDA, so each
forked child initialises its own CUDA context (or none). A child lives exactly one trial, in its own session, so
a crash or hang takes that trial down and nothing else.

Protocol, one JSON line each way per connection: the runner sends {"argv", "env", "cwd", "stdout", "stderr",
"setup_error"}; the server answers {"pid"} at once and {"returncode"} when the child is reaped (-N for death by
signal N). A fork that cannot make the worker's torch fit its trial (a compat call failed) writes why to the
"setup_error" path and exits SETUP_FAILED before the trial starts: the runner then runs the trial cold.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys

from reprokit.trial.reaper import die_with_parent

# Exit status of a fork that could not prepare the worker's torch for its trial (it wrote why to "setup_error").
SETUP_FAILED = 75


def preload(cpu: bool = False) -> None:
    """What every trial imports anyway (~3.5 s on a 2-core machine), and with cpu the vector ISAs inductor's
    C++ backend may use: asked once here, so forks inherit the answer instead of paying ~2 s each."""
    import torch.fx  # noqa: F401

    import reprokit.child.graph  # noqa: F401
    import reprokit.child.main  # noqa: F401
    import reprokit.child.router  # noqa: F401
    import reprokit.fx.materialize  # noqa: F401
    from reprokit import compat

    # The probe's test builds run in g++ while Dynamo and the rest of inductor import (~0.7 s saved cold).
    probed = start_cpu_codegen_probe() if cpu else (lambda: None)
    compat.import_compiler(cpu)
    # sympy imports these lazily on inductor's first index simplification (Add.flatten, simplify): 0.67 s of every
    # graph trial's 2.4 s on 2 cores, paid once here instead.
    import sympy.physics.units  # noqa: F401
    import sympy.tensor.tensor  # noqa: F401

    probed()


def start_cpu_codegen_probe():
    """Start asking inductor which CPU vector ISAs build and load here (a fact of the machine, not of a graph: ~2 s
    of test builds per cold process, ~3 s with an empty cache); returns the call that waits for the answer."""
    import concurrent.futures

    from reprokit import compat

    try:
        candidates = compat.cpu_vec_isa_candidates()
    except Exception:  # a trial that needs it asks again, and fails or not on its own
        return lambda: None
    # Each x86 candidate is a test build (g++, outside the GIL) and a load; side by side they take the time of the
    # slowest. valid_vec_isas() then finds each answer cached on its ISA object.
    pool = concurrent.futures.ThreadPoolExecutor(max(1, len(candidates)))
    pool.map(bool, candidates)  # all submitted now; one that raises is asked again by valid_vec_isas()

    def wait() -> None:
        pool.shutdown(wait=True)  # no thread may outlive this: the worker forks next
        try:
            compat.valid_vec_isas()
        except Exception:  # as above
            pass

    return wait


def run_child(request: dict) -> None:
    """In the forked child: become the trial process, then never return."""
    code = 1
    try:
        os.setsid()  # its own process group: the runner kills the whole trial with one killpg
        die_with_parent()  # the worker is single-threaded, so this holds while the worker lives
        out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # raw output: private
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile

        tempfile.tempdir = None  # the trial's own TMPDIR (trial/scratch.py), not the one the worker's imports cached
        os.chdir(request["cwd"])
        try:
            from reprokit import compat
            from reprokit.child import main as _child

            compat.reread_env_switches()
        except Exception as e:  # reprokit's failure to reuse this torch, not the trial's: the runner goes cold
            _report_setup_failure(request.get("setup_error"), e)
            code = SETUP_FAILED
            return
        sys.argv = ["reprokit.child.main", *request["argv"]]
        code = _child.main(sys.argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _report_setup_failure(path, error: BaseException) -> None:
    """Say why this fork could not become a trial, where the runner looks (ForkPool.run)."""
    import traceback

    traceback.print_exc()
    if path:
        with open(path, "w") as f:
            f.write(f"{type(error).__name__}: {error}")


def forks_can_use_cuda() -> bool:
    """Whether a fork of this process may still initialise CUDA (torch marks forks of a process that asked the
    CUDA driver anything as unusable): one throwaway fork answers."""
    from reprokit import compat

    pid = os.fork()
    if pid == 0:
        os._exit(1 if compat.fork_poisoned_for_cuda() else 0)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def serve(path: str, cpu: bool = False, imports: tuple[str, ...] = ()) -> None:
    preload(cpu)
    if imports:
        from reprokit.trial import preload as script_preload

        script_preload.load(imports)
    # With no GPU to run on (cpu), a fork that torch marks unfit for CUDA loses nothing. A CUDA build of torch
    # marks every fork so when there is no GPU (torch 2.15's wheel on a CPU machine): checked there too, every
    # trial started cold, importing torch each time (12-17 s a graph trial instead of under 1 s).
    if not cpu and not forks_can_use_cuda():
        print("unusable: forks of this worker could not use CUDA", flush=True)
        return  # the runner starts every trial cold instead
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    print("ready", flush=True)
    waiting: dict[int, socket.socket] = {}  # child pid -> the runner's connection awaiting its exit status
    while True:
        readable, _, _ = select.select([server, sys.stdin], [], [], 0.02 if waiting else 1.0)
        if sys.stdin in readable and not sys.stdin.readline():
            break  # the runner went away: so do we (children already running finish on their own)
        if server in readable:
            conn, _ = server.accept()
            data = b""
            while not data.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            try:
                request = json.loads(data)
            except ValueError:
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                server.close()
                conn.close()
                run_child(request)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            waiting[pid] = conn
        for pid in list(waiting):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                continue
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            conn = waiting.pop(pid)
            try:
                conn.sendall(json.dumps({"returncode": code}).encode() + b"\n")
            except OSError:
                pass
            conn.close()


if __name__ == "__main__":
    args = sys.argv[2:]
    imports = args[args.index("--import") + 1].split(",") if "--import" in args else []
    serve(sys.argv[1], cpu="--cpu" in args, imports=tuple(n for n in imports if n))
    # Nothing is left to write, and an interpreter that imported torch, Dynamo and inductor takes 1.5 s to shut down
    # (2 cores): the runner waits that long at the end of every run.
    sys.stdout.flush()
    os._exit(0)
