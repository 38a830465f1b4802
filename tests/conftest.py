"""Shared fixtures of the end-to-end tests."""

import collections
import fcntl
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import pytest

# A verified repro.py is run again up to 10 times, stopping at 3 failures (minify/reliability.py): one or two more
# fresh interpreters per verified repro, some 30 repros in the suite, minutes CI (45-minute limit) has not got. The
# suite runs each repro once, its verification's runs counted; tests/test_reliability.py sets the count it measures.
os.environ.setdefault("REPROKIT_REPRO_RUNS", "1")


_TIMING = pytest.StashKey[list]()  # the node ids of the `timing` tests this session runs (not skipped)
TIMING_GATE = 240  # seconds a test waits at most for the `timing` tests to have run, before it starts anyway


def _timing_tests(session) -> list[str]:
    """The `timing` tests this session runs: after `-m`/`-k` deselection (a stash filled while collecting, before
    it, made the newest torch's smoke set wait out its gate at every test), none skipped by a mark."""
    if _TIMING not in session.config.stash:
        session.config.stash[_TIMING] = [
            item.nodeid for item in session.items if item.get_closest_marker("timing") and not _skipped(item)
        ]
    return session.config.stash[_TIMING]


def _skipped(item) -> bool:
    """Whether a mark skips the test (a skip, or a skipif whose condition holds)."""
    return bool(item.get_closest_marker("skip")) or any(
        m.args and m.args[0] is True for m in item.iter_markers("skipif")
    )


def _done_mark(base: str, nodeid: str) -> str:
    return f"{base}.done-{hashlib.sha256(nodeid.encode()).hexdigest()[:16]}"


@pytest.fixture(autouse=True)
def _cores_shared_unless_timing(request):
    """Under pytest-xdist, a test marked `timing` runs alone: it holds the workers' lock exclusively, every other
    test holds it shared. A wall-time assertion (a speed-up, a hang cut at 8 s, no silence over 2 s) made while
    another worker's bisect takes the cores would measure the neighbour."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run_id:  # one process: nothing runs beside the test
        yield
        return
    exclusive = request.node.get_closest_marker("timing") is not None
    base = os.path.join(tempfile.gettempdir(), f"reprokit-tests-{run_id}")
    if not exclusive:
        # The `timing` tests are each worker's first (pytest_collection_modifyitems): the others wait for them
        # here, so that a worker that wins the start cannot take the lock shared for a 9-minute bisect while a
        # `timing` test waits on it. Bounded: a `timing` test that errors before its lock never marks itself done.
        timing = _timing_tests(request.session)
        gate = time.monotonic() + TIMING_GATE
        while time.monotonic() < gate and not all(os.path.exists(_done_mark(base, t)) for t in timing):
            time.sleep(0.5)
    with open(base + ".turnstile", "a") as turnstile, open(base + ".lock", "a") as lock:
        # Every test passes the turnstile first, and a `timing` test holds it while it waits: no test starts
        # beside a waiting one. flock alone lets shared holders starve it (CI at 1dbe7f9, three workers: 270 s).
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            if exclusive:
                pathlib.Path(_done_mark(base, request.node.nodeid)).touch()


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the cores. Two workers left 2 cores idle 14% of CI's run (cb43c87,
    /proc/stat): tests that wait on a hang's limit, a SLURM job or a fresh interpreter's imports."""
    return (os.cpu_count() or 1) + 1


def tree_digest(folder: pathlib.Path) -> dict:
    """path -> sha256 of every file under folder, reprokit's artifacts and Python's caches left out."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "artifacts" not in p.parts and "__pycache__" not in p.parts
    }


@pytest.fixture
def workdir(request, tmp_path):
    """A copy of the test module's CASES folder (the user's project); the test checks reprokit never changes it."""
    work = tmp_path / "project"
    shutil.copytree(request.module.CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    before = tree_digest(work)
    yield work
    assert tree_digest(work) == before, "reprokit modified the user's files"


# Seconds each test took in a full run of the suite (tests/durations.json: setup and call, 5 s and over), for the
# order below. Refresh it from a run's `--durations=0` list; a test it lacks is placed by its markers.
DURATIONS = json.loads((pathlib.Path(__file__).parent / "durations.json").read_text())
UNTIMED = {"real_bug": 200, "slow": 100}  # seconds guessed for a test durations.json lacks, by marker; else 3


def _module_fixture(item) -> str | None:
    """The module-scoped fixture of the test's own module that it uses (a bisect or a pack made once per worker for
    the tests that share it), as MODULE::NAME; None if it uses none."""
    module = item.nodeid.split("::")[0]
    names = sorted(
        name
        for name, defs in item._fixtureinfo.name2fixturedefs.items()
        if defs[-1].scope == "module" and defs[-1].baseid == module
    )
    return f"{module}::{names[0]}" if names else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the xdist_group marks set here
def pytest_collection_modifyitems(config, items):
    """The `timing` tests, then the longest units of work first, so that under pytest-xdist the run does not end with
    one worker finishing a 7-minute bisect while the other cores sit idle (longest-first is the classic rule for
    that). A unit is one test, or the tests of a module that share a module-scoped fixture: they form one
    xdist_group, run by one worker, so the fixture's bisect is made once, not once per worker (CI at 18ec367 made
    test_pack's three times, 135-167 s each). `--dist loadgroup --no-loadscope-reorder` (pyproject.toml) deals the
    units to the workers one at a time in this order; `worksteal` handed each worker a third of the list."""

    def seconds(item) -> float:
        if item.nodeid in DURATIONS:
            return DURATIONS[item.nodeid]
        return next((s for m, s in UNTIMED.items() if item.get_closest_marker(m)), 3)

    # The `timing` tests are units of their own, first: each holds the workers' lock alone, and asked for mid-run it
    # waits (its worker idle) until no other test holds the lock shared; CI at 0954adb lost 316 s and 128 s so in two
    # setups. The other tests wait for them (_cores_shared_unless_timing).
    timing = {item.nodeid for item in items if item.get_closest_marker("timing") and not _skipped(item)}
    shared = {item.nodeid: _module_fixture(item) for item in items}
    users = collections.Counter(shared.values())
    unit = {node: f if f and users[f] > 1 and node not in timing else node for node, f in shared.items()}
    total: collections.Counter[str] = collections.Counter()
    for item in items:
        total[unit[item.nodeid]] += 0 if _skipped(item) else seconds(item)
        if unit[item.nodeid] != item.nodeid:
            item.add_marker(pytest.mark.xdist_group(unit[item.nodeid]))
    first = {u: i for i, u in reversed(list(enumerate(unit[item.nodeid] for item in items)))}
    items.sort(key=lambda item: (item.nodeid not in timing, -total[unit[item.nodeid]], first[unit[item.nodeid]]))


SCRIPTS = pathlib.Path(__file__).resolve().parent.parent / "scripts"
# The file scripts/slurm-up names the daemons it started in (SLURM_UP_STARTED), one per pytest session: its main
# process sets it before xdist starts the workers, which inherit it; that process alone stops them at the end.
STARTED = "REPROKIT_SLURM_STARTED"
_SLURM_DOWN = pytest.StashKey[str]()  # what scripts/slurm-down said, for the summary


def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        os.environ[STARTED] = os.path.join(tempfile.gettempdir(), f"reprokit-slurm-started-{os.getpid()}")


def pytest_sessionfinish(session):
    """The SLURM daemons this session started (none that ran before it) stopped: the machine as it was found."""
    started = os.environ.get(STARTED)
    if hasattr(session.config, "workerinput") or not started or not os.path.exists(started):
        return
    p = subprocess.run([str(SCRIPTS / "slurm-down"), started], capture_output=True, text=True, timeout=120)
    session.config.stash[_SLURM_DOWN] = (p.stdout or p.stderr).strip()


def pytest_terminal_summary(terminalreporter, config):
    said = config.stash.get(_SLURM_DOWN, None)
    if said:
        terminalreporter.write_line(said)


def _which(name: str) -> str | None:
    """A command on PATH or in the sbin folders (SLURM's daemons live there; a user's PATH may lack them)."""
    return shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))


def _slurm_missing() -> str | None:
    """Why no SLURM cluster can be had here, or None once scripts/slurm-up has it running (never apt unless
    REPROKIT_INSTALL_SLURM=1)."""
    install = os.environ.get("REPROKIT_INSTALL_SLURM") == "1"
    how = "run scripts/slurm-up as root (it installs slurm-wlm and munge with apt and starts them)"
    if not (_which("slurmctld") and _which("munged") and _which("sbatch")) and not install:
        return f"SLURM is not installed: {how}, or set REPROKIT_INSTALL_SLURM=1 to let the tests do it"
    if os.geteuid() != 0:
        up = subprocess.run(["scontrol", "ping"], capture_output=True, text=True).stdout if _which("scontrol") else ""
        return None if " is UP" in up else f"SLURM's daemons are not running and only root can start them: {how}"
    if install and not shutil.which("apt-get") and not _which("slurmctld"):
        return "no SLURM here and no apt-get to install slurm-wlm"
    env = {**os.environ, "SLURM_UP_NO_INSTALL": "0" if install else "1", "SLURM_UP_STARTED": os.environ[STARTED]}
    # xdist's workers share one cluster: one of them at a time brings it up.
    with open(os.path.join(tempfile.gettempdir(), "reprokit-slurm-up.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = subprocess.run([str(SCRIPTS / "slurm-up")], capture_output=True, text=True, timeout=900, env=env)
    return f"scripts/slurm-up failed: {(p.stderr or p.stdout).strip()[-400:]}" if p.returncode else None


@pytest.fixture(scope="session")
def slurm_cluster():
    """A SLURM cluster on this machine (scripts/slurm-up: configures and starts what is not running; the daemons
    it started stop at the session's end). Skips, saying how to get one, where SLURM is not installed (apt only
    with REPROKIT_INSTALL_SLURM=1) or cannot be started; with REPROKIT_REQUIRE_SLURM=1 (CI) that fails instead."""
    reason = _slurm_missing()
    if reason:
        if os.environ.get("REPROKIT_REQUIRE_SLURM") == "1":
            pytest.fail(f"REPROKIT_REQUIRE_SLURM=1 but {reason}")
        pytest.skip(reason)
    return subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
