# EXPECT = {"failing_stage": "aot_eager", "kinds": ["crash"], "issue": 197086, "repro_kinds": ["graph", "graph_in_context", "graph_in_script", "source"], "max_nodes": 13, "max_lines": 30, "class": "AOT autograd (fails with backend=\"aot_eager\"; eager backend and inductor are fine), hard crash (SIGSEGV)"}
# pytorch/pytorch#197086: [aot_autograd] process crash (access violation) when torch.func.jvp over torch.ldexp is compiled with backend="aot_eager"
# CLASS: AOT autograd (fails with backend="aot_eager"; eager backend and inductor are fine), hard crash (SIGSEGV)
# WHY: AOTAutograd mishandles ldexp's forward-mode dual tensors under functorch jvp, and the interpreter dies with a segfault instead of a Python error
import torch

torch.manual_seed(0)

# fixed-point "quantiser": scale each weight by 2**exponent
exponents = torch.randint(-3, 3, (3, 4)).float()


def quantise(w):
    return torch.ldexp(w, exponents)


def sensitivity(w, direction):
    # directional derivative of the quantised weights along `direction`
    out, tangent = torch.func.jvp(quantise, (w,), (direction,))
    return out, tangent


w = torch.randn(3, 4)
d = torch.randn(3, 4)

ref_out, ref_tan = sensitivity(w, d)
compiled = torch.compile(sensitivity, backend="aot_eager")
out, tan = compiled(w, d)

torch.testing.assert_close(out, ref_out)
torch.testing.assert_close(tan, ref_tan)
print("OK")
