# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "input mutation", "issue": 198270, "repro_kinds": ["graph", "graph_in_script", "source"], "max_nodes": 10, "max_lines": 25}
# pytorch/pytorch#198270: [inductor] x.index_put_(...) followed by x.add_(x.flip(0)): the copy back into x is fused with a read of x at other positions (silent wrong results, CUDA and CPU)
# CLASS: input mutation
# WHY: inductor fuses the write-back of the index_put_ into x with the later in-place add that reads x.flip(0), so some rows read stale/new values in the wrong order
import torch

torch.manual_seed(0)


def symmetrize_rows(x):
    rows = torch.arange(x.size(0))
    x.index_put_((rows,), x * 2.0)   # scale every row in place
    x.add_(x.flip(0))                # then add the row-reversed tensor in place
    return x


x0 = torch.rand(4, 8)
expected = symmetrize_rows(x0.clone())
got = torch.compile(symmetrize_rows, backend="inductor")(x0.clone())
print("wrong elements:", int((got != expected).sum()), "of", got.numel())
torch.testing.assert_close(got, expected, msg=lambda m: "compiled in-place update sequence is wrong:\n" + m)
print("OK")
