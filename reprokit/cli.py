"""Command line: parse, call the use case in reprokit.app, print. No logic beyond that."""

from __future__ import annotations

import contextlib
import functools
import json
import shlex
import sys

import click

from reprokit.app import bisect as bisect_case
from reprokit.app import capture as capture_case
from reprokit.app import doctor as doctor_case
from reprokit.app import env as env_case
from reprokit.app import from_capture as from_capture_case
from reprokit.app import issue as issue_case
from reprokit.app import minify as minify_case
from reprokit.app import models as models_case
from reprokit.app import pack as pack_case
from reprokit.app import plan as plan_case
from reprokit.app import versions as versions_case
from reprokit.app.common import stop_trials
from reprokit.cli_live import progress
from reprokit.cli_render import doctor_table, models_table, pack_show, plan_table, verdict_json, versions_table
from reprokit.cli_signals import exits_on_signals
from reprokit.cli_summary import summary_table
from reprokit.data.budget import parse_budget
from reprokit.data.executor import load_settings
from reprokit.errors import NothingToIsolate, ReprokitError

EXIT_BAD_INPUT = 2
EXIT_NOTHING = 3


def fail(message: str, code: int):
    """One line on stderr, then exit with code."""
    click.echo(f"reprokit: {message}", err=True)
    sys.exit(code)


def executor_options(command):
    """--executor and its SLURM settings (trial.executors): where each trial runs."""
    options = [
        click.option(
            "--executor",
            type=click.Choice(["local", "slurm"]),
            default=None,
            help="Where trials run: local processes (default) or SLURM jobs through submitit.",
        ),
        click.option(
            "--executor-config",
            default=None,
            metavar="FILE",
            help="Every --slurm-* setting in one JSON or TOML file (the options win over it).",
        ),
        click.option("--slurm-partition", default=None, help="Partition the trials' jobs go to."),
        click.option("--slurm-account", default=None, help="Account the jobs are charged to."),
        click.option("--slurm-time", type=int, default=None, help="Each job's time limit in minutes (default 60)."),
        click.option("--slurm-gpus-per-node", type=int, default=None, help="GPUs each job asks for per node."),
        click.option("--slurm-nodes-per-trial", type=int, default=None, help="Nodes one trial's job takes."),
        click.option("--slurm-max-jobs", type=int, default=None, help="Jobs queued or running at once (default 8)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def executor_settings(kwargs: dict):
    """The executor's settings from the options (popped from kwargs), or None when none was given."""
    names = (
        "executor",
        "executor_config",
        "slurm_partition",
        "slurm_account",
        "slurm_time",
        "slurm_gpus_per_node",
        "slurm_nodes_per_trial",
        "slurm_max_jobs",
    )
    given = {n: kwargs.pop(n, None) for n in names}
    config = given.pop("executor_config")
    if config is None and all(v is None for v in given.values()):
        return None
    return load_settings(config, {"name" if k == "executor" else k.removeprefix("slurm_"): v for k, v in given.items()})


def one_line_errors(empty_key: str, signals: bool = True):
    """Bad input exits 2 and "nothing to isolate" exits 3, each with one line on stderr (and with --json, one
    JSON object on stdout whose empty_key is null). Every command wears this. With `signals`, SIGINT, SIGTERM and
    SIGHUP stop the command's trials and exit 130, 143, 129 with one line saying how to go on (cli_signals)."""

    def wrap(command):
        @functools.wraps(command)
        def guarded(*args, **kwargs):
            ending = exits_on_signals(stop_trials, command.__name__, kwargs, empty_key)
            try:
                with ending if signals else contextlib.nullcontext():
                    return command(*args, **kwargs)
            except ReprokitError as e:
                fail(str(e), EXIT_BAD_INPUT)
            except NothingToIsolate as e:
                if kwargs.get("as_json"):
                    click.echo(json.dumps({empty_key: None, "message": str(e), "exit_code": EXIT_NOTHING}))
                fail(str(e), EXIT_NOTHING)

        return guarded

    return wrap


def invoked(name: str) -> str:
    """The command line as the user typed it, for run.json and the issue text."""
    return f"reprokit {name} " + " ".join(shlex.quote(a) for a in sys.argv[2:])


def echo_json(data) -> None:
    """One JSON object on stdout, keys sorted."""
    click.echo(json.dumps(data, sort_keys=True))


@click.group()
@click.version_option(package_name="reprokit", prog_name="reprokit")
def main():
    """Turn a torch.compile failure into a minimal repro and an upstream-ready report."""


@main.command()
@click.argument("script", required=False)
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--resume",
    "resume_dir",
    default=None,
    metavar="RUN_DIR",
    help="Continue an interrupted bisect from its journal, with the options it was started with.",
)
@click.option(
    "--from-capture",
    "capture_dir",
    default=None,
    metavar="DIR",
    help="Bisect the failing graph `reprokit capture` wrote, without running the job again.",
)
@click.option("--output-dir", "-o", default=None, help="Where run folders go (default ./artifacts).")
@click.option("--timeout", type=float, default=None, help="Seconds per trial (default: from the baseline run).")
@click.option(
    "--jobs",
    "-j",
    type=int,
    default=None,
    help="Trials at once (default: one per GPU on a machine with several, else the CPU cores, at most 4).",
)
@click.option("--repeat", type=int, default=1, help="Run the original N times to measure how often it fails.")
@click.option("--check-accuracy", is_flag=True, help="Compare every compiled graph's outputs with eager.")
@click.option("--no-configs", is_flag=True, help="Skip the inductor config flips.")
@click.option("--no-subsystems", is_flag=True, help="Skip bisecting torch's pass and lowering counters.")
@click.option("--no-minify", is_flag=True, help="Stop after the verdict.")
@click.option("--no-pack", is_flag=True, help="Do not write the tarball.")
@click.option("--max-input-bytes", type=int, default=64 << 20, help="Budget for saved real graph inputs.")
@click.option(
    "--nproc-per-node", "nproc", type=int, default=1, metavar="N", help="Run every trial as a torchrun job of N ranks."
)
@click.option(
    "--kind",
    type=click.Choice(["failure", "slow"]),
    default="failure",
    help="slow: compiled slower than eager (per call, after warm-up) is the failure to bisect.",
)
@click.option("--slow-threshold", type=float, default=10.0, help="--kind slow: percent slower that counts.")
@click.option(
    "--versions",
    "versions_step",
    is_flag=True,
    help="Then run the failure under other torch releases (reprokit versions).",
)
@click.option(
    "--budget",
    default=None,
    metavar="DURATION",
    help="How long the whole run may take (90s, 20m, 1h30m): the verdict is always finished; then "
    "what fits, and the run says what was not asked.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True, help="One line per trial.")
@executor_options
@one_line_errors("failing_stage")
def bisect(
    script,
    script_args,
    resume_dir,
    capture_dir,
    output_dir,
    timeout,
    jobs,
    repeat,
    check_accuracy,
    no_configs,
    no_subsystems,
    no_minify,
    no_pack,
    max_input_bytes,
    nproc,
    kind,
    slow_threshold,
    versions_step,
    budget,
    as_json,
    verbose,
    **executor,
):
    """Name the compiler stage, graph, config and pass that break SCRIPT, then minify and pack it.

    Arguments after -- are passed to the script: reprokit bisect train.py -- --lr 3e-4

    An interrupted bisect continues with: reprokit bisect --resume RUN_DIR

    A job captured once (reprokit capture) is bisected with: reprokit bisect --from-capture DIR"""
    if capture_dir and (script or resume_dir):
        raise ReprokitError("--from-capture takes the capture folder alone: the graph and its failure come from it")
    if resume_dir and script:
        raise ReprokitError("--resume takes the run folder alone: the script and its options come from its run.json")
    if not resume_dir and not script and not capture_dir:
        raise ReprokitError("pass the script to bisect, or --resume RUN_DIR to continue an interrupted bisect")
    settings = executor_settings(executor)
    seconds = parse_budget(budget)
    if seconds is not None and (capture_dir or resume_dir):
        raise ReprokitError("--budget is for a new bisect of a script; a resumed run keeps the budget it was given")
    with progress(verbose) as printer:
        if capture_dir:
            v = from_capture_case.bisect_from_capture(
                capture_dir,
                output_dir=output_dir,
                timeout=timeout,
                jobs=jobs,
                ranks=nproc,
                subsystems=not no_subsystems,
                configs=not no_configs,
                minify=not no_minify,
                pack=not no_pack,
                command=invoked("bisect"),
                emit=printer,
            )
        elif resume_dir:
            v = bisect_case.resume_bisect(resume_dir, minify=not no_minify, pack=not no_pack, emit=printer)
        else:
            v = bisect_case.bisect_script(
                script,
                tuple(script_args),
                output_dir=output_dir,
                timeout=timeout,
                jobs=jobs,
                repeat=repeat,
                check_accuracy=check_accuracy,
                configs=not no_configs,
                subsystems=not no_subsystems,
                minify=not no_minify,
                pack=not no_pack,
                max_input_bytes=max_input_bytes,
                ranks=nproc,
                kind=kind,
                slow_threshold=slow_threshold / 100.0,
                command=invoked("bisect"),
                versions=versions_step,
                executor=settings,
                budget=seconds,
                emit=printer,
            )
    if as_json:
        echo_json(verdict_json(v))
    else:
        click.echo(summary_table(v, printer.tally))


@main.command()
@click.argument("run_dir")
@click.option("--resume", is_flag=True, help="Continue from the smallest failing graph found so far.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True)
@executor_options
@one_line_errors("failing_stage")
def minify(run_dir, resume, as_json, verbose, **executor):
    """Minify the failing graph of an earlier bisect run and write a verified repro.py."""
    settings = executor_settings(executor)
    with progress(verbose) as printer:
        v = minify_case.minify_folder(run_dir, emit=printer, resume=resume, executor=settings)
    if as_json:
        echo_json(verdict_json(v))
    else:
        click.echo(summary_table(v, printer.tally))


@main.command()
@click.argument("script")
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--output-dir", "-o", default=None, help="Where run folders go (default ./artifacts).")
@click.option("--timeout", type=float, default=None, help="Seconds per run (default: from the eager run).")
@click.option(
    "--nproc-per-node", "nproc", type=int, default=1, metavar="N", help="Run the script as a torchrun job of N ranks."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True, help="One line per run, and every finding's detail.")
@one_line_errors("findings")
def doctor(script, script_args, output_dir, timeout, nproc, as_json, verbose):
    """Explain why compiled SCRIPT is not faster: graph breaks, recompilations, silent fall-backs, speed.

    Arguments after -- are passed to the script: reprokit doctor train.py -- --steps 20"""
    with progress(verbose) as printer:
        r = doctor_case.doctor_script(
            script,
            tuple(script_args),
            output_dir=output_dir,
            timeout=timeout,
            ranks=nproc,
            command=invoked("doctor"),
            emit=printer,
        )
    if as_json:
        echo_json(r.to_dict())
    else:
        click.echo(doctor_table(r, verbose))


def parse_sets(sets) -> dict:
    """--set NAME=VALUE pairs as a dict; a VALUE that is JSON is parsed, any other stays a string."""
    out = {}
    for item in sets:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ReprokitError(f"--set takes NAME=VALUE (an inductor config), got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


@main.command()
@click.argument("run_dir", required=False)
@click.option("--show", is_flag=True, help="Print what would be packed and what was redacted; write nothing.")
@click.option(
    "--include-data",
    is_flag=True,
    help="Attach the real input values (repro_inputs.pt) when the repro needs them; by default they stay out.",
)
@click.option("--model", default=None, help="A registry name (see reprokit models) or package.module:factory.")
@click.option("--config", "config_path", default=None, help="A Hugging Face style Llama config.json.")
@click.option("--layers", type=int, default=None, help="Layers to compile (default 2; the requested depth is kept).")
@click.option("--sequence-length", type=int, default=2048)
@click.option("--batch-size", type=int, default=1)
@click.option("--tensor-parallel-gpus", type=int, default=1, help="Build one rank's shard of this many GPUs.")
@click.option("--device", default=None, help="cuda when a GPU is present, else cpu.")
@click.option("--dtype", default=None, help="bfloat16 on GPU, float32 on CPU.")
@click.option("--mode", default=None, help="torch.compile mode.")
@click.option("--dynamic/--no-dynamic", default=None)
@click.option("--timeout", type=float, default=600.0, help="Seconds for the compile attempt.")
@click.option("--set", "sets", multiple=True, help="NAME=VALUE inductor config for the attempt (repeatable).")
@click.option("--exact", is_flag=True, help="On a CPU too, run the requested sequence length and batch size.")
@click.option("--launch", is_flag=True, help="Run every tensor-parallel rank under torchrun (gloo on a CPU).")
@click.option("--output-dir", "-o", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True)
@one_line_errors("tarball")
def pack(
    run_dir,
    show,
    include_data,
    model,
    config_path,
    layers,
    sequence_length,
    batch_size,
    tensor_parallel_gpus,
    device,
    dtype,
    mode,
    dynamic,
    timeout,
    sets,
    exact,
    launch,
    output_dir,
    as_json,
    verbose,
):
    """Pack an earlier run folder (RUN_DIR), or build --model and pack a safe compile attempt of it."""
    if model or config_path:
        req = pack_case.ModelRequest(
            model=model,
            config_path=config_path,
            layers=layers,
            sequence_length=sequence_length,
            batch_size=batch_size,
            tensor_parallel_gpus=tensor_parallel_gpus,
            device=device,
            dtype=dtype,
            mode=mode,
            dynamic=dynamic,
            timeout=timeout,
            sets=parse_sets(sets),
            exact=exact,
            launch=launch,
        )
        with progress(verbose) as printer:
            v = pack_case.pack_model(req, output_dir=output_dir, command=invoked("pack"), emit=printer)
        if as_json:
            echo_json(pack_case.model_summary(v))
        else:
            click.echo(f"{v['model']}: {v['outcome']}; tarball {v['tarball']}")
        return
    result = pack_case.pack_folder(run_dir, show=show, include_data=include_data)
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(pack_show(result) if show else f"wrote {result['tarball']}")


@main.command()
@click.option("--tensor-parallel-gpus", type=int, default=1)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("models")
def models(tensor_parallel_gpus, as_json):
    """What the model registry holds, with exact sizes (counted on the meta device)."""
    rows = models_case.list_models(tensor_parallel_gpus)
    if as_json:
        echo_json({"models": rows})
    else:
        click.echo(models_table(rows))


@main.command()
@click.argument("run_dir")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("issue")
def issue(run_dir, as_json):
    """Print the GitHub issue text of a run, ready for PyTorch's bug-report form."""
    text = issue_case.issue_markdown(run_dir)
    warning = issue_case.upstream_warning(run_dir)
    if warning:
        click.echo(f"reprokit: {warning}", err=True)
    if as_json:
        echo_json({"issue": text})
    else:
        click.echo(text)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("env")
def env(as_json):
    """Print the environment report alone (torch, CUDA, driver, GPU, Python, packages)."""
    report = env_case.environment_report()
    click.echo(report["data"] if as_json else report["text"])


@main.command()
@click.argument("run_dir", required=False)
@click.option(
    "--torch",
    "torch_list",
    default=None,
    metavar="2.12.1,2.14.1",
    help="Releases to try, comma-separated (the user's own is always tried).",
)
@click.option("--newest", is_flag=True, help="Only the user's release and the newest.")
@click.option("--between", nargs=2, default=None, metavar="A B", help="Every minor release's newest patch from A to B.")
@click.option(
    "--bisect",
    "bisect_releases",
    is_flag=True,
    help="Find the first release on the failing side between a passing and a failing one.",
)
@click.option("--index-url", default=None, help="A package index for torch's wheels (a nightly or CPU-only one).")
@click.option("--cache-dir", default=None, help="Where the environments go (default ~/.cache/reprokit/torch-envs).")
@click.option("--clean", is_flag=True, help="Remove every environment reprokit versions made, and stop.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("versions")
def versions(run_dir, torch_list, newest, between, bisect_releases, index_url, cache_dir, clean, as_json):
    """Run RUN_DIR's failure (its verified repro.py, else the script) under other torch releases.

    Each release gets its own uv-managed environment in the cache folder, made once and reused."""
    if clean:
        done = versions_case.clean(cache_dir)
        click.echo(
            json.dumps(done)
            if as_json
            else f"removed {len(done['removed'])} entries ({done['bytes'] / 2**30:.1f} GiB) from {done['cache_dir']}"
        )
        return
    if not run_dir:
        raise ReprokitError("pass the run folder of a reprokit bisect, or --clean")
    if sum(bool(x) for x in (torch_list, newest, between)) > 1:
        raise ReprokitError("--torch, --newest and --between choose the releases: pass one of them")
    with progress(False, quiet=as_json) as printer:
        result = versions_case.check_releases(
            run_dir,
            torch_list,
            newest,
            tuple(between) if between else None,
            bisect_releases,
            index_url,
            cache_dir,
            emit=printer,
        )
    if as_json:
        echo_json(result)
    else:
        click.echo(versions_table(result))


@main.command()
@click.argument("run_dir")
@click.option(
    "--nodes",
    "nodes",
    default="1,2,4,8",
    metavar="K[,K...]",
    help="Node counts to plan for, comma-separated (default 1,2,4,8).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("plans")
def plan(run_dir, nodes, as_json):
    """How long RUN_DIR's run would have taken on K nodes (each round's trials packed longest-first), and the
    node-hours its trials spent, from its journal."""
    try:
        counts = [int(k) for k in nodes.split(",") if k.strip()]
    except ValueError:
        raise ReprokitError(f"--nodes takes node counts such as 1,2,4,8 (got {nodes})") from None
    if not counts or min(counts) < 1:
        raise ReprokitError(f"--nodes takes node counts of 1 or more (got {nodes})")
    result = plan_case.plan_run(run_dir, counts)
    if as_json:
        echo_json(result)
    else:
        click.echo(plan_table(result))


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--output-dir", "-o", required=True, help="The capture folder (graphs, inputs, the failure).")
@click.option("--max-input-bytes", type=int, default=64 << 20, help="Budget for saved real graph inputs.")
@click.option(
    "--compile-timeout",
    default=None,
    metavar="DURATION",
    help="One graph's compile past this (90s, 5m) is written as a hang, and the job stops.",
)
@click.option("--fall-back-to-eager", is_flag=True, help="With --compile-timeout: that graph runs eagerly instead.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@one_line_errors("exit_status", signals=False)  # the job's own signals are its to handle, and its exit status
def capture(output_dir, max_input_bytes, compile_timeout, fall_back_to_eager, command):
    """Run a job once as you run it, recording the failing graph where it fails.

    reprokit capture --output-dir DIR -- torchrun --nproc-per-node 8 train.py   (then: reprokit bisect
    --from-capture DIR). Under a launcher reprokit cannot wrap, REPROKIT_CAPTURE=DIR does the same."""
    run = capture_case.capture_command(
        output_dir,
        tuple(command),
        max_input_bytes=max_input_bytes,
        compile_timeout=compile_timeout,
        fall_back=fall_back_to_eager,
    )
    for report in run.fault_reports:  # the job's own faulthandler report, which the capture wrote to its folder
        click.echo(report.rstrip("\n"), err=True)
    if run.failures:
        click.echo(
            f"reprokit capture: the failing graph is in {run.output_dir}/{run.failures[0]}; next: reprokit "
            f"bisect --from-capture {shlex.quote(output_dir)}",
            err=True,
        )
    sys.exit(run.exit_status)


if __name__ == "__main__":
    main()
