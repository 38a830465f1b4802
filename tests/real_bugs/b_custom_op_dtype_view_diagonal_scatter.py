# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "custom op", "issue": 197408, "repro_kinds": ["graph_in_context", "graph", "graph_in_script", "source"], "max_nodes": 10, "max_lines": 35}
# pytorch/pytorch#197408: [Inductor] dtype-view custom op followed by diagonal_scatter returns wrong values and aliases input
# CLASS: custom op
# WHY: a mutating torch.library.custom_op applied to a float32 .view() of an int32 buffer, followed by diagonal_scatter, is mis-reinplaced by inductor: the diagonal comes back as 0 instead of `diag`, and the returned tensor aliases the input buffer
import torch

torch.manual_seed(0)


@torch.library.custom_op("b_packed::scale_", mutates_args={"x"})
def scale_(x: torch.Tensor) -> None:
    x.mul_(2.0)


def update_packed(state, diag):
    # `state` is an int32 buffer that really holds float32 bits
    w = state.view(torch.float32)
    scale_(w)
    out = torch.diagonal_scatter(w, diag)
    state.copy_(out.view(torch.int32))
    return out


base = torch.randn(4, 4)
diag = torch.randn(4)

state_ref = base.view(torch.int32).clone()
state_cmp = state_ref.clone()

ref = update_packed(state_ref, diag)
got = torch.compile(update_packed, fullgraph=True)(state_cmp, diag)

torch.testing.assert_close(got, ref)
torch.testing.assert_close(torch.diagonal(got), diag)
assert torch.equal(state_cmp, state_ref), "packed state differs from eager"
assert got.untyped_storage().data_ptr() != state_cmp.untyped_storage().data_ptr(), \
    "result aliases the input buffer"
print("ok")
