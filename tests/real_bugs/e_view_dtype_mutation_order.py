# EXPECT = {"failing_stage": "inductor", "kinds": ["exception", "accuracy"], "issue": 198101, "repro_kinds": ["graph", "graph_in_context", "graph_in_script", "source"], "max_nodes": 8, "max_lines": 30, "class": "inductor wrong-result (accuracy), script has several graphs (graph break)"}
# pytorch/pytorch#198101: [inductor] Consumer of a dtype view of an input is computed after a later in-place mutation of that input (y = x.view(int32) * 2; y.sub_(-4); x[:, 2:5] = 2; return y.view(int64))
# CLASS: inductor wrong-result (accuracy), script has several graphs (graph break)
# WHY: GraphLowering.mark_buffer_mutated realizes users of the mutated input but not users of buffers that alias it (the aten.view.dtype fallback), so the pointwise consumer is computed after x[:, 2:5] = 2 and reads post-mutation values
import torch

torch.manual_seed(0)


def encode_keys(keys):
    # keys: packed int64 feature ids, reinterpreted as (lo, hi) int32 pairs
    halves = keys.view(torch.int32) * 2
    halves.sub_(-4)
    # reset the "masked" feature slots of the shared key buffer for the next batch
    keys[:, 2:5] = 2
    return halves.view(torch.int64)


def pipeline(keys):
    enc = encode_keys(keys)
    print("encoded batch of", enc.shape[0])  # graph break: logging between stages
    checksum = (enc % 1000003).sum(dim=1)
    return enc, checksum


keys = torch.arange(-12, 12, dtype=torch.int64).reshape(4, 6)

ref_enc, ref_sum = pipeline(keys.clone())
compiled = torch.compile(pipeline)
out_enc, out_sum = compiled(keys.clone())

print("eager   :", ref_enc[0].tolist())
print("compiled:", out_enc[0].tolist())
assert torch.equal(out_enc, ref_enc), "compiled encoding differs from eager"
assert torch.equal(out_sum, ref_sum), "compiled checksum differs from eager"
print("OK")
