# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "inductor compile error", "issue": 194706, "repro_kinds": ["graph"], "max_nodes": 40, "max_lines": 30, "isa": ["avx2", "avx512f"]}
# pytorch/pytorch#194706: Inductor CPU backend emits error when calculating gradients
# CLASS: inductor compile error
# WHY: forward-mode Jacobian (jacfwd) of a small fp16 matmul chain makes the CPU C++ codegen declare the same reduction store variable twice (`conflicting declaration 'auto at_Half_tmp_acc1_vec'`), so g++ fails
# ISA: needs a vectorized CPU ISA (fails with AVX-512 and with ATEN_CPU_CAPABILITY=avx2; passes with ATEN_CPU_CAPABILITY=default, i.e. scalar codegen)
import torch

torch.manual_seed(0)


def energy(x):
    # scalar "energy" of a 3x3 half-precision matrix
    # the two `torch.sum(x) + x` terms are written out separately, as in the issue
    return torch.sum(torch.mm(torch.mm(torch.prod(x) + x, torch.sum(x) + x), torch.sum(x) + x))


def jacobian(x):
    return torch.func.jacfwd(energy)(x)


x = (torch.arange(1, 10, dtype=torch.float16) / 10).reshape(3, 3)

expected = jacobian(x)
compiled = torch.compile(jacobian)
got = compiled(x)

assert got.shape == expected.shape == (3, 3), got.shape
torch.testing.assert_close(got.float(), expected.float(), rtol=2e-2, atol=2.0)
print("jacobian ok:", got)
