"""The source passes toward what a person writes (issue 50, item 2): each is a text transform, tested here on real
scripts (the corpus's own, tests/real_bugs/, and scripts written the way its users write them) in milliseconds;
a few candidates are run eagerly to show they still compute what the script did. The last test asks the real
compiler: a candidate that changes a check or drops a seed is refused without a trial."""

import ast
import os
import pathlib

import torch

from reprokit.data.phases import Isolation
from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.source.bind import literal_name_candidates
from reprokit.source.edits import checks, seeds, simplify_candidates
from reprokit.source.flatten import flatten_module_candidates, remove_class_candidates
from reprokit.source.inline import inline_call_candidates
from reprokit.source.join import paired, return_choice_candidates
from reprokit.source.merge import merge_candidates
from reprokit.source.passes import PERSON_EDITS
from reprokit.source.reduce import source_problem
from reprokit.source.shrink import cut_loop_candidates, fold_constant_candidates, shrink_literal_candidates, source_size
from reprokit.source.trim import (
    default_argument_candidates,
    unused_attribute_candidates,
    unused_name_candidates,
    unused_parameter_candidates,
)
from reprokit.trial.runner import Runner

REAL = pathlib.Path(__file__).parent / "real_bugs"
FUNCGRAD = (REAL / "funcgrad_custom_function_ste.py").read_text()  # pytorch#193279
NESTED = (REAL / "b_nested_region_global_rebind.py").read_text()  # pytorch#191821
IDENTITY = (REAL / "d_identity_toggle_stale_branch.py").read_text()  # pytorch#196173

TRAIN = '''"""A block trained for a step, the way a user's script is laid out."""
import torch
import torch.nn as nn
from typing import Optional, Tuple

torch.manual_seed(0)
HIDDEN = 16


class Block(nn.Module):
    def __init__(self, dim, hidden=HIDDEN * 2, bias=True):
        super().__init__()
        self.proj = nn.Linear(dim, hidden, bias=bias)
        self.scale = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        h = self.proj(x) * self.scale
        return h.relu().sum(dim=-1, keepdim=False)


def make_batch(batch, dim=8):
    x = torch.randn(batch, dim, requires_grad=False)
    noise = torch.rand(batch, dim)
    return x + 0.1 * noise


model = Block(8, bias=True)
x = make_batch(4)
ref = model(x)
out = torch.compile(model, fullgraph=False)(x)
torch.testing.assert_close(out, ref)
'''


def lines(text: str) -> list:
    return [line for line in text.splitlines() if line.strip()]


def run_eagerly(text: str, name: str):
    """The value `name` has once the script's statements before its first torch.compile have run (eagerly)."""
    tree = ast.parse(text)
    head = []
    for stmt in tree.body:
        if "torch.compile" in ast.unparse(stmt):
            break
        head.append(stmt)
    namespace: dict = {"__name__": "__main__"}
    exec(compile(ast.Module(body=head, type_ignores=[]), "script", "exec"), namespace)
    return namespace[name]


def test_a_function_is_inlined_into_its_call_and_its_def_goes():
    first = inline_call_candidates(TRAIN)[0]
    assert "def make_batch" not in first
    assert lines(first)[-9:] == [
        "model = Block(8, bias=True)",
        "batch = 4",
        "dim = 8",  # the __init__'s own `dim` is its own
        "x_make_batch = torch.randn(batch, dim, requires_grad=False)",
        "noise = torch.rand(batch, dim)",
        "x = x_make_batch + 0.1 * noise",  # the callee's `x` renamed: the caller has one
        "ref = model(x)",
        "out = torch.compile(model, fullgraph=False)(x)",
        "torch.testing.assert_close(out, ref)",
    ]
    torch.testing.assert_close(run_eagerly(first, "ref"), run_eagerly(TRAIN, "ref"))


def test_a_method_is_inlined_into_the_method_that_calls_it():
    text = TRAIN.replace("        h = self.proj(x) * self.scale\n", "        h = self.project(x)\n").replace(
        "    def forward(",
        "    def project(self, x):\n        y = self.proj(x)\n        return y * self.scale\n\n    def forward(",
    )
    inlined = [c for c in inline_call_candidates(text) if "def project" not in c]
    assert len(inlined) == 1
    forward = inlined[0][inlined[0].index("def forward") :].splitlines()[1:4]
    assert forward == [
        "        y = self.proj(x)",
        "        h = y * self.scale",
        "        return h.relu().sum(dim=-1, keepdim=False)",
    ]


def test_a_module_made_once_becomes_plain_calls_that_compute_the_same():
    flat = flatten_module_candidates(TRAIN)[0]
    assert "class Block" not in flat
    assert lines(flat)[10:18] == [
        "dim = 8",
        "hidden = HIDDEN * 2",
        "bias = True",
        "proj = nn.Linear(dim, hidden, bias=bias)",
        "scale = nn.Parameter(torch.ones(hidden))",
        "def model(x):",
        "    h = proj(x) * scale",
        "    return h.relu().sum(dim=-1, keepdim=False)",
    ]
    torch.testing.assert_close(run_eagerly(flat, "ref"), run_eagerly(TRAIN, "ref"))


def test_a_class_goes_with_every_statement_that_uses_it():
    # pytorch#191821's dataclass: without it, the statements that build its state go too, and those reading them.
    gone = remove_class_candidates(NESTED)[0]
    assert "LayerState" not in gone and "torch.manual_seed(0)" in gone
    assert "state" not in gone.replace("state_", "") or "global state" in gone


def test_integer_values_are_halved_everywhere_at_once_so_shapes_still_agree():
    shrunk = shrink_literal_candidates(FUNCGRAD)
    # pytorch#193279: 16 made 1, then 8 (its weight's rows and its input's columns) halved together.
    eight = next(c for c in shrunk if "torch.randn(4, 3)" in c)
    assert "x = torch.randn(16, 4)" in eight
    assert run_eagerly(eight, "g_eager").shape == (4, 3)  # the matmul's sizes still agree
    for c in shrunk:  # the seed and the script's checks are never a candidate's
        assert "torch.manual_seed(0)" in c and checks(c) == checks(FUNCGRAD)
    assert all(source_size(c) < source_size(FUNCGRAD) for c in shrunk)


def test_a_same_length_script_with_smaller_numbers_is_smaller():
    assert source_size("x = torch.randn(8, 3)\n") < source_size("x = torch.randn(9, 3)\n")
    assert source_size("x = 1\n") < source_size("x = 9\n") < source_size("xy = 1\n")


def test_a_loop_runs_once():
    text = NESTED.replace("for i in range(num_layers)", "for i in range(4)")
    once = cut_loop_candidates(text)[0]
    assert "for i" not in once
    assert lines(once[once.index("def run_stack") :])[:5] == [
        "def run_stack(x, num_layers=3):",
        "    global state",
        "    i = 0",
        "    state = LayerState(x, 1.0 + i)",
        "    x = layer()",
    ]


# pytorch#197896 as its reduction left it (stop 60): one layer made by a comprehension over a literal, run in a loop.
PROBE_CUT = """import torch
import torch.nn as nn


def build():
    call_counts = {}

    class Probe:
        def record(self):
            call_counts["/"] = 1

    class MonitoredMLP(nn.Module):
        def __init__(self):
            super().__init__()
            dims = [1] + [1]
            self.layers = nn.ModuleList((nn.Linear(a, b) for a, b in zip(dims[:1], dims[1:])))

        def forward(self, x):
            probe = Probe()
            for layer in self.layers:
                x = layer(x)
                probe.record()
            return x

    return MonitoredMLP(), call_counts


model, counts = build()
out = model(torch.ones(1, 1))
"""


def test_a_loop_over_a_sequence_runs_once_on_its_first_item():
    (once,) = cut_loop_candidates(PROBE_CUT)
    assert [line.strip() for line in lines(once[once.index("def forward") :])[:5]] == [
        "def forward(self, x):",
        "probe = Probe()",
        "layer = self.layers[0]",
        "x = layer(x)",
        "probe.record()",
    ]
    assert run_probe(once) == run_probe(PROBE_CUT)
    # ...and then the names read once fold into their reads, as a person writes it
    merged = merge_candidates(merge_candidates(once)[0])[0]
    assert "            x = self.layers[0](x)\n            Probe().record()\n" in merged
    assert run_probe(merged) == run_probe(PROBE_CUT)


def test_a_loop_over_what_may_not_index_is_not_run_once_on_its_first_item():
    text = "def f(model, items):\n    for p in model.parameters():\n        p.zero_()\n    for k in items:\n        print(k)\n"
    (once,) = cut_loop_candidates(text)  # items, a name: proposed; a call's result (a generator here): not
    assert "k = items[0]" in once and "for p in model.parameters()" in once


def test_an_attribute_added_to_is_read():
    text = (
        "class C:\n    def __init__(self):\n        self.count = 0\n        self.spare = 1\n\n"
        "    def step(self):\n        self.count += 1\n"
    )
    (gone,) = unused_attribute_candidates(text)
    assert "self.spare" not in gone and "self.count = 0" in gone


def test_a_list_too_long_to_spell_is_not_computed():
    assert fold_constant_candidates("import torch\nx = torch.tensor([0.0] * 2 ** 30)\n") == []


def test_a_name_bound_to_a_literal_in_a_def_is_read_as_the_literal_and_python_computes_it():
    (inlined,) = literal_name_candidates(PROBE_CUT)
    assert "zip(([1] + [1])[:1], ([1] + [1])[1:])" in inlined and "dims" not in inlined
    assert "nn.ModuleList((nn.Linear(a, b) for a, b in zip([1], [1])))" in fold_constant_candidates(inlined)[0]
    assert run_probe(inlined) == run_probe(PROBE_CUT)


def run_probe(script: str) -> tuple:
    """The script's output and the probe's log, run eagerly."""
    done: dict = {}
    exec(compile(script, "candidate", "exec"), done)
    return done["out"].shape, done["counts"]


def test_an_expression_python_computes_without_torch_becomes_its_value():
    every = fold_constant_candidates(TRAIN)[0]
    assert "def __init__(self, dim, hidden=32, bias=True):" in every
    assert "HIDDEN * 2" not in every


def test_arguments_equal_to_their_default_go():
    every = default_argument_candidates(TRAIN)[0]
    assert lines(every)[-5:] == [
        "model = Block(8)",  # the script's own __init__ says bias=True
        "x = make_batch(4)",
        "ref = model(x)",
        "out = torch.compile(model)(x)",  # torch.compile's fullgraph is False
        "torch.testing.assert_close(out, ref)",
    ]
    assert "torch.randn(batch, dim)" in every and "sum(dim=-1)" in every
    # pytorch#193279 names torch.compile's own default backend.
    assert any("torch.compile(grad_fn)(w, x, target)" in c for c in default_argument_candidates(FUNCGRAD))


def test_an_imported_name_nothing_reads_goes():
    assert unused_name_candidates(TRAIN) == [
        TRAIN_UNPARSED.replace("from typing import Optional, Tuple", "from typing import Tuple"),
        TRAIN_UNPARSED.replace("from typing import Optional, Tuple", "from typing import Optional"),
    ]


TRAIN_UNPARSED = ast.unparse(ast.parse(TRAIN)) + "\n"

# pytorch#188422 as its share of time left it (stop 60): its cuts had emptied the forward of q, kv and both norms,
# and of F's one call; each is still made in __init__.
SEGFORMER_CUT = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class EfficientSelfAttention(nn.Module):
    def __init__(self, dim=1):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 1 * dim)
        self.sr = nn.Conv2d(dim, dim, kernel_size=1, stride=1)
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens, h, w):
        b, n, c = tokens.shape
        return self.sr(tokens.transpose(1, 2).reshape(b, c, h, w)).flatten(1)

class TinySegformerStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 8, kernel_size=1, stride=2, padding=1)
        self.norm = nn.LayerNorm(1)
        self.attn = EfficientSelfAttention(8)

    def forward(self, img):
        x = self.patch(img)
        b, c, h, w = x.shape
        return self.attn(x.flatten(2).transpose(1, 2), h, w)
out = TinySegformerStage()(torch.randn(2, 3, 12, 12))
"""


def test_an_attribute_nothing_reads_goes_all_at_once_first_then_each_alone():
    proposed = unused_attribute_candidates(SEGFORMER_CUT)
    gone = ["self.q = ", "self.kv = ", "self.norm = nn.LayerNorm(dim)", "self.norm = nn.LayerNorm(1)"]
    assert len(proposed) == 1 + len(gone)
    assert not any(g in proposed[0] for g in gone) and "self.sr = " in proposed[0] and "self.attn = " in proposed[0]
    assert [[g for g in gone if g not in c] for c in proposed[1:]] == [[g] for g in gone]
    # the same computation: the submodules that went were never called (their weights drew from the seed, so the
    # values differ; the shapes and the graph do not)
    done: dict = {}
    exec(compile(proposed[0], "candidate", "exec"), done)
    assert done["out"].shape == (2, 392)
    # an attribute read by name (getattr) may be any: none is proposed
    assert unused_attribute_candidates(SEGFORMER_CUT + "print(getattr(TinySegformerStage(), 'norm'))\n") == []


def test_an_import_whose_one_name_nothing_reads_goes():
    assert "import torch.nn.functional as F" not in unused_name_candidates(SEGFORMER_CUT)[0]
    assert unused_name_candidates(TRAIN_UNPARSED.replace("from typing import Optional, Tuple", "import typing")) == [
        TRAIN_UNPARSED.replace("from typing import Optional, Tuple\n", "")
    ]


def test_a_parameter_the_def_never_reads_goes_with_its_argument_at_every_call():
    # pytorch#193279 as its reduction left it: the loss no longer reads x nor target, and it is called through
    # torch.func.grad's wrapper, eagerly and compiled in place.
    text = (
        FUNCGRAD[: FUNCGRAD.index("def quant_loss")]
        + "def quant_loss(w, x, target):\n    return RoundSTE.apply(w).mean()\n\n\n"
        + "grad_fn = torch.func.grad(quant_loss)\nw = torch.randn(8, 3)\nx = 16\ntarget = 16\n"
        + "torch.testing.assert_close(torch.compile(grad_fn)(w, x, target), grad_fn(w, x, target))\n"
    )
    no_x = unused_parameter_candidates(text)[0]
    assert lines(no_x)[-7:] == [
        "def quant_loss(w, target):",
        "    return RoundSTE.apply(w).mean()",
        "grad_fn = torch.func.grad(quant_loss)",
        "w = torch.randn(8, 3)",
        "x = 16",  # now read by nothing: tidy's dead assignments take it
        "target = 16",
        "torch.testing.assert_close(torch.compile(grad_fn)(w, target), grad_fn(w, target))",
    ]
    assert run_eagerly(no_x, "grad_fn")(torch.ones(2), 0).tolist() == [0.5, 0.5]


PROBE = """import torch
counts = {}


def build(dim=4):
    class Probe:
        def __init__(self, tag, scale=2):
            self.scale = scale

        def record(self, name, t):
            counts["x"] = t.sum() * self.scale

    probe = Probe("mlp", scale=3)
    probe.record("x", torch.ones(dim))
    return probe


build()
"""


def test_a_parameter_a_method_never_reads_goes_with_its_argument_at_every_call():
    # pytorch#197896's repro as its reduction left it: a class inside a function, an __init__ that keeps no tag,
    # a method that reads its tensor but not its name.
    proposed = unused_parameter_candidates(PROBE)
    no_tag = next(c for c in proposed if "def __init__(self, scale=2):" in c)
    assert "probe = Probe(scale=3)" in no_tag
    no_name = next(c for c in proposed if "def record(self, t):" in c)
    assert "probe.record(torch.ones(dim))" in no_name
    assert len(proposed) == 2
    for candidate in proposed:
        namespace: dict = {}
        exec(compile(candidate, "probe", "exec"), namespace)
        assert namespace["counts"]["x"].item() == 12.0  # what the script computed


def test_an_assignment_read_once_is_merged_into_its_read():
    # pytorch#193279's loss: `pred` is read once, by the next statement.
    merged = merge_candidates(FUNCGRAD)
    assert any("return ((x @ RoundSTE.apply(w) - target) ** 2).mean()" in c for c in merged)
    for c in merged:
        assert checks(c) == checks(FUNCGRAD) and seeds(c) == seeds(FUNCGRAD)


def test_an_assignment_is_merged_into_its_one_read_in_its_own_scope_and_a_loops_iterable():
    # pytorch#197896 as its reduction left it: `x` is also the forward's parameter, another def's variable.
    text = (
        "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        x = x + 1\n        return x\n\n\n"
        "def run(compile_it):\n    model = M()\n    fwd = torch.compile(model) if compile_it else model\n"
        "    x = torch.randn(1, 1)\n    fwd(x)\n\n\nrun(False)\n"
    )
    assert any("    fwd(torch.randn(1, 1))" in c and "x = torch.randn" not in c for c in merge_candidates(text))
    # pytorch#196173's tail as its reduction left it: a loop's iterable is computed once, so the compiled history
    # goes into it, but the eager one does not move past a seed (it would draw after `torch.manual_seed(0)`)
    tail = IDENTITY[: IDENTITY.index("torch.manual_seed(0)\nref_hist")] + (
        "torch.manual_seed(0)\nref_hist = run(update)[0]\ntorch.manual_seed(0)\n"
        "cmp_hist = run(torch.compile(update, backend='eager'))[0]\n"
        "for r, c in zip(ref_hist, cmp_hist):\n    if not torch.allclose(r, c):\n        sys.exit(1)\n"
    )
    merged = [c[c.index("ref_hist = ") :] for c in merge_candidates(tail)]
    assert "for r, c in zip(ref_hist, run(torch.compile(update, backend='eager'))[0]):" in merged[0]
    assert not any("zip(run(update)" in c for c in merged)


def test_an_if_that_returns_and_the_return_after_it_become_one_return():
    (choice,) = return_choice_candidates(IDENTITY)
    assert "    return weights - 0.1 * grads if on_even else weights * 0.99 - 0.01 * grads\n" in choice
    assert steps(choice) == steps(IDENTITY)


def test_two_alike_assignments_become_one_and_unlike_ones_stay_apart():
    both = paired(IDENTITY)  # polish's: once, on the verified text
    assert "        self.even, self.odd = (PhaseConfig('even', 0.1), PhaseConfig('odd', 0.01))\n" in both
    assert "    w, g = (torch.randn(8), torch.randn(8))\n" in both
    assert "sched, w" not in both and "g, history" not in both
    assert steps(both) == steps(IDENTITY)


def steps(script: str) -> list:
    """The script's eager run of its update steps (its defs, then run(update)), as lists of floats."""
    defs: dict = {}
    exec(compile(script[: script.index("ref_hist, ref_phase")], "candidate", "exec"), defs)
    torch.manual_seed(0)
    history, phase = defs["run"](defs["update"])
    return [t.tolist() for t in history] + [phase]


def test_every_pass_keeps_the_scripts_seeds_and_checks():
    for script in (TRAIN, FUNCGRAD, NESTED):
        for name, propose, _ in PERSON_EDITS:
            for c in propose(script):
                compile(c, name, "exec")
                assert seeds(c) == seeds(script), (name, c)
                assert all(checks(c)[k] <= checks(script)[k] for k in checks(c)), (name, c)


def test_sub_expression_swaps_that_never_keep_a_failure_are_not_proposed():
    """Each of these was an oracle call in every round of funcgrad's reduction (#193279), never a hit."""
    proposed = simplify_candidates(FUNCGRAD)
    assert not any("torch.Function" in c or "torch.grad(" in c or "torch.assert_close" in c for c in proposed)
    assert not any(line in c.splitlines() for line in ("w = 8", "w = 3", "x = 16", "target = 3") for c in proposed)
    # The swaps a person makes are still there: the grad transform dropped, a product made one factor.
    assert any("grad_fn = quant_loss" in c.splitlines() for c in proposed)
    assert any("pred = x\n" in c or "pred = RoundSTE.apply(w)" in c for c in proposed)


SCORE = """import torch
torch.manual_seed(0)

@torch.compile(fullgraph=True)
def score(x):
    y = x.sin()
    if y.sum() > 0:
        return y.cos()
    return y
x = torch.randn(8)
out = score(x)
assert out.isfinite().all()
"""


def test_a_candidate_that_changes_a_check_or_drops_a_seed_is_refused_without_a_trial(tmp_path):
    """On the real compiler: a data-dependent branch under fullgraph=True (Dynamo's Unsupported)."""
    run = RunDir(str(tmp_path / "run"))
    os.makedirs(run.path)
    run.write_json("run.json", {"options": {"cwd": str(tmp_path)}})
    runner = Runner(run, timeout=300, warm_scripts=True)
    try:
        script = tmp_path / "score.py"
        script.write_text(SCORE)
        original = runner(TrialSpec(mode="script", stage="eager", script=str(script), cwd=str(tmp_path)))
        v = Isolation(script=str(script), signature=original.signature.to_dict())
        problem = source_problem(run, v, runner, SCORE, "eager", cwd=str(tmp_path))
        assert problem.test(SCORE)
        asked = runner.executed
        assert not problem.test(SCORE.replace(".all()", ".any()").replace("randn(8)", "randn(1)"))  # a check changed
        assert not problem.test(SCORE.replace("torch.manual_seed(0)\n", ""))  # the seed dropped
        assert not problem.test(SCORE.replace("@torch.compile(fullgraph=True)\n", ""))  # nothing left to compile
        assert runner.executed == asked
        # The pass's own candidate leaves the check alone: it runs, and fails the same way with one element.
        shrunk = shrink_literal_candidates(SCORE)
        assert problem.first_failing(shrunk) == 0 and "x = torch.randn(1)" in problem.best
    finally:
        runner.close()
