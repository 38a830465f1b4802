# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "cpp_compile_error", "issue": 197106, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 6, "max_lines": 30, "op": "aten.sum", "isa": ["avx512f"]}
# pytorch/pytorch#197106: [inductor] sum(..., dtype=torch.bool) over a float16 tensor fails C++ compilation on CPU
# CLASS: cpp_compile_error
# WHY: the CPU reduction codegen emits sum_masked_reduce for a bool accumulator, which has no bool overload -> InductorError: CppCompileError: C++ compile error
import torch
import torch.nn as nn


class SignalGate(nn.Module):
    """Flags which fp16 feature maps carry any non-zero signal, then gates them."""

    def __init__(self, channels):
        super().__init__()
        self.proj = nn.Linear(channels, channels).half()

    def forward(self, feats):
        feats = torch.relu(feats)
        # "is there any non-zero value?" folded as a bool sum
        has_signal = feats.sum(dim=(1, 2), dtype=torch.bool)
        out = self.proj(feats.mean(dim=1))
        return out * has_signal.unsqueeze(-1).to(out.dtype), has_signal


def main():
    torch.manual_seed(0)
    model = SignalGate(16).eval()
    feats = torch.randn(4, 7, 16).half()
    feats[2] = -1.0  # relu makes this sample all zeros

    with torch.no_grad():
        ref_out, ref_flag = model(feats)
        got_out, got_flag = torch.compile(model)(feats)

    print("flags eager:", ref_flag.tolist(), "compiled:", got_flag.tolist())
    torch.testing.assert_close(got_flag, ref_flag)
    torch.testing.assert_close(got_out, ref_out, rtol=1e-2, atol=1e-2)
    print("OK")


if __name__ == "__main__":
    main()
