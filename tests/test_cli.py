"""The command line as a user sees it: exact help texts, exact one-line errors with their exit codes, the
bisect summary table of a real run, minify's refusal of a flaky run, and bisect --resume from the journal.

CliRunner runs reprokit in this process; the trials are subprocesses as always.
"""

import json
import pathlib
import re
import shutil

import pytest
from click.testing import CliRunner

from reprokit.cli import main
from tests.opt_in import opt_in

CASES = pathlib.Path(__file__).parent / "cases"

GROUP_HELP = """\
Usage: reprokit [OPTIONS] COMMAND [ARGS]...

  Turn a torch.compile failure into a minimal repro and an upstream-ready
  report.

Options:
  --version  Show the version and exit.
  --help     Show this message and exit.

Commands:
  bisect    Name the compiler stage, graph, config and pass that break...
  capture   Run a job once as you run it, recording the failing graph where...
  doctor    Explain why compiled SCRIPT is not faster: graph breaks,...
  env       Print the environment report alone (torch, CUDA, driver, GPU,...
  issue     Print the GitHub issue text of a run, ready for PyTorch's...
  minify    Minify the failing graph of an earlier bisect run and write a...
  models    What the model registry holds, with exact sizes (counted on the...
  pack      Pack an earlier run folder (RUN_DIR), or build --model and pack...
  plan      How long RUN_DIR's run would have taken on K nodes (each...
  versions  Run RUN_DIR's failure (its verified repro.py, else the script)...
"""

BISECT_HELP = """\
Usage: reprokit bisect [OPTIONS] [SCRIPT] [SCRIPT_ARGS]...

  Name the compiler stage, graph, config and pass that break SCRIPT, then minify
  and pack it.

  Arguments after -- are passed to the script: reprokit bisect train.py -- --lr
  3e-4

  An interrupted bisect continues with: reprokit bisect --resume RUN_DIR

  A job captured once (reprokit capture) is bisected with: reprokit bisect
  --from-capture DIR

Options:
  --resume RUN_DIR                Continue an interrupted bisect from its
                                  journal, with the options it was started with.
  --from-capture DIR              Bisect the failing graph `reprokit capture`
                                  wrote, without running the job again.
  -o, --output-dir TEXT           Where run folders go (default ./artifacts).
  --timeout FLOAT                 Seconds per trial (default: from the baseline
                                  run).
  -j, --jobs INTEGER              Trials at once (default: one per GPU on a
                                  machine with several, else the CPU cores, at
                                  most 4).
  --repeat INTEGER                Run the original N times to measure how often
                                  it fails.
  --check-accuracy                Compare every compiled graph's outputs with
                                  eager.
  --no-configs                    Skip the inductor config flips.
  --no-subsystems                 Skip bisecting torch's pass and lowering
                                  counters.
  --no-minify                     Stop after the verdict.
  --no-pack                       Do not write the tarball.
  --max-input-bytes INTEGER       Real values kept per graph input (bytes).
  --nproc-per-node N              Run every trial as a torchrun job of N ranks.
  --kind [failure|slow]           slow: compiled slower than eager (per call,
                                  after warm-up) is the failure to bisect.
  --slow-threshold FLOAT          --kind slow: percent slower that counts.
  --versions                      Then run the failure under other torch
                                  releases (reprokit versions).
  --budget DURATION               How long the whole run may take (90s, 20m,
                                  1h30m): the verdict is always finished; then
                                  what fits, and the run says what was not
                                  asked.
  --json                          Print one JSON object on stdout.
  -v, --verbose                   One line per trial.
  --executor [local|slurm]        Where trials run: local processes (default) or
                                  SLURM jobs through submitit.
  --executor-config FILE          Every --slurm-* setting in one JSON or TOML
                                  file (the options win over it).
  --slurm-partition TEXT          Partition the trials' jobs go to.
  --slurm-account TEXT            Account the jobs are charged to.
  --slurm-time INTEGER            Each job's time limit in minutes (default 60).
  --slurm-gpus-per-node INTEGER   GPUs each job asks for per node.
  --slurm-nodes-per-trial INTEGER
                                  Nodes one trial's job takes.
  --slurm-max-jobs INTEGER        Jobs queued or running at once (default 8).
  --help                          Show this message and exit.
"""

# The run-specific parts of a summary table: each stage's seconds, the verdict's seconds, each phase's seconds.
STAGE_SECONDS = re.compile(r"\d+\.\d +$", re.M)
TOTAL_SECONDS = re.compile(r", \d+\.\d s$", re.M)
PHASE_SECONDS = re.compile(r" +\d+\.\d$", re.M)

USER_BACKEND_TABLE = """\
stage                       result  seconds
--------------------------  ------  -------
dynamo (backend=eager)      pass    <s>
aot_eager                   pass    <s>
aot_eager_decomp_partition  pass    <s>
inductor                    pass    <s>

failing stage              relu_compile_error_TESTING_ONLY
failure                    exception
verdict after              6 trials, <s> s
every stock stage passes; the user's backend 'relu_compile_error_TESTING_ONLY' fails

phase   trials  script  seconds
------  ------  ------  -------
start        3       3  <s>
ladder       3       3  <s>
all          6       6  <s>
"""

# What that run says on stderr off a terminal, one line per event (the original row's signature is cut at 60).
USER_BACKEND_PROGRESS = """run folder {run_dir}
· start: the script as written and without compile, side by side (at <t>)
  ✓ eager (no compile)           passes <s> s
  ✗ original run (relu_compile_error_TESTING_ONLY) BackendCompilerFailed: backend='<reprokit.child.router.Graph <s> s
· ladder: which compiler stage fails (at <t>)
  one run of the script took <s> s; the stages run it 4 more times, side by side
  ✓ dynamo (backend=eager)       passes <s> s
  ✓ aot_eager                    passes <s> s
  ✓ aot_eager_decomp_partition   passes <s> s
  ✓ inductor                     passes <s> s
"""
LINE_SECONDS = re.compile(r" +\d+\.\d s(?=$|;)", re.M)
PHASE_AT = re.compile(r"\(at \d+:\d\d\)")


def reprokit(*args, env=None):
    """`reprokit ARGS` in this process: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, list(args), prog_name="reprokit", terminal_width=80, env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


def normalised(table: str) -> str:
    return PHASE_SECONDS.sub("  <s>", TOTAL_SECONDS.sub(", <s> s", STAGE_SECONDS.sub("<s>", table)))


def test_help_of_the_group_and_of_bisect():
    assert reprokit("--help") == (0, GROUP_HELP, "")
    assert reprokit("bisect", "--help") == (0, BISECT_HELP, "")


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def bisect_run_folder(base: pathlib.Path) -> pathlib.Path:
    """A folder that looks like a bisect run that has not reached its verdict yet."""
    folder = base / "unfinished"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"command": "reprokit bisect s.py", "options": {}}))
    return folder


def test_every_bad_input_is_one_line_and_exit_2(in_tmp):
    (in_tmp / "broken.py").write_text("def f(:\n")
    (in_tmp / "s.py").write_text("import torch\n")
    (in_tmp / "blocker").write_text("x")
    unfinished = bisect_run_folder(in_tmp)
    cases = [
        (["bisect", "missing.py"], "no such script: missing.py"),
        (["bisect", str(in_tmp)], f"{in_tmp} is a directory; pass the Python script that calls torch.compile"),
        (["bisect", "broken.py"], "broken.py:1: syntax error: invalid syntax; fix the script, then run reprokit again"),
        (
            ["bisect", "s.py", "-o", str(in_tmp / "blocker" / "sub")],
            f"cannot write to output dir {in_tmp / 'blocker' / 'sub'}: Not a directory; pass --output-dir to a "
            "writable folder",
        ),
        (["bisect"], "pass the script to bisect, or --resume RUN_DIR to continue an interrupted bisect"),
        (
            ["bisect", "s.py", "--resume", str(unfinished)],
            "--resume takes the run folder alone: the script and its options come from its run.json",
        ),
        (["doctor", "missing.py"], "no such script: missing.py"),
        (
            ["pack", "--model", "llama7b", "--set", "no-equals-sign"],
            "--set takes NAME=VALUE (an inductor config), got 'no-equals-sign'",
        ),
        (["pack"], "pass a run folder to pack, or --model NAME (see reprokit models)"),
        (["minify", str(unfinished)], f"{unfinished} has no verdict.json yet; run reprokit bisect to completion first"),
        (["issue", str(unfinished)], f"{unfinished} has no verdict.json yet; run reprokit bisect to completion first"),
        (
            ["pack", str(unfinished), "--show"],
            f"{unfinished} has no verdict.json yet; run reprokit bisect to completion first",
        ),
    ]
    for command in ("pack", "minify", "issue"):
        cases.append(
            (
                [command, str(in_tmp)],
                f"{in_tmp} is not a reprokit run folder (no run.json); pass the folder bisect printed",
            )
        )
    cases.append(
        (
            ["bisect", "--resume", str(in_tmp)],
            f"{in_tmp} is not a reprokit run folder (no run.json); pass the folder bisect printed",
        )
    )
    for args, line in cases:
        assert reprokit(*args) == (2, "", f"reprokit: {line}\n"), args


def test_passing_script_has_nothing_to_isolate_exit_3(in_tmp):
    shutil.copy(CASES / "passes.py", in_tmp / "passes.py")
    code, out, err = reprokit("bisect", "passes.py", "--json", "--no-pack", "-o", str(in_tmp / "artifacts"))
    message = (
        "the script passes compiled (3 of 3 runs, on a cold and a warm inductor cache, and once as written, "
        "outside reprokit) and uncompiled: nothing to isolate; if it fails only now and then, --repeat 10 measures "
        "how often (add --check-accuracy to compare every compiled graph with eager)"
    )
    assert code == 3
    assert err.splitlines()[-1] == f"reprokit: {message}" and "Traceback" not in err
    assert json.loads(out) == {"failing_stage": None, "message": message, "exit_code": 3}
    assert out.count("\n") == 1


@pytest.fixture(scope="module")
def user_backend_run(tmp_path_factory):
    """One real bisect of a script whose own backend fails (quick: no minify, no pack, no config flips)."""
    work = tmp_path_factory.mktemp("user_backend")
    shutil.copy(CASES / "user_backend.py", work / "user_backend.py")
    code, out, err = reprokit(
        "bisect",
        str(work / "user_backend.py"),
        "--no-minify",
        "--no-pack",
        "--no-configs",
        "--no-subsystems",
        "-o",
        str(work / "artifacts"),
    )
    assert code == 0, err
    (run_dir,) = [p for p in (work / "artifacts").iterdir() if p.is_dir()]  # beside it: its .gitignore
    return out, err, run_dir


def test_bisect_summary_table(user_backend_run):
    out, err, run_dir = user_backend_run
    assert normalised(out) == USER_BACKEND_TABLE
    assert PHASE_AT.sub("(at <t>)", LINE_SECONDS.sub(" <s> s", err)) == USER_BACKEND_PROGRESS.format(run_dir=run_dir)


@pytest.mark.slow
def test_resume_answers_finished_trials_from_the_journal(user_backend_run, tmp_path):
    _, _, first_dir = user_backend_run
    run_dir = tmp_path / first_dir.name
    shutil.copytree(first_dir, run_dir)
    first = json.loads((run_dir / "verdict.json").read_text())
    # Interrupted: no verdict yet, and the last two trials never made it into the journal.
    (run_dir / "verdict.json").unlink()
    journal = (run_dir / "journal.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "journal.jsonl").write_text("".join(journal[:-2]))
    code, out, err = reprokit("bisect", "--resume", str(run_dir), "--json")
    assert code == 0, err
    resumed = json.loads(out)
    assert "resuming: 4 finished trials in the journal are not run again" in err
    for key in ("failing_stage", "kind", "signature", "graph", "last_passing_stage", "message"):
        assert resumed[key] == first[key], key
    assert [(r["stage"], r["kind"]) for r in resumed["ladder"]] == [(r["stage"], r["kind"]) for r in first["ladder"]]
    assert resumed["trials"] == 2 < first["trials"]
    assert len((run_dir / "journal.jsonl").read_text().splitlines()) == len(journal)
    assert json.loads((run_dir / "verdict.json").read_text())["failing_stage"] == first["failing_stage"]


def test_minify_of_a_folder_whose_script_or_interpreter_is_gone_is_one_line(user_backend_run, tmp_path):
    """A run folder copied to another machine, or a worktree removed: minify would rerun what is gone."""
    _, _, first_dir = user_backend_run
    run_dir = tmp_path / first_dir.name
    shutil.copytree(first_dir, run_dir)
    verdict = json.loads((run_dir / "verdict.json").read_text())
    gone = str(tmp_path / "moved" / "user_backend.py")
    (run_dir / "verdict.json").write_text(json.dumps({**verdict, "script": gone}))
    line = (
        f"reprokit: the script this run's bisect ran, {gone}, is gone: minify runs it again; put it back at that "
        "path, or bisect the script where it is now\n"
    )
    assert reprokit("minify", str(run_dir)) == (2, "", line)
    (run_dir / "verdict.json").write_text(json.dumps(verdict))
    info = json.loads((run_dir / "run.json").read_text())
    python = str(tmp_path / "old-venv" / "bin" / "python")
    (run_dir / "run.json").write_text(json.dumps({**info, "python": python}))
    line = (
        f"reprokit: the interpreter this run's bisect ran, {python}, is gone: minify runs it again; put it back at "
        "that path, or bisect the script where it is now\n"
    )
    assert reprokit("minify", str(run_dir), "--json") == (2, "", line)


@pytest.mark.slow
@opt_in(
    "75 s in the fresh-clone CI at 46f7fd4, whose suite took 47 minutes): the too-rare rule and minify's line are "
    "unit tests (tests/unit/bisect/test_bisector, tests/unit/app/test_minify), a flaky run through the real "
    "compiler test_e2e's planted flaky case"
)
def test_minify_refuses_a_flaky_run_too_rare_to_ask_each_cut_until_it_fails(tmp_path):
    """1 run in 4 fails: a question would need more than 8 runs to pass with a 5% chance of a miss."""
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(CASES / "flaky.py", work / "flaky.py")
    code, out, err = reprokit(
        "bisect",
        str(work / "flaky.py"),
        "--repeat",
        "4",
        "--jobs",
        "1",
        "--no-pack",
        "--json",
        "-o",
        str(work / "artifacts"),
        env={"FLAKY_DIR": str(tmp_path), "FLAKY_PATTERN": "PPPF"},
    )
    assert code == 0, err
    verdict = json.loads(out)
    assert verdict["flaky"] is True and verdict["repro"] is None and verdict["flaky_tries"] is None
    assert verdict["message"] == (
        "flaky: the original fails 1 of 4 runs (95% CI 5%–70%); too rare to bisect run by "
        "run (a question would need more than 8 runs)"
    )
    line = (
        "reprokit: not minified: the failure is flaky (it reproduced in 25% of runs), too rarely to ask each cut "
        "until it fails\n"
    )
    assert reprokit("minify", verdict["run_dir"]) == (2, "", line)
    assert reprokit("minify", verdict["run_dir"], "--json") == (2, "", line)


def test_the_original_run_and_the_stages_print_as_one_table(capsys):
    """The original run's row has the stage rows' columns (title, failure, seconds), so the ladder reads as one."""
    from reprokit.cli_render import Printer
    from reprokit.data.records import Outcome
    from reprokit.data.signature import Signature

    crash = Signature(kind="crash", exc_type="SIGABRT", message="killed by SIGABRT")
    printer = Printer(verbose=False, quiet=False)
    printer("stage", stage="none", outcome=Outcome(kind="pass", signature=Signature(kind="pass"), seconds=0.3))
    printer("original", outcome=Outcome(kind="crash", signature=crash, seconds=8.7, user_backend="inductor"))
    printer("stage", stage="inductor", outcome=Outcome(kind="crash", signature=crash, seconds=8.7))
    assert capsys.readouterr().err.splitlines() == [
        "  ✓ eager (no compile)           passes" + " " * 57 + "0.3 s",
        "  ✗ original run (inductor)      SIGABRT: killed by SIGABRT" + " " * 37 + "8.7 s",
        "  ✗ inductor                     SIGABRT: killed by SIGABRT" + " " * 37 + "8.7 s  (same as the original)",
    ]


def test_a_script_that_dies_before_torch_compile_has_nothing_to_isolate_exit_3(in_tmp):
    """A script that fails before it reaches torch.compile (here: a module that is not installed) fails the same way
    without compile: nothing of the compiler's to isolate, said plainly, not 'never calls torch.compile'."""
    (in_tmp / "needs_missing.py").write_text(
        "import torch\nimport reprokit_no_such_module\ntorch.compile(lambda x: x + 1)(torch.ones(2))\n"
    )
    code, out, err = reprokit("bisect", "needs_missing.py", "--json", "--no-pack", "-o", str(in_tmp / "artifacts"))
    message = (
        "the script fails before it reaches torch.compile, and without compile too (ModuleNotFoundError: No "
        "module named 'reprokit_no_such_module'): nothing compiler-specific to isolate; fix that first"
    )
    assert code == 3
    assert err.splitlines()[-1] == f"reprokit: {message}" and "Traceback" not in err
    assert json.loads(out) == {"failing_stage": None, "message": message, "exit_code": 3}
