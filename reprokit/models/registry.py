"""The model registry: named configs, user factories and HF-style config files; exact sizes from the meta device."""

from __future__ import annotations

import importlib
import json
import os

from reprokit.errors import ReprokitError

# Llama-2 7B/13B/70B as published. llama40b: the 70B shape (GQA, hidden 8192) at 58 layers, 40.66B parameters,
# so it sits in the "over 40B" risk class that the registry exists to warn about (48 layers gave 33.7B).
REGISTRY = {
    "llama7b": dict(hidden=4096, layers=32, heads=32, kv_heads=32, intermediate=11008, vocab=32000),
    "llama13b": dict(hidden=5120, layers=40, heads=40, kv_heads=40, intermediate=13824, vocab=32000),
    "llama40b": dict(hidden=8192, layers=58, heads=64, kv_heads=8, intermediate=22016, vocab=32000),
    "llama70b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=28672, vocab=32000),
}

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float8": 1}


def risk_class(params: int) -> str:
    if params < 10e9:
        return "low: under 10B parameters, compiling is usually safe"
    if params <= 40e9:
        return "medium: 10-40B parameters, compile selectively (per block, or regions)"
    return "high: over 40B parameters, expect compile hangs or slowdowns; eager is the safe default"


def from_hf_config(path: str) -> dict:
    """A Hugging Face style Llama config.json as registry fields."""
    try:
        with open(path) as f:
            c = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ReprokitError(f"cannot read config {path}: {e}; pass a Hugging Face style Llama config.json") from None
    try:
        return dict(
            hidden=c["hidden_size"],
            layers=c["num_hidden_layers"],
            heads=c["num_attention_heads"],
            kv_heads=c.get("num_key_value_heads", c["num_attention_heads"]),
            intermediate=c["intermediate_size"],
            vocab=c["vocab_size"],
            rope_theta=float(c.get("rope_theta", 10000.0)),
            norm_eps=float(c.get("rms_norm_eps", 1e-5)),
            head_dim=int(c.get("head_dim") or 0),
        )
    except KeyError as e:
        raise ReprokitError(f"{path} lacks {e.args[0]}; it does not look like a Llama config") from None


def resolve(model: str | None, config_path: str | None) -> tuple[str, dict | None, str | None]:
    """(display name, llama fields or None, factory 'module:function' or None); one clear error otherwise."""
    if config_path:
        return os.path.splitext(os.path.basename(config_path))[0], from_hf_config(config_path), None
    if model and ":" in model:
        mod, _, fn = model.partition(":")
        try:
            getattr(importlib.import_module(mod), fn)
        except (ImportError, AttributeError) as e:
            raise ReprokitError(
                f"cannot load model factory {model}: {e}; pass package.module:function on sys.path"
            ) from None
        return fn, None, model
    if model in REGISTRY:
        return model, dict(REGISTRY[model]), None
    raise ReprokitError(
        f"unknown model {model!r}; known: {', '.join(REGISTRY)} (or package.module:factory, or --config config.json)"
    )


def sizes(fields: dict, tp: int = 1) -> dict:
    """Exact parameter counts of the full model and of one rank, counted on the meta device (no memory)."""
    import torch

    from reprokit.models.llama import Llama, LlamaConfig

    cfg = LlamaConfig(**fields)
    with torch.device("meta"):
        full = sum(p.numel() for p in Llama(cfg).parameters())
        rank = sum(p.numel() for p in Llama(cfg, tp=tp).parameters()) if tp > 1 else full
    return {
        "params_total": full,
        "params_per_rank": rank,
        "bytes": {d: full * b for d, b in DTYPE_BYTES.items()},
        "bytes_per_rank": {d: rank * b for d, b in DTYPE_BYTES.items()},
        "risk": risk_class(full),
    }
