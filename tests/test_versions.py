"""reprokit versions: which releases it picks, what a table concludes, its one-line errors (unknown release, no
network, no disk space) against a package index made here; doctor's "could not attach"; and one slow test that
downloads torch 2.15 (once, into the environment cache the CI smoke set shares) for a genuine bug fixed there."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
from importlib import metadata

import pytest
from click.testing import CliRunner

from reprokit.cli import main
from reprokit.errors import ReprokitError
from reprokit.versions import envs, releases

OFFERED = ["2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"]


def row(release, status):
    return {"release": release, "status": status}


def test_the_default_set_is_the_users_release_the_newest_and_the_one_before():
    assert releases.default_set("2.13.0+cpu", OFFERED) == ["2.13.0", "2.14.1", "2.15.0"]
    assert releases.choose("2.13.0", OFFERED, None, True, None) == ["2.13.0", "2.15.0"]
    assert releases.choose("2.13.0", OFFERED, "2.12.1, 2.15.0", False, None) == ["2.12.1", "2.13.0", "2.15.0"]
    assert releases.choose("2.13.0", OFFERED, None, False, ("2.15.0", "2.12.0")) == [
        "2.12.0",
        "2.12.1",
        "2.13.0",
        "2.14.1",
        "2.15.0",
    ]


def test_an_unknown_or_malformed_release_is_named():
    with pytest.raises(
        ReprokitError,
        match=r"^unknown torch release 2\.16\.0: the index offers 2\.13\.0, 2\.14\.0, "
        r"2\.14\.1, 2\.15\.0 and older$",
    ):
        releases.choose("2.13.0", OFFERED, "2.16.0", False, None)
    with pytest.raises(ReprokitError, match=r"^not a torch release number: 'latest' \(write it as 2\.14\.1\)$"):
        releases.choose("2.13.0", OFFERED, "latest", False, None)


def test_fixed_in_a_newer_release_comes_first():
    c = releases.conclusions([row("2.13.0", "same"), row("2.14.1", "same"), row("2.15.0", "passes")], "2.13.0+cpu")
    assert c == {
        "fixed_in": "2.15.0",
        "regression_since": None,
        "summary": "fixed in torch 2.15.0: upgrade (fails on 2.13.0 and 2.14.1, passes on 2.15.0: fixed)",
    }


def test_a_regression_names_the_first_failing_release():
    rows = [row("2.11.0", "passes"), row("2.12.1", "passes"), row("2.13.0", "same"), row("2.15.0", "same")]
    c = releases.conclusions(rows, "2.13.0")
    assert (c["fixed_in"], c["regression_since"], c["regression_after"]) == (None, "2.13.0", "2.12.1")
    assert c["summary"] == (
        "still fails the same way on torch 2.15.0, the newest tried; regression since torch 2.13.0 (passes on 2.12.1)"
    )
    assert releases.boundaries(rows) == [("2.12.1", "2.13.0")]


def test_a_release_that_fails_differently_is_no_boundary():
    rows = [row("2.12.1", "different"), row("2.13.0", "same"), row("2.15.0", "cannot_run")]
    assert releases.boundaries(rows) == []
    assert releases.conclusions(rows, "2.13.0")["summary"] == (
        "fails the same way on torch 2.13.0; no other release was judged"
    )


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A package index offering torch 2.14.1 and 2.15.0 only, and pip told to read no other."""
    page = tmp_path / "simple" / "torch"
    page.mkdir(parents=True)
    page.joinpath("index.html").write_text(
        "".join(f'<a href="torch-{v}-py3-none-any.whl">torch-{v}-py3-none-any.whl</a>\n' for v in ("2.14.1", "2.15.0"))
    )
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    return (tmp_path / "simple").as_uri()


@pytest.fixture
def run_dir(tmp_path):
    """A run folder as bisect leaves it, for a failure with no repro.py."""
    run = tmp_path / "run"
    run.mkdir()
    run.joinpath("run.json").write_text(json.dumps({"command": "reprokit bisect s.py"}))
    run.joinpath("verdict.json").write_text(
        json.dumps(
            {
                "script": str(tmp_path / "s.py"),
                "argv": [],
                "failing_stage": "inductor",
                "signature": {"kind": "exception", "exc_type": "RuntimeError", "message": "boom"},
            }
        )
    )
    return str(run)


def reprokit(*args):
    result = CliRunner().invoke(main, list(args), prog_name="reprokit", terminal_width=80)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.newest_smoke
def test_bad_input_is_one_line_and_exit_2(tmp_path, run_dir, index):
    assert reprokit("versions") == (2, "", "reprokit: pass the run folder of a reprokit bisect, or --clean\n")
    assert reprokit("versions", run_dir, "--newest", "--torch", "2.15.0") == (
        2,
        "",
        "reprokit: --torch, --newest and --between choose the releases: pass one of them\n",
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    empty.joinpath("run.json").write_text("{}")
    assert reprokit("versions", str(empty)) == (
        2,
        "",
        f"reprokit: {empty} has no verdict.json: run reprokit bisect first\n",
    )
    assert reprokit("versions", run_dir, "--torch", "2.16.0", "--index-url", index) == (
        2,
        "",
        "reprokit: unknown torch release 2.16.0: the index offers 2.14.1, 2.15.0 and older\n",
    )


@pytest.mark.newest_smoke
def test_no_network_is_one_line(run_dir, index):
    code, out, err = reprokit("versions", run_dir, "--index-url", "http://127.0.0.1:9/simple/")
    assert (code, out, err) == (
        2,
        "",
        "reprokit: no network: could not list torch's releases on http://127.0.0.1:9/simple/\n",
    )


@pytest.mark.newest_smoke
def test_no_disk_space_is_one_line_before_any_trial(tmp_path, run_dir, index, monkeypatch):
    monkeypatch.setattr(envs, "NEEDED_BYTES", 1 << 62)
    cache = tmp_path / "envs"
    # --newest needs an environment only where the newest is not the installed torch: on 2.15 (what pip installs
    # today) it runs in this interpreter and exits 0, so there the release before it is asked for by name.
    chosen = ["--newest"] if releases.base(metadata.version("torch")) != "2.15.0" else ["--torch", "2.14.1"]
    wanted = "2.15.0" if chosen == ["--newest"] else "2.14.1"
    code, out, err = reprokit("versions", run_dir, *chosen, "--index-url", index, "--cache-dir", str(cache))
    assert (code, out) == (2, "")
    assert err.startswith(f"reprokit: no disk space: torch {wanted} need(s) about {1 << 32} GiB in {cache}, ")
    assert err.endswith(" GiB free\n") and err.count("\n") == 1
    assert not pathlib.Path(run_dir, "versions").exists()


def test_clean_removes_the_environments(tmp_path):
    cache = tmp_path / "envs"
    (cache / "torch-2.15.0" / "bin").mkdir(parents=True)
    (cache / "torch-2.15.0" / "bin" / "python").write_bytes(b"x" * 8192)
    (cache / "uv-cache").mkdir()
    code, out, err = reprokit("versions", "--clean", "--cache-dir", str(cache))
    assert (code, out, err) == (0, f"removed 2 entries (0.0 GiB) from {cache}\n", "")
    assert not cache.exists()
    assert reprokit("versions", "--clean", "--cache-dir", str(cache)) == (
        0,
        f"removed 0 entries (0.0 GiB) from {cache}\n",
        "",
    )


def observed(**extra):
    """observed.json of a compiled run that broke no graph, as the trial child writes it."""
    return {
        "callables": [
            {"label": "f", "site": ["/p/s.py", 3], "seconds": [0.1, 0.001, 0.001], "compiled": [True, False, False]}
        ],
        "breaks": [],
        "metrics": [],
        "counters": {},
        "recompile_limit": 8,
        **extra,
    }


def test_doctor_says_when_it_could_not_attach_to_torchs_records():
    from reprokit.cli_render import doctor_table
    from reprokit.doctor.analysis import analyze
    from reprokit.report.render import environment

    eager = {"callables": [{"label": "f", "site": ["/p/s.py", 3], "seconds": [0.01] * 3, "compiled": [False] * 3}]}
    blind = analyze("/p/s.py", (), eager, observed(unattached=["graph-break", "compile-metrics"]), {"kind": "pass"}, {})
    seen = analyze("/p/s.py", (), eager, observed(unattached=[]), {"kind": "pass"}, {})
    assert (blind.unobserved, seen.unobserved) == (["graph-break", "compile-metrics"], [])
    line = (
        "could not attach to torch's graph-break and compile-metrics records in this torch: graph breaks, "
        "recompilations and fall-backs were not observed (not the same as none)"
    )
    assert line in doctor_table(blind).splitlines() and "no graph breaks" not in doctor_table(blind)
    assert "no graph breaks, recompilations or fall-backs" in doctor_table(seen).splitlines()
    md = environment().get_template("DOCTOR.md.j2").render(r=blind, name="s.py", command="")
    assert "No graph breaks" not in md and "could not attach to torch's graph-break and compile-metrics" in md


def newest_or_skip(release="2.15.0"):
    """Skip with the reason when the package index cannot be reached or lacks the release."""
    try:
        offered = releases.index_releases()
    except ReprokitError as e:
        pytest.skip(f"offline: {e}")
    if release not in offered:
        pytest.skip(f"the package index offers no torch {release}")


@pytest.mark.slow
@pytest.mark.skipif(
    not metadata.version("torch").startswith("2.13."),
    reason="the genuine bug fails on torch 2.13; this torch is another",
)
def test_a_genuine_bug_fixed_in_2_15_is_reported_fixed(tmp_path):
    """Downloads torch 2.15 once into the shared environment cache (.ci/run makes it first for its smoke set)."""
    newest_or_skip()
    repo = pathlib.Path(__file__).parent.parent
    shutil.copy(repo / "tests" / "real_bugs" / "b_cumsum_zero_dim_lowering.py", tmp_path)
    env = {**os.environ, "PYTHONPATH": str(repo)}

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "reprokit", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=1500,
            env=env,
        )

    p = cli(
        "bisect",
        "b_cumsum_zero_dim_lowering.py",
        "--no-configs",
        "--no-subsystems",
        "--json",
        "-o",
        str(tmp_path / "artifacts"),
    )
    v = json.loads(p.stdout)
    assert v["repro_verified"], p.stderr[-2000:]
    p = cli("versions", v["run_dir"], "--torch", "2.15.0", "--json")
    assert p.returncode == 0, p.stderr[-2000:]
    result = json.loads(p.stdout)
    assert [(r["release"], r["status"]) for r in result["rows"]] == [("2.13.0", "same"), ("2.15.0", "passes")]
    assert result["summary"] == "fixed in torch 2.15.0: upgrade (fails on 2.13.0, passes on 2.15.0: fixed)"
    assert result["fixed_in"] == "2.15.0" and result["rows"][1]["env"]["bytes"] > 1 << 30
    p = cli("issue", v["run_dir"])
    assert (
        "### Versions affected\n\nfixed in torch 2.15.0: upgrade (fails on 2.13.0, passes on 2.15.0: fixed)" in p.stdout
    )
    assert "| 2.15.0 | passes |" in p.stdout
    assert p.stderr == (
        "reprokit: warning: this failure is fixed in torch 2.15.0 (reprokit versions): upgrade; an "
        "upstream report is probably not needed\n"
    )


def test_bisect_over_releases_names_the_first_fixed_one():
    truth = {
        "2.12.0": "same",
        "2.12.1": "same",
        "2.13.0": "same",
        "2.14.0": "same",
        "2.14.1": "passes",
        "2.15.0": "passes",
    }
    asked = []

    def status_of(release):
        asked.append(release)
        return truth[release]

    assert releases.first_change("2.12.0", "2.15.0", OFFERED, status_of) == ("2.14.0", "2.14.1")
    assert asked == ["2.12.0", "2.15.0", "2.14.0", "2.14.1"]  # two of the four between, not all
    truth["2.14.0"] = "different"  # no clean boundary there: the search stops and says so
    assert releases.first_change("2.12.0", "2.15.0", OFFERED, truth.get) == ("2.12.0", "2.15.0")


@pytest.mark.slow
def test_bisect_versions_states_its_cost_before_it_starts(tmp_path, index, monkeypatch):
    """The cost line comes first; a script with nothing to isolate then makes no environment at all."""
    monkeypatch.setenv("PIP_INDEX_URL", index)
    monkeypatch.setenv("REPROKIT_TORCH_ENVS", str(tmp_path / "envs"))
    monkeypatch.chdir(tmp_path)
    shutil.copy(pathlib.Path(__file__).parent / "cases" / "passes.py", tmp_path)
    code, out, err = reprokit("bisect", "passes.py", "--versions", "--no-pack")
    user = releases.base(metadata.version("torch"))
    chosen = sorted({user, "2.14.1", "2.15.0"}, key=releases.key)  # the user's release runs in this environment
    assert code == 3 and out == ""
    assert err.splitlines()[0] == (
        f"  after the bisect, versions: torch {', '.join(chosen)}; "
        f"{len(chosen) - 1} new environment(s) of about 5 GiB each (PyPI's wheels with CUDA libraries; under a minute "
        f"each here) in "
        f"{tmp_path / 'envs'}, "
        "0 reused; then one run of the repro per release"
    )
    assert not list((tmp_path / "envs").glob("torch-*"))
