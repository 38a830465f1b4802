"""The prelude: the statements of a script that a captured graph needs elsewhere (custom ops, hooks)."""

from reprokit.fx.prelude import prelude_for

SCRIPT = """\
import torch
import numpy as np
from _blocks import model
from torch._inductor import config as ic

@torch.library.custom_op("rk::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return helper(x) * SCALE

SCALE = 2

def helper(x):
    return x.clone()

@scale.register_fake
def _(x):
    return torch.empty_like(x)

def my_pass(graph):
    return None

def unrelated():
    return np.zeros(3)

ic.post_grad_custom_post_pass = my_pass
m = model()
out = torch.compile(lambda t: scale(t).sin())(torch.randn(4))
if __name__ == "__main__":
    print(out)
"""


def test_prelude_carries_registrations_hooks_and_what_they_use():
    text = prelude_for(SCRIPT, hook_names=["my_pass"], op_namespaces=["rk"])
    namespace: dict = {}
    exec(compile(text, "<prelude>", "exec"), namespace)  # runs standalone: the op exists afterwards
    import torch

    assert torch.equal(torch.ops.rk.scale(torch.ones(2)), torch.full((2,), 2.0))
    assert '@torch.library.custom_op("rk::scale"' in text and "@scale.register_fake" in text
    assert "def helper" in text and "SCALE = 2" in text and "def my_pass" in text
    assert "ic.post_grad_custom_post_pass = my_pass" in text
    # what runs the model, local modules, unused imports and the main guard stay behind
    for absent in ("model()", "_blocks", "numpy", "unrelated", "torch.compile", "__main__"):
        assert absent not in text, absent


def test_no_prelude_when_the_script_registers_nothing():
    assert prelude_for("import torch\nprint(torch.compile(lambda x: x)(torch.ones(1)))\n") is None
    assert prelude_for("def broken(:\n") is None
