"""Synthetic inputs: statistics without values, expressions repro.py runs, real values inline only when few."""

import torch

from reprokit.fx.inputs import INLINE_MAX_ELEMENTS, inline_exprs, synthetic_expr, synthetic_inputs, value_stats


def _meta(t, **kw):
    return dict(
        kind="tensor",
        shape=list(t.shape),
        stride=list(t.stride()),
        dtype=str(t.dtype).replace("torch.", ""),
        device="cpu",
        contiguous=t.is_contiguous(),
        requires_grad=False,
        **value_stats(t),
        **kw,
    )


def test_statistics_hold_no_values_but_the_special_ones():
    t = torch.tensor([[0.5, float("nan")], [0.0, float("-inf")]])
    stats = value_stats(t)
    assert stats["special"] == ["nan", "-inf", "zero"] and stats["min"] == 0.0 and stats["max"] == 0.5
    assert not any(isinstance(v, list) and len(v) == t.numel() for v in stats.values())


def test_repro_expressions_make_inputs_matched_on_the_statistics():
    torch.manual_seed(1)  # the same real values each run
    real = torch.randn(8, 6).t() * 3 + 10  # non-contiguous
    real[0, 0] = float("inf")
    meta = _meta(real)
    expr = synthetic_expr(meta)
    assert "synthetic" not in expr  # an inline expression of torch alone
    torch.manual_seed(0)
    made = eval(expr, {"torch": torch, "float": float})
    assert made.shape == real.shape and made.stride() == real.stride() and made.dtype == real.dtype
    finite = made[torch.isfinite(made)]
    assert torch.isinf(made).sum() == 1
    assert abs(float(finite.mean()) - 10) < 2
    # clamped to the recorded range on each side where it is narrower than mean -/+ 2.5 std (fx/inputs._clamped)
    mean, std = meta["mean"], meta["std"]
    assert meta["min"] <= mean - 2.5 * std or finite.min() >= meta["min"]
    assert meta["max"] >= mean + 2.5 * std or finite.max() <= meta["max"]
    (again,) = synthetic_inputs([meta])
    assert again.shape == real.shape and torch.isinf(again).any()
    assert synthetic_expr(_meta(torch.tensor([3, 7]))) == "torch.randint(3, 8, (2,))"
    assert synthetic_expr(_meta(torch.randn(8, 16))).startswith("torch.randn(8, 16)")  # no clamp where it binds not
    positive = _meta(torch.rand(64) + 0.5)  # a domain's edge (log's, sqrt's) is kept
    assert ".clamp(" in synthetic_expr(positive) and eval(synthetic_expr(positive), {"torch": torch}).min() > 0


def test_few_real_values_are_written_exactly_and_many_are_not():
    x = torch.tensor([[1.5, float("nan")], [-0.0, 1e-30]], dtype=torch.float32)
    w = torch.arange(6, dtype=torch.int64).reshape(2, 3)
    exprs = inline_exprs([x, 3], [_meta(x), {"kind": "int", "value": 3}], {"w": w}, {"w": _meta(w)})
    back = [eval(e, {"torch": torch, "float": float}) for e in exprs["inputs"]]
    assert torch.equal(back[0].isnan(), x.isnan()) and torch.equal(back[0].nan_to_num(), x.nan_to_num())
    assert back[1] == 3 and torch.equal(eval(exprs["attributes"]["w"], {"torch": torch}), w)
    big = torch.zeros(INLINE_MAX_ELEMENTS + 1)
    assert inline_exprs([big], [_meta(big)], {}, {}) is None
