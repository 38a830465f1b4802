"""The lowering bisection's first guesses, read from what a failing trial recorded (texts from a real run)."""

import json

from reprokit.bisect.guess import lowering_guesses
from reprokit.data.records import Outcome
from reprokit.data.signature import Signature

# The tail of a real failing trial's stderr (relu_runtime_error.py, torch 2.13 CPU); MODULE is where inductor wrote
# the generated module.
STDERR = """  File "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/_inductor/output_code.py", line 763, in __call__
    return self.current_callable(inputs)
  File "MODULE", line 3, in call
    cpp_fused_mul_relu_sigmoid_1(buf5, buf6)
RuntimeError: unhandled error
"""
# faulthandler's dump of a real crash (cnn_runtime_error.py: the kernel aborts), most recent call first.
CRASH = """Fatal Python error: Aborted

Current thread 0x00007f3c (most recent call first):
  File "MODULE", line 3 in call
  File "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/torch/_inductor/output_code.py", line 763 in __call__
"""
GENERATED = "def call(args):\n    buf5 = empty()\n    cpp_fused_mul_relu_sigmoid_1(buf5, buf6)\n"
OPS = [
    "aten.addmm.default",
    "aten.mul.default",
    "aten.addmm.default",
    "aten.sigmoid.default",
    "aten.relu.default",
    "aten.mul.default",
    "aten.relu.default",
]


def _trial(tmp_path, stderr, ops):
    module = tmp_path / "cache" / "inductor" / "d5" / "cd52w5bml6kl.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(GENERATED)
    (tmp_path / "stderr.txt").write_text(stderr.replace("MODULE", str(module)))
    (tmp_path / "state.json").write_text(json.dumps({"lowering_ops": ops}))
    return Outcome(kind="exception", signature=Signature(kind="exception"), seconds=1.0, trial_dir=str(tmp_path))


def test_the_first_application_of_each_op_in_the_raising_kernel(tmp_path):
    assert lowering_guesses(_trial(tmp_path, STDERR, OPS)) == [1, 3, 4]


def test_a_crash_is_traced_to_the_kernel_its_stack_dump_stops_in(tmp_path):
    assert lowering_guesses(_trial(tmp_path, CRASH, OPS)) == [1, 3, 4]


def test_no_kernel_named_means_no_guess(tmp_path):
    assert lowering_guesses(_trial(tmp_path, "AssertionError: Tensor-likes are not close!\n", OPS)) == []


# Excerpts of a real compile-error trial (relu_compile_error.py): the output code TORCH_LOGS printed, then g++'s error
# quoting the line of the kernel it could not compile, then (as g++ does) warnings.
COMPILE_ERROR = (
    """V1123 02:54:35.847000 28135 site-packages/torch/_inductor/graph.py:2722] [0/0] [__output_code] cpp_fused_native_layer_norm_0 = async_compile.cpp_pybinding(['float*', 'float*'], r\'\'\'
                    auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
\'\'\')
cpp_fused_mul_relu_sigmoid_1 = async_compile.cpp_pybinding(['const float*', 'float*'], r\'\'\'
                    auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
                    auto tmp1 = compile error!;
\'\'\')
torch._inductor.exc.InductorError: CppCompileError: C++ compile error
Output:
/cache/inductor/kj/ckjsh.main.cpp: In function 'void kernel(const float*, float*)':
/cache/inductor/kj/ckjsh.main.cpp:15:33: error: 'compile' was not declared in this scope
   15 |                     auto tmp1 = compile error!;
      |                                 ^~~~~~~
"""
    + "vec512_qint.h:244:7: warning: overflow in conversion from 'int' to 'char'\\n" * 200
)


def test_a_compile_error_is_traced_to_the_kernel_whose_source_it_quotes(tmp_path):
    assert lowering_guesses(_trial(tmp_path, COMPILE_ERROR, OPS)) == [1, 3, 4]


# Where the failing trial's dump was cut short (the planted kernel aborts in two OpenMP threads at once; a real
# graph-stage trial of the example, torch 2.13 CPU), another run that failed the same way names the kernel.
CUT_SHORT = """terminate called after throwing an instance of 'int'
terminate called after throwing an instance of 'int'
Fatal Python error: Aborted

Current thread 0x00007f6cd1a17b80"""


def test_a_dump_cut_short_is_read_from_another_run_that_failed_the_same_way(tmp_path):
    cut = _trial(tmp_path / "graph-stage", CUT_SHORT, OPS)
    assert lowering_guesses(cut) == []
    original = _trial(tmp_path / "original", CRASH, OPS)
    assert lowering_guesses(cut, [None, original]) == [1, 3, 4]
