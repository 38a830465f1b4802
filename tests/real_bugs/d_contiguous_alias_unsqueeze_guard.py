# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "class": "guard_creation_crash", "issue": 198100, "repro_kinds": ["graph", "graph_in_context", "graph_in_script", "source"], "max_nodes": 12, "max_lines": 20}
# pytorch/pytorch#198100: [dynamo] unsqueeze_ through the no-op alias returned by x.contiguous() crashes guard creation
# CLASS: guard_creation_crash
# WHY: x.contiguous() returns x itself, Dynamo misses that unsqueeze_ on it changes the input's rank, and producing shape guards dies with IndexError: list index out of range
import torch

torch.manual_seed(0)


def add_channel_dim_(frames):
    # Make sure the buffer is dense, then give it a trailing channel dim in place.
    # For an already-contiguous tensor, .contiguous() hands back the same object,
    # so this mutates the caller's tensor (that is what we want here).
    buf = frames.contiguous()
    buf.unsqueeze_(2)
    return frames


def preprocess(frames, gain):
    frames = add_channel_dim_(frames)
    return frames * gain


compiled_preprocess = torch.compile(preprocess, backend="eager")

frames = torch.randn(4, 6)
gain = torch.tensor(0.5)

expected = preprocess(frames.clone(), gain)
actual = compiled_preprocess(frames.clone(), gain)

assert actual.shape == (4, 6, 1), actual.shape
torch.testing.assert_close(actual, expected)

# the caller's tensor must carry the new channel dim as well
frames_c = frames.clone()
compiled_preprocess(frames_c, gain)
assert frames_c.shape == (4, 6, 1), frames_c.shape
print("OK")
