"""reprokit pack and reprokit models: a run folder packed for upstream, or a registry model built and packed."""

from __future__ import annotations

import json

import click

from reprokit.app import model_attempt
from reprokit.app import models as models_case
from reprokit.app import pack as pack_case
from reprokit.cli_errors import one_line_errors
from reprokit.cli_live import progress
from reprokit.cli_output import echo_json, invoked
from reprokit.cli_render import models_table, pack_show
from reprokit.errors import ReprokitError


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


@click.command()
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
        req = model_attempt.ModelRequest(
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
            v = model_attempt.pack_model(req, output_dir=output_dir, command=invoked("pack"), emit=printer)
        if as_json:
            echo_json(model_attempt.model_summary(v))
        else:
            click.echo(f"{v['model']}: {v['outcome']}; tarball {v['tarball']}")
        return
    result = pack_case.pack_folder(run_dir, show=show, include_data=include_data)
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(pack_show(result) if show else f"wrote {result['tarball']}")


@click.command()
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
