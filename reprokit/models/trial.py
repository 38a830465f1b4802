"""Inside a model trial (child process): build one rank, time eager and compiled steps, record memory."""

from __future__ import annotations

import importlib
import os
import resource
import sys
import time

from reprokit import settings


def _sync(torch, device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(torch, device, fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        _sync(torch, device)
        times.append(time.perf_counter() - t)
    return min(times)


def build(c: dict):
    """(model, inputs) for a registry config or a user factory, on the requested device and dtype."""
    import torch

    dtype = getattr(torch, c["dtype"])
    if c.get("factory"):
        sys.path.insert(0, os.getcwd())
        mod, _, fn = c["factory"].partition(":")
        model, inputs = getattr(importlib.import_module(mod), fn)()
        return model.to(c["device"], dtype), tuple(x.to(c["device"]) for x in inputs)
    from reprokit.models.llama import Llama, LlamaConfig, tp_all_reduce

    cfg = LlamaConfig(**{**c["fields"], "layers": c["layers"]})
    launched = _world_size() > 1
    rank = int(settings.RANK.get("0")) if launched else 0
    torch.manual_seed(rank)  # each rank its own shard of (random) weights
    with torch.device("meta"):
        model = Llama(cfg, tp=c["tp"], all_reduce=tp_all_reduce if launched else None, rank=rank)
    model = model.to_empty(device=c["device"]).to(dtype)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02)  # no weights exist; small random ones keep activations finite
    torch.manual_seed(0)  # the same tokens on every rank
    tokens = torch.randint(0, cfg.vocab, (c["batch"], c["seq"]), device=c["device"])
    return model, (tokens,)


def _world_size() -> int:
    return int(settings.WORLD_SIZE.get("1"))


def init_ranks(c: dict) -> dict:
    """Under torchrun: join the process group (gloo on CPU, nccl on CUDA) and pick this rank's device."""
    import torch
    import torch.distributed as dist

    if _world_size() <= 1:
        return c
    if c["device"].startswith("cuda"):
        local = int(settings.LOCAL_RANK.get("0"))
        torch.cuda.set_device(local)
        c = {**c, "device": f"cuda:{local}"}
    dist.init_process_group("nccl" if c["device"].startswith("cuda") else "gloo")
    return c


def run_model_trial(c: dict, out_dir: str) -> None:
    """Eager step, compile, compiled step; writes model.json as it goes (a hang still leaves what was done)."""
    import torch

    from reprokit import compat, torch_config

    for name, value in (c.get("set") or {}).items():
        torch_config.set_inductor_config(name, value)
    record: dict = {"phase": "build"}

    def save():
        from reprokit.data.rundir import write_json_atomic

        write_json_atomic(os.path.join(out_dir, "model.json"), record)

    save()
    c = init_ranks(c)
    record["ranks"] = _world_size()
    model, inputs = build(c)
    record["phase"] = "eager"
    save()
    device = c["device"]
    graph_ops: list = []
    with torch.no_grad():
        record["eager_step_seconds"] = _timed(torch, device, lambda: model(*inputs), c.get("reps", 2))
        record["phase"] = "compile"
        save()
        # inductor as torch.compile builds it, noting the ops Dynamo put in each graph (collectives among them)
        backend = _inductor_recording(compat.inductor_backend(c.get("mode"), None, c.get("dynamic")), graph_ops)
        compiled = torch.compile(model, backend=backend, dynamic=c.get("dynamic"))
        t = time.perf_counter()
        compiled(*inputs)
        _sync(torch, device)
        record["compile_seconds"] = time.perf_counter() - t
        record["phase"] = "compiled"
        save()
        record["compiled_step_seconds"] = _timed(torch, device, lambda: compiled(*inputs), c.get("reps", 2))
    record["speedup"] = record["eager_step_seconds"] / record["compiled_step_seconds"]
    record["collectives_in_graph"] = sum(1 for op in graph_ops if "all_reduce" in op)
    record["graphs"] = sum(1 for op in graph_ops if op == "<graph>")
    record["phase"] = "done"
    record["peak_memory_bytes"] = (
        torch.cuda.max_memory_allocated()
        if device.startswith("cuda")
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    )
    save()


def _inductor_recording(inductor, ops: list):
    """The inductor backend, appending "<graph>" and each call_function target of every graph Dynamo hands it to
    `ops`."""

    def backend(gm, example_inputs):
        ops.append("<graph>")
        ops.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return inductor(gm, example_inputs)

    return backend
