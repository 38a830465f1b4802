# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "accuracy", "issue": 198133, "repro_kinds": ["graph", "graph_in_script"], "max_nodes": 8, "max_lines": 30, "op": "erfinv"}
# pytorch/pytorch#198133: [inductor][cpu] `torch.erfinv` loses accuracy near ±1 under `torch.compile`
# CLASS: accuracy
# WHY: inductor's C++ codegen uses calc_erfinv (rational guess + Newton steps that cancel near ±1), so float64 tail quantiles lose ~5 digits vs eager
import torch

torch.manual_seed(0)


def normal_quantile(p):
    # probit: Phi^-1(p) = sqrt(2) * erfinv(2p - 1)
    return torch.erfinv(2.0 * p - 1.0) * (2.0 ** 0.5)


# probabilities in the far upper tail (float64)
p = torch.tensor([0.9995, 1 - 5e-10, 1 - 5e-13, 1 - 5e-15, 1 - 1e-16], dtype=torch.float64)
p = torch.cat([p, torch.rand(16, dtype=torch.float64) * 0.9])

# accurate float64 reference: Phi^-1(p) = -ndtri(1 - p) and 1 - p is exact here
ref = -torch.special.ndtri(1.0 - p)

eager = normal_quantile(p)
compiled = torch.compile(normal_quantile, backend="inductor")(p)

eager_err = ((eager - ref).abs() / ref.abs().clamp_min(1e-300)).max().item()
comp_err = ((compiled - ref).abs() / ref.abs().clamp_min(1e-300)).max().item()
print(f"max rel err vs reference: eager={eager_err:.3e} compiled={comp_err:.3e}")
assert eager_err < 1e-9, "eager itself is inaccurate?"
torch.testing.assert_close(compiled, eager, rtol=1e-9, atol=0.0,
                           msg=lambda m: "compiled probit differs from eager in float64:\n" + m)
print("OK")
