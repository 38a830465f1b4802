"""A Llama-family decoder in plain torch: RMSNorm, RoPE, grouped-query attention through
scaled_dot_product_attention, SwiGLU MLP. Self-contained: repro.py inlines this file."""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class LlamaConfig:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int = 32000
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    head_dim: int = 0  # 0: hidden // heads

    @property
    def dim_per_head(self) -> int:
        return self.head_dim or self.hidden // self.heads


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


def rope_tables(seq, dim, theta, device, dtype):
    inv = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
    freqs = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    """Grouped-query attention; `heads` and `kv_heads` are this rank's (Megatron column split)."""

    def __init__(self, cfg, heads, kv_heads):
        super().__init__()
        hd = cfg.dim_per_head
        self.heads, self.kv_heads, self.hd = heads, kv_heads, hd
        self.wq = nn.Linear(cfg.hidden, heads * hd, bias=False)
        self.wk = nn.Linear(cfg.hidden, kv_heads * hd, bias=False)
        self.wv = nn.Linear(cfg.hidden, kv_heads * hd, bias=False)
        self.wo = nn.Linear(heads * hd, cfg.hidden, bias=False)  # row split: the partial sum is all-reduced

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.wk(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.kv_heads != self.heads:
            rep = self.heads // self.kv_heads
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(b, s, self.heads * self.hd))


class MLP(nn.Module):
    def __init__(self, cfg, intermediate):
        super().__init__()
        self.w1 = nn.Linear(cfg.hidden, intermediate, bias=False)
        self.w3 = nn.Linear(cfg.hidden, intermediate, bias=False)
        self.w2 = nn.Linear(intermediate, cfg.hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg, heads, kv_heads, intermediate, all_reduce=None):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.attn = Attention(cfg, heads, kv_heads)
        self.mlp_norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.mlp = MLP(cfg, intermediate)
        self.all_reduce = all_reduce

    def _reduce(self, x):
        return self.all_reduce(x) if self.all_reduce is not None else x

    def forward(self, x, cos, sin):
        x = x + self._reduce(self.attn(self.attn_norm(x), cos, sin))
        return x + self._reduce(self.mlp(self.mlp_norm(x)))


def tp_all_reduce(x):
    """Sum a row-parallel layer's partial output over the tensor-parallel ranks (Dynamo traces this into
    the graph as a functional all-reduce)."""
    import torch.distributed as dist

    dist.all_reduce(x)
    return x


class Llama(nn.Module):
    """One tensor-parallel rank of a Llama decoder (tp=1: the whole model). With all_reduce, the ranks'
    partial sums are combined as in Megatron: after the vocab-parallel embedding, attention and the MLP."""

    def __init__(self, cfg: LlamaConfig, tp: int = 1, all_reduce=None, rank: int = 0):
        super().__init__()
        self.cfg = cfg
        heads, kv, inter = shard_sizes(cfg, tp)
        self.vocab_start, self.vocab_rows = rank * (cfg.vocab // tp), cfg.vocab // tp
        self.embed = nn.Embedding(cfg.vocab // tp, cfg.hidden)  # vocab-parallel: this rank's rows
        self.layers = nn.ModuleList(Block(cfg, heads, kv, inter, all_reduce) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab // tp, bias=False)
        self.all_reduce = all_reduce

    def forward(self, tokens):
        local = tokens - self.vocab_start
        outside = (local < 0) | (local >= self.vocab_rows)
        x = self.embed(local.masked_fill(outside, 0)).masked_fill(outside.unsqueeze(-1), 0.0)
        if self.all_reduce is not None:
            x = self.all_reduce(x)
        cos, sin = rope_tables(tokens.shape[1], self.cfg.dim_per_head, self.cfg.rope_theta, x.device, x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


def shard_sizes(cfg: LlamaConfig, tp: int):
    """(heads, kv_heads, intermediate) of one rank; KV heads are replicated when there are fewer than ranks."""
    if cfg.heads % tp or cfg.intermediate % tp or cfg.vocab % tp:
        raise ValueError(
            f"heads {cfg.heads}, intermediate {cfg.intermediate} and vocab {cfg.vocab} must divide by "
            f"the tensor-parallel size {tp}"
        )
    return cfg.heads // tp, max(1, cfg.kv_heads // tp), cfg.intermediate // tp
