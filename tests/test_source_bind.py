"""The passes that drop names and values a repro does without (issue 50, item 2), on the corpus's own scripts
(tests/real_bugs/) and in milliseconds: a name that renames another, a parameter no call gives, an attribute set
once to a literal, a def that only forwards, a `with`, a tuple element nobody reads, and a check's `or` part."""

import ast
import pathlib

import torch

from reprokit.source import bind
from reprokit.source.collect import collection_candidates, enumerate_candidates
from reprokit.source.edits import checks
from reprokit.source.flatten import flatten_module_candidates
from reprokit.source.layers import forward_parameter_candidates, layer_candidates
from reprokit.source.merge import merge_candidates
from reprokit.source.unpack import tuple_element_candidates

REAL = pathlib.Path(__file__).parent / "real_bugs"


def real(name: str) -> str:
    return (REAL / name).read_text()


def lines(source: str) -> list:
    return ast.unparse(ast.parse(source)).splitlines()


def test_a_name_that_only_renames_another_is_read_as_that_one_and_goes():
    script = "import torch\n\ndef step(a, b):\n    da = a\n    return da * b + da\n\nprint(step(torch.ones(2), 3))\n"
    (candidate,) = bind.alias_candidates(script)
    assert "    return a * b + a" in lines(candidate) and "da = a" not in candidate
    assert torch.equal(_value(candidate, "step(torch.ones(2), 3)"), _value(script, "step(torch.ones(2), 3)"))


def test_a_name_bound_twice_is_not_an_alias():
    script = "def f(a):\n    da = a\n    da = da + 1\n    return da\n"
    assert bind.alias_candidates(script) == []


def test_a_parameter_no_call_gives_becomes_its_default():
    """pytorch#166525's IterativeRefiner() is made with its defaults: `steps` reads 3 where it was read."""
    script = real("e_while_loop_int_carry.py")
    candidates = bind.param_default_candidates(script)
    steps = [c for c in candidates if "def __init__(self, dim=4):" in c]
    assert steps and "        self.steps = 3" in lines(steps[0])
    assert any("def __init__(self, steps=3):" in c for c in candidates)


def test_a_parameter_a_call_gives_stays():
    script = "def f(x, k=2):\n    return x * k\n\nprint(f(1, 3), f(2))\n"
    assert bind.param_default_candidates(script) == []


def test_an_attribute_set_once_to_a_literal_is_read_as_it():
    """pytorch#195422's dropout probability: `self.p = 0.1` read as 0.1, the assignment gone."""
    (candidate,) = bind.attribute_constant_candidates(real("dropout_eval_inplace_alias.py"))
    assert "self.p" not in candidate and "F.dropout(h, 0.1, self.training)" in candidate


def test_an_attribute_read_from_outside_its_class_stays():
    script = "class C:\n    def __init__(self):\n        self.p = 1\n\nprint(C().p)\n"
    assert bind.attribute_constant_candidates(script) == []


def test_a_def_that_only_forwards_is_replaced_by_what_it_calls():
    """pytorch#139707 registers `tanh_autograd_cpu`, which only calls NumpyTanh.apply."""
    (candidate,) = bind.forwarder_candidates(real("b_aten_autogradcpu_override_fake.py"))
    assert "def tanh_autograd_cpu" not in candidate
    assert "_lib.impl('tanh', NumpyTanh.apply, 'AutogradCPU')" in lines(candidate)


def test_a_with_goes_and_so_does_each_of_its_items():
    """pytorch#192872 runs both models under no_grad, which the failure may not need."""
    (candidate,) = bind.unwrap_with_candidates(real("e_local_class_attr_graph_break.py"))
    assert "no_grad" not in candidate and "ref, ref_n = model(x)" in lines(candidate)
    both = "import torch\nwith torch.no_grad(), torch.enable_grad():\n    y = 1\n"
    assert len(bind.unwrap_with_candidates(both)) == 3


def test_a_returned_element_nobody_reads_goes_from_the_return_and_every_unpacking():
    """pytorch#196173 returns the scheduler's last phase; once its check is cut, nothing reads it."""
    script = real("d_identity_toggle_stale_branch.py")
    without_phase_check = script[: script.index("if ref_phase != cmp_phase:")]
    (candidate,) = tuple_element_candidates(without_phase_check)
    assert "    return history" in lines(candidate)
    assert "ref_hist = run(update)" in lines(candidate)
    assert "cmp_hist = run(torch.compile(update, backend='eager'))" in lines(candidate)
    assert tuple_element_candidates(script) == []  # while the check reads ref_phase, the element stays


def test_a_dropped_element_that_calls_the_model_leaves_the_call_behind():
    script = "def run(m, x):\n    return m(x), 1\n\nout, one = run(abs, -2)\nprint(one)\n"
    (candidate,) = tuple_element_candidates(script)
    assert lines(candidate)[:3] == ["def run(m, x):", "    m(x)", "    return 1"]
    assert "one = run(abs, -2)" in lines(candidate)


def test_a_check_may_keep_one_part_of_its_or_never_change_it():
    """pytorch#197896's exit on `cmp_counts != ref_counts or cmp_log != ref_log`: the first part alone is still a
    check the script made; a part negated is not."""
    script = real("c_activation_probe_closure.py")
    kept = checks(script)
    narrowed = checks(script.replace(" or cmp_log != ref_log", ""))
    changed = checks(script.replace(" or cmp_log != ref_log", "").replace("cmp_counts !=", "cmp_counts =="))
    assert all(narrowed[c] <= kept[c] for c in narrowed)
    assert not all(changed[c] <= kept[c] for c in changed)


def _value(source: str, expression: str):
    scope: dict = {"print": lambda *a: None}
    exec(compile(source, "<script>", "exec"), scope)
    return eval(expression, scope)


def test_a_module_put_in_eval_mode_is_flattened_when_eval_changes_nothing():
    """pytorch#192872's Encoder, as its reduction leaves it: no submodule, nothing reads `self.training`."""
    script = (
        "import torch\nimport torch.nn as nn\n\nclass Encoder(nn.Module):\n    def forward(self, x):\n"
        "        return x * 2\n\nmodel = Encoder().eval()\nprint(torch.compile(model, backend='eager')(torch.ones(1)))\n"
    )
    (candidate,) = flatten_module_candidates(script)
    assert "class Encoder" not in candidate and "def model(x):" in candidate
    dropout = script.replace("return x * 2", "return nn.functional.dropout(x, 0.5, self.training)")
    assert flatten_module_candidates(dropout) == []  # eval mode is what the failure may need


GUIDANCE = real("e_guidance_batch_recompile.py")  # pytorch#160271


def test_a_forward_parameter_no_call_needs_goes_from_every_call_of_an_instance():
    """Once #160271's forward no longer reads `guidance`, the call inside denoise(model, ...) loses it too."""
    script = GUIDANCE.replace("g = self.guidance_in(guidance[:, None])", "g = 0")
    (candidate,) = forward_parameter_candidates(script)
    assert "    def forward(self, latents):" in lines(candidate)
    assert "latents = latents - 0.1 * model(latents)" in candidate
    assert forward_parameter_candidates(GUIDANCE) == []  # while forward reads it, it stays


def test_a_module_that_is_one_layer_becomes_that_layer():
    script = (
        "import torch.nn as nn\n\nclass Block(nn.Module):\n    def __init__(self, dim=4):\n        super().__init__()\n"
        "        self.proj = nn.Linear(1, dim)\n\n    def forward(self, x):\n        return self.proj(x)\n\n"
        "model = Block(dim=2).eval()\n"
    )
    (candidate,) = layer_candidates(script)
    assert "class Block" not in candidate and "model = nn.Linear(1, 2).eval()" in lines(candidate)
    assert layer_candidates(script.replace("return self.proj(x)", "return self.proj(x).relu()")) == []


def test_a_def_handed_on_once_becomes_a_lambda():
    """pytorch#193279's loss, handed to torch.func.grad and named nowhere else, once its body is one return."""
    script = real("funcgrad_custom_function_ste.py")
    assert bind.lambda_candidates(script) == []  # two statements: no lambda
    (candidate,) = bind.lambda_candidates(script.replace("    pred = x @ RoundSTE.apply(w)\n", ""))
    assert "def quant_loss" not in candidate
    assert "grad_fn = torch.func.grad(lambda w, x, target: ((pred - target) ** 2).mean())" in lines(candidate)


def test_a_module_compiled_into_its_own_name_is_made_in_the_compile_call():
    """#160271's `model = TinyFluxBlock().eval()` then `model = torch.compile(model, dynamic=True)`: one line."""
    merged = merge_candidates(GUIDANCE)
    assert any("model = torch.compile(TinyFluxBlock().eval(), dynamic=True)" in lines(c) for c in merged)
    later = "x = 1\ny = x\nx = x + 1\nprint(x, y)\n"  # read again before the rebinding: not merged
    assert not any("x = 1 + 1" in c for c in merge_candidates(later))


def test_an_empty_class_made_without_arguments_becomes_object():
    """pytorch#196173's PhaseConfig, once its fields are cut: the scheduler only compares identities."""
    script = real("d_identity_toggle_stale_branch.py")
    start = script.index("class PhaseConfig")
    end = script.index("class AlternatingScheduler")
    emptied = script[:start] + "class PhaseConfig:\n    pass\n\n\n" + script[end:]
    emptied = emptied.replace('PhaseConfig("even", 0.1)', "PhaseConfig()").replace(
        'PhaseConfig("odd", 0.01)', "PhaseConfig()"
    )
    (candidate,) = bind.empty_class_candidates(emptied)
    assert "class PhaseConfig" not in candidate and "self.even = object()" in candidate
    assert bind.empty_class_candidates(script) == []  # its fields are still there


def test_a_collection_only_added_to_goes_and_each_addition_keeps_its_call():
    """pytorch#198190's drain(): once the check on the scores and their torch.cat are cut (ddmin's deletions), the
    list is only appended to; it goes, and `next(gen)`, which runs the compiled generator, stays."""
    script = real("c_streaming_generator_return.py").replace("torch.testing.assert_close(cmp_scores, ref_scores)\n", "")
    (unread,) = [c for c in tuple_element_candidates(script) if "return stop.value" in c]
    unread = unread.replace("            torch.cat(scores)\n", "")
    (candidate,) = collection_candidates(unread)
    assert "scores" not in candidate and "            next(gen)" in lines(candidate)


def test_a_collection_that_is_read_stays():
    script = "import torch\n\ndef f(xs):\n    out = []\n    out.append(xs[0])\n    d = {}\n    d['k'] = 1\n    return out, d\n"
    assert collection_candidates(script) == []


def test_a_loop_count_nobody_reads_goes():
    """pytorch#196173's comparison loop, once the message that read `step` is cut: `for r, c in zip(...)`."""
    script = real("d_identity_toggle_stale_branch.py")
    script = "\n".join(line for line in script.splitlines() if "step {step}" not in line) + "\n"
    (candidate,) = enumerate_candidates(script)
    assert "for r, c in zip(ref_hist, cmp_hist):" in lines(candidate) and "enumerate" not in candidate
    assert enumerate_candidates(real("d_identity_toggle_stale_branch.py")) == []  # the message reads it
