"""`reprokit pack --model`: a registry model (or a factory) built without weights, sized on the meta device, and one
safe compile attempt of it in a trial of its own (then a depth scan), written as a model run folder and packed."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from typing import Any

from reprokit.app import guards
from reprokit.app.common import noop, record_secrets
from reprokit.app.pack import write_pack
from reprokit.app.runners import open_runner
from reprokit.app.verdict_file import write_verdict
from reprokit.data.events import Emit, Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.ranks import rank_dirs
from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir, read_json
from reprokit.models import registry
from reprokit.trial.devices import cuda_devices
from reprokit.trial.runner import Runner

# On a CPU the attempt is scaled to this many tokens unless --exact; the verdict says so.
CPU_TOKENS = 256

# What `pack --model --json` prints of the model verdict.
MODEL_SUMMARY_KEYS = (
    "model",
    "params_total",
    "params_per_rank",
    "risk",
    "outcome",
    "compile_seconds",
    "eager_step_seconds",
    "compiled_step_seconds",
    "speedup",
    "requested",
    "ran",
    "tarball",
    "depth",
    "message",
    "run_dir",
    "signature",
    "peak_memory_bytes",
    "ranks",
    "collectives_in_graph",
    "per_rank",
)


@dataclasses.dataclass
class ModelRequest:
    """What `pack --model` was asked for."""

    model: str | None
    config_path: str | None = None
    layers: int | None = None  # layers actually compiled (default 2; the requested model keeps its depth)
    sequence_length: int = 2048
    batch_size: int = 1
    tensor_parallel_gpus: int = 1
    device: str | None = None
    dtype: str | None = None
    mode: str | None = None
    dynamic: bool | None = None
    timeout: float = 600.0
    sets: dict = dataclasses.field(default_factory=dict)  # inductor config to set, e.g. a planted bug
    exact: bool = False  # run the requested sequence length and batch even on a CPU
    launch: bool = False  # run all tensor-parallel ranks under torchrun (gloo on CPU) even without N GPUs


@dataclasses.dataclass
class Attempt:
    """What the compile attempt runs, decided from the request and the machine."""

    name: str
    fields: dict | None
    factory: str | None
    sizes: dict
    device: str
    dtype: str
    layers: int | None
    seq: int
    batch: int
    ranks: int
    requested: dict
    ran: dict


def ranks_note(req: ModelRequest, device: str, gpus: int, ranks: int) -> str:
    """How the tensor-parallel request is run here, in words."""
    tp = req.tensor_parallel_gpus
    if tp > 1 and ranks == 1:
        why = (
            f"the machine has {gpus} GPU(s); --launch runs all ranks"
            if device.startswith("cuda")
            else "--launch runs all ranks with gloo"
        )
        return f"one rank of {tp} compiled alone (its shard shapes; collectives not in the graph: {why})"
    if ranks > 1:
        return (
            f"{ranks} ranks under torchrun ({'nccl' if device.startswith('cuda') else 'gloo'}), each compiling "
            f"its shard with the all-reduces in the graph"
        )
    return "the whole model on one device"


def _check_numbers(req: ModelRequest) -> None:
    """The request's counts and limit, each one line and exit 2 when no attempt can use it."""
    guards.at_least_one("--layers", req.layers, "a number of layers")
    guards.at_least_one("--sequence-length", req.sequence_length, "a number of tokens")
    guards.at_least_one("--batch-size", req.batch_size, "a batch size")
    guards.at_least_one("--tensor-parallel-gpus", req.tensor_parallel_gpus, "a number of GPUs")
    guards.above_zero("--timeout", req.timeout, "seconds for the compile attempt")


def plan_attempt(req: ModelRequest) -> Attempt:
    """Resolve the model, size it on the meta device, and fit the attempt to the machine (saying how)."""
    _check_numbers(req)
    name, fields, factory = registry.resolve(req.model, req.config_path)
    gpus = len(cuda_devices())
    device = req.device or ("cuda" if gpus else "cpu")
    dtype = req.dtype or ("bfloat16" if device.startswith("cuda") else "float32")
    tp = req.tensor_parallel_gpus
    full_layers = fields["layers"] if fields else None
    layers = req.layers or (min(2, full_layers) if full_layers else None)
    requested = {
        "model": name,
        "layers": full_layers,
        "sequence_length": req.sequence_length,
        "batch_size": req.batch_size,
        "tensor_parallel_gpus": tp,
        "device": device,
        "dtype": dtype,
        "mode": req.mode,
        "dynamic": req.dynamic,
    }
    seq, batch = req.sequence_length, req.batch_size
    scaled = []
    if device == "cpu" and not req.exact and seq * batch > CPU_TOKENS:
        batch, seq = 1, min(seq, CPU_TOKENS)
        scaled.append(
            f"scaled for a CPU to batch {batch} x sequence {seq} (requested {req.batch_size} x "
            f"{req.sequence_length}; --exact runs it as asked)"
        )
    # Every rank for real when the machine has a GPU per rank, or when asked (--launch: gloo on a CPU).
    ranks = tp if tp > 1 and factory is None and (req.launch or (device.startswith("cuda") and gpus >= tp)) else 1
    ran: dict[str, Any] = {
        **requested,
        "layers": layers,
        "sequence_length": seq,
        "batch_size": batch,
        "ranks_run": ranks,
        "note": ranks_note(req, device, gpus, ranks),
    }
    if full_layers and layers != full_layers:
        ran["note"] += f"; {layers} of {full_layers} layers"
    if scaled:
        ran["note"] += "; " + "; ".join(scaled)
    return Attempt(
        name=name,
        fields=fields,
        factory=factory,
        sizes=registry.sizes(fields, tp) if fields else {},
        device=device,
        dtype=dtype,
        layers=layers,
        seq=seq,
        batch=batch,
        ranks=ranks,
        requested=requested,
        ran=ran,
    )


def compile_attempts(runner: Runner, req: ModelRequest, a: Attempt, emit: Emit):
    """The attempt at the chosen depth, then (when it passes) a depth scan within the time already spent:
    (outcome, its model.json, [depth rows])."""

    def trial(k):
        c = {
            "fields": a.fields,
            "factory": a.factory,
            "layers": k,
            "seq": a.seq,
            "batch": a.batch,
            "tp": req.tensor_parallel_gpus,
            "device": a.device,
            "dtype": a.dtype,
            "mode": req.mode,
            "dynamic": req.dynamic,
            "set": req.sets,
        }
        out = runner(
            TrialSpec(
                mode="model", stage="inductor", cwd=os.getcwd(), model=c, ranks=a.ranks, label=f"model-{k}-layers"
            )
        )
        path = os.path.join(out.trial_dir, "model.json")
        return out, (read_json(path) if os.path.exists(path) else {})

    started = time.monotonic()
    main_out, main = trial(a.layers)
    emit(
        Event.NOTE,
        text=f"compile attempt at {a.layers} layers: {main_out.kind} ({main_out.signature.short()}), "
        f"{main_out.seconds:.1f} s",
    )
    depth = []
    if main_out.kind == OutcomeKind.PASS and a.layers and a.layers > 1:
        # Compile time against depth, within the time already spent: 1, 2, 4 ... layers.
        budget = max(main_out.seconds * 3, 60)
        k = 1
        while k < a.layers and time.monotonic() - started < budget:
            out, rec = trial(k)
            depth.append({"layers": k, "outcome": out.kind, "compile_seconds": rec.get("compile_seconds")})
            k *= 2
    if main:
        depth.append({"layers": a.layers, "outcome": main_out.kind, "compile_seconds": main.get("compile_seconds")})
    return main_out, main, depth


def per_rank(trial_dir: str) -> list:
    """Each rank's own compile time, peak memory, all-reduces and step times (rank 0 answers in the trial folder, rank N in
    rankN/); one row for a one-process attempt."""
    rows = []
    for sub in ["", *rank_dirs(trial_dir)] if trial_dir else []:
        rec = read_json(os.path.join(trial_dir, sub, "model.json")) or {}
        if rec:
            rows.append(
                {
                    "rank": int(sub[4:]) if sub else 0,
                    "phase": rec.get("phase"),
                    "compile_seconds": rec.get("compile_seconds"),
                    "peak_memory_bytes": rec.get("peak_memory_bytes"),
                    "collectives_in_graph": rec.get("collectives_in_graph"),
                    # each rank times its own steps: a slow rank (a straggler, a collective waiting) shows here
                    "eager_step_seconds": rec.get("eager_step_seconds"),
                    "compiled_step_seconds": rec.get("compiled_step_seconds"),
                }
            )
    return rows


def model_verdict(a: Attempt, main_out, main: dict, depth: list, run_dir: RunDir, seconds: float) -> dict:
    """verdict.json of a model run: sizes, the attempt's outcome and timings, what was asked and what ran."""
    sizes, speedup = a.sizes, main.get("speedup")
    verdict = {
        "model": a.name,
        "params_total": sizes.get("params_total"),
        "params_per_rank": sizes.get("params_per_rank"),
        "bytes": sizes.get("bytes"),
        "bytes_per_rank": sizes.get("bytes_per_rank"),
        "risk": sizes.get("risk"),
        "outcome": main_out.kind,
        "signature": main_out.signature.to_dict(),
        "phase": main.get("phase"),
        "compile_seconds": main.get("compile_seconds"),
        "eager_step_seconds": main.get("eager_step_seconds"),
        "compiled_step_seconds": main.get("compiled_step_seconds"),
        "speedup": speedup,
        "worth_it": None if speedup is None else speedup >= 1.05,
        "peak_memory_bytes": main.get("peak_memory_bytes"),
        "requested": a.requested,
        "ran": a.ran,
        "collectives_in_graph": main.get("collectives_in_graph"),
        "ranks": main.get("ranks"),
        "per_rank": per_rank(main_out.trial_dir),
        "depth": sorted(depth, key=lambda r: r["layers"]),
        "trial": main_out.trial_dir,
        "run_dir": run_dir.path,
        "seconds": seconds,
        "tarball": None,
        "factory": a.factory,
        "fields": a.fields,
        "message": "",
    }
    if speedup is not None and speedup < 1.05:
        verdict["message"] = f"compiled is not worth it here: {speedup:.2f}x (under the 5% rule)"
    return verdict


def pack_model(
    req: ModelRequest, output_dir: str | None = None, command: str = "", emit: Emit = noop, pack: bool = True
) -> dict:
    """Sizes from the meta device, an isolated compile attempt (and a depth scan), then the tarball."""
    a = plan_attempt(req)
    run_dir = RunDir.create(output_dir or os.path.join(os.getcwd(), "artifacts"), f"model-{a.name}")
    record_secrets(run_dir)
    run_dir.write_json(
        "run.json",
        {
            "kind": "model",
            "command": command,
            "python": sys.executable,
            "request": dataclasses.asdict(req),
            "environment": {},
        },
    )
    emit(Event.RUN_DIR, path=run_dir.path)
    s, tp = a.sizes, req.tensor_parallel_gpus
    emit(
        Event.NOTE,
        text=f"{a.name}: {s.get('params_total', '?'):,} parameters, {s.get('params_per_rank', '?'):,} "
        f"per rank (tp={tp}); risk {s.get('risk', 'unknown')}"
        if s
        else f"{a.name}: user factory",
    )
    started = time.monotonic()
    with open_runner(run_dir, emit, timeout=req.timeout) as runner:
        main_out, main, depth = compile_attempts(runner, req, a, emit)
    verdict = model_verdict(a, main_out, main, depth, run_dir, round(time.monotonic() - started, 2))
    write_verdict(run_dir, verdict)
    if pack:
        verdict["tarball"] = write_pack(run_dir, emit)
        write_verdict(run_dir, verdict)
    return verdict


def model_summary(verdict: dict) -> dict:
    """The part of a model verdict `pack --model --json` prints."""
    return {k: verdict.get(k) for k in MODEL_SUMMARY_KEYS}
