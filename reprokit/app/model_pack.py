"""`reprokit pack --model`: build a named architecture without weights, try compiling it safely, pack the evidence."""
from __future__ import annotations

import dataclasses
import os
import sys
import time
from typing import Callable, Optional

from reprokit.data.records import TrialSpec
from reprokit.models import registry
from reprokit.data.rundir import RunDir, read_json
from reprokit.trial.runner import Runner


@dataclasses.dataclass
class ModelRequest:
    model: Optional[str]
    config_path: Optional[str] = None
    layers: Optional[int] = None  # layers actually compiled (default 2; the requested model keeps its depth)
    sequence_length: int = 2048
    batch_size: int = 1
    tensor_parallel_gpus: int = 1
    device: Optional[str] = None
    dtype: Optional[str] = None
    mode: Optional[str] = None
    dynamic: Optional[bool] = None
    timeout: float = 600.0
    sets: dict = dataclasses.field(default_factory=dict)  # inductor config to set, e.g. a planted bug
    exact: bool = False  # run the requested sequence length and batch even on a CPU
    launch: bool = False  # run all tensor-parallel ranks under torchrun (gloo on CPU) even without N GPUs

# On a CPU the attempt is scaled to this many tokens unless --exact; the verdict says so.
CPU_TOKENS = 256


def pack_model(req: ModelRequest, output_dir: Optional[str] = None, command: str = "",
               emit: Callable[..., None] = lambda *a, **k: None, pack: bool = True) -> dict:
    """Sizes from the meta device, an isolated compile attempt (and a depth scan), then the tarball."""
    name, fields, factory = registry.resolve(req.model, req.config_path)
    from reprokit.trial.devices import cuda_devices

    gpus = len(cuda_devices())
    device = req.device or ("cuda" if gpus else "cpu")
    dtype = req.dtype or ("bfloat16" if device.startswith("cuda") else "float32")
    tp = req.tensor_parallel_gpus
    sizes = registry.sizes(fields, tp) if fields else {}
    full_layers = fields["layers"] if fields else None
    layers = req.layers or (min(2, full_layers) if full_layers else None)
    requested = {"model": name, "layers": full_layers, "sequence_length": req.sequence_length,
                 "batch_size": req.batch_size, "tensor_parallel_gpus": tp, "device": device, "dtype": dtype,
                 "mode": req.mode, "dynamic": req.dynamic}
    seq, batch = req.sequence_length, req.batch_size
    scaled = []
    if device == "cpu" and not req.exact and seq * batch > CPU_TOKENS:
        batch, seq = 1, min(seq, CPU_TOKENS)
        scaled.append(f"scaled for a CPU to batch {batch} x sequence {seq} (requested {req.batch_size} x "
                      f"{req.sequence_length}; --exact runs it as asked)")
    # Every rank for real when the machine has a GPU per rank, or when asked (--launch: gloo on a CPU).
    ranks = tp if tp > 1 and factory is None and (req.launch or (device.startswith("cuda") and gpus >= tp)) else 1
    if tp > 1 and ranks == 1:
        why = f"the machine has {gpus} GPU(s); --launch runs all ranks" if device.startswith("cuda") else \
            "--launch runs all ranks with gloo"
        note = f"one rank of {tp} compiled alone (its shard shapes; collectives not in the graph: {why})"
    elif ranks > 1:
        note = (f"{ranks} ranks under torchrun ({'nccl' if device.startswith('cuda') else 'gloo'}), each compiling "
                f"its shard with the all-reduces in the graph")
    else:
        note = "the whole model on one device"
    ran = {**requested, "layers": layers, "sequence_length": seq, "batch_size": batch, "ranks_run": ranks,
           "note": note}
    if full_layers and layers != full_layers:
        ran["note"] += f"; {layers} of {full_layers} layers"
    if scaled:
        ran["note"] += "; " + "; ".join(scaled)
    run = RunDir.create(output_dir or os.path.join(os.getcwd(), "artifacts"), f"model-{name}")
    run.write_json("run.json", {"kind": "model", "command": command, "python": sys.executable,
                                "request": dataclasses.asdict(req), "environment": {}})
    emit("run_dir", path=run.path)
    emit("note", text=f"{name}: {sizes.get('params_total', '?'):,} parameters, {sizes.get('params_per_rank', '?'):,} "
                      f"per rank (tp={tp}); risk {sizes.get('risk', 'unknown')}" if sizes else f"{name}: user factory")
    runner = Runner(run, timeout=req.timeout, jobs=1,
                    on_trial=lambda s, o, c: emit("trial", spec=s, outcome=o, cached=c))

    def trial(k):
        c = {"fields": fields, "factory": factory, "layers": k, "seq": seq, "batch": batch,
             "tp": tp, "device": device, "dtype": dtype, "mode": req.mode, "dynamic": req.dynamic, "set": req.sets}
        out = runner(TrialSpec(mode="model", stage="inductor", cwd=os.getcwd(),
                               model=c, ranks=ranks,
                               label=f"model-{k}-layers"))
        path = os.path.join(out.trial_dir, "model.json")
        return out, (read_json(path) if os.path.exists(path) else {})

    started = time.monotonic()
    main_out, main = trial(layers)
    emit("note", text=f"compile attempt at {layers} layers: {main_out.kind} ({main_out.signature.short()}), "
                      f"{main_out.seconds:.1f} s")
    depth = []
    if main_out.kind == "pass" and layers and layers > 1:
        # Compile time against depth, within the time already spent: 1, 2, 4 ... layers.
        budget = max(main_out.seconds * 3, 60)
        k = 1
        while k < layers and time.monotonic() - started < budget:
            out, rec = trial(k)
            depth.append({"layers": k, "outcome": out.kind, "compile_seconds": rec.get("compile_seconds")})
            k *= 2
    if main:
        depth.append({"layers": layers, "outcome": main_out.kind, "compile_seconds": main.get("compile_seconds")})
    speedup = main.get("speedup")
    verdict = {
        "model": name, "params_total": sizes.get("params_total"), "params_per_rank": sizes.get("params_per_rank"),
        "bytes": sizes.get("bytes"), "bytes_per_rank": sizes.get("bytes_per_rank"), "risk": sizes.get("risk"),
        "outcome": main_out.kind, "signature": main_out.signature.to_dict(), "phase": main.get("phase"),
        "compile_seconds": main.get("compile_seconds"), "eager_step_seconds": main.get("eager_step_seconds"),
        "compiled_step_seconds": main.get("compiled_step_seconds"), "speedup": speedup,
        "worth_it": None if speedup is None else speedup >= 1.05,
        "peak_memory_bytes": main.get("peak_memory_bytes"), "requested": requested, "ran": ran,
        "collectives_in_graph": main.get("collectives_in_graph"), "ranks": main.get("ranks"),
        "depth": sorted(depth, key=lambda r: r["layers"]), "trial": main_out.trial_dir, "run_dir": run.path,
        "seconds": round(time.monotonic() - started, 2), "tarball": None, "factory": factory, "fields": fields,
        "message": "",
    }
    if speedup is not None and speedup < 1.05:
        verdict["message"] = f"compiled is not worth it here: {speedup:.2f}x (under the 5% rule)"
    run.write_json("verdict.json", verdict)
    if pack:
        from reprokit.report.model_report import pack_model_run

        verdict["tarball"] = pack_model_run(run, emit=emit)
        run.write_json("verdict.json", verdict)
    return verdict
