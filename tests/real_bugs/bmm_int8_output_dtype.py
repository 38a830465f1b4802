# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "accuracy", "issue": 191308, "repro_kinds": ["graph", "graph_in_script"], "max_nodes": 4, "max_lines": 25, "op": "bmm"}
# pytorch/pytorch#191308 (fix PR #191324): [Inductor] CPU bmm mul+sum decomposition leaks int64 accumulator dtype for integer inputs
# CLASS: accuracy
# WHY: for M==1 or N==1 the CPU bmm lowering becomes broadcast-mul + sum; for int8 the sum stays int64, so the output dtype (and wrap-around values) differ from eager int8 bmm
import torch

torch.manual_seed(0)


def int8_scores(q, k):
    # q: (B, 1, D) int8 query, k: (B, D, N) int8 keys -> (B, 1, N) int8 scores (eager wraps modulo 256)
    return torch.bmm(q, k)


q = torch.randint(-8, 8, (4, 1, 16), dtype=torch.int8)
k = torch.randint(-8, 8, (4, 16, 10), dtype=torch.int8)

eager = int8_scores(q, k)
compiled = torch.compile(int8_scores, backend="inductor")(q, k)
print("eager dtype:", eager.dtype, " compiled dtype:", compiled.dtype)
print("eager   :", eager[0, 0, :6].tolist())
print("compiled:", compiled[0, 0, :6].tolist())
torch.testing.assert_close(compiled, eager, rtol=0, atol=0,
                           msg=lambda m: "compiled int8 bmm result differs from eager:\n" + m)
print("OK")
