# EXPECT = {"failing_stage": "aot_eager", "kinds": ["exception"], "class": "input mutation", "issue": 198102, "repro_kinds": ["graph"], "max_nodes": 6, "max_lines": 25}
# pytorch/pytorch#198102: [functionalization] In-place mutation through a gapped unfold view (step > size) silently zeroes every base element not covered by a window under torch.compile
# CLASS: input mutation
# WHY: functionalization's unfold view-replay rebuilds the base from the mutated windows only, so columns between windows (not covered when step > size) become 0
import torch

torch.manual_seed(0)


def boost_every_fifth_frame(signal):
    # signal: (batch, time). Scale frames 0, 5, 10, ... in place through a strided window view
    frames = signal.unfold(1, 1, 5)       # windows of length 1, step 5 -> gaps between windows
    frames.mul_(2.0)
    return signal


x = torch.randn(4, 12)
expected = boost_every_fifth_frame(x.clone())

compiled_fn = torch.compile(boost_every_fifth_frame, backend="inductor")
got = compiled_fn(x.clone())

# untouched frames must keep their original values
untouched = torch.ones(12, dtype=torch.bool)
untouched[::5] = False
print("untouched columns, max |compiled - original|:",
      (got[:, untouched] - x[:, untouched]).abs().max().item())
torch.testing.assert_close(got, expected, msg=lambda m: "compiled in-place unfold update is wrong:\n" + m)
print("OK")
