"""The lowering bisection's first guesses, read from what a failing trial recorded (texts from a real run)."""
import json

from reprokit.bisect.guess import lowering_guesses
from reprokit.data.records import Outcome, Signature

# The tail of a real failing trial's stderr (relu_runtime_error.py, torch 2.13 CPU).
STDERR = '''  File "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/_inductor/output_code.py", line 763, in __call__
    return self.current_callable(inputs)
  File "/tmp/sp1/artifacts/run/cache/inductor/d5/cd52w5bml6kl2dxy7la6zs3724ugjbouz4ftgihfvsplefmf6x7w.py", line 849, in call
    cpp_fused_mul_relu_sigmoid_1(buf5, buf6)
RuntimeError: unhandled error
'''
OPS = ["aten.addmm.default", "aten.mul.default", "aten.addmm.default", "aten.sigmoid.default",
       "aten.relu.default", "aten.mul.default", "aten.relu.default"]


def _trial(tmp_path, stderr, ops):
    (tmp_path / "stderr.txt").write_text(stderr)
    (tmp_path / "state.json").write_text(json.dumps({"lowering_ops": ops}))
    return Outcome(kind="exception", signature=Signature(kind="exception"), seconds=1.0, trial_dir=str(tmp_path))


def test_the_first_application_of_each_op_in_the_raising_kernel(tmp_path):
    assert lowering_guesses(_trial(tmp_path, STDERR, OPS)) == [1, 3, 4]


def test_no_kernel_named_means_no_guess(tmp_path):
    assert lowering_guesses(_trial(tmp_path, "AssertionError: Tensor-likes are not close!\n", OPS)) == []
