"""The --executor and --slurm-* options (trial.executors) and the settings they give."""

from __future__ import annotations

import click

from reprokit.data.executor import load_settings


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
