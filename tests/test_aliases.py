"""Graph inputs that share memory (fx/aliases.py): kept through the capture, every copy a trial makes, and repro.py.
pytorch/pytorch#198095 (tests/real_bugs/c_memory_bank_alias_view.py) fails only while `recent` is a view of `bank`."""

import pytest
import torch

from reprokit.child.accuracy import copies
from reprokit.fx import aliases
from tests.test_repro_template import meta, parts, render, run_harness


def shares(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def test_a_tensor_and_its_slice_are_one_group_and_copies_keep_them_so():
    bank = torch.randn(6, 8, dtype=torch.float64)
    recent, update = bank[1:], torch.randn(8)
    assert aliases.describe([bank, update, recent, 3]) == [{"inputs": [0, 2], "offsets": [0, 8], "numel": 48}]
    for c in (copies([bank, update, recent, 3]), copies([bank, update, recent, 3], float64=True)):
        assert shares(c[0], c[2]) and not shares(c[0], bank), "one new memory for the group"
        assert c[2]._base is c[0], "the slice is a view of the copied base, as in the script"
        assert torch.equal(c[2], recent) and c[3] == 3
        c[0].mul_(0)  # a float64 input's float64 copy is a copy too: the run writes to what it is given
    assert bank.abs().sum() > 0


def test_views_as_only_as_strided_says_them_and_groups_with_no_spanning_member():
    base = torch.arange(20.0)
    a, b = base[2:10], base[5:15]
    (group,) = aliases.describe([a, b])
    assert group == {"inputs": [0, 1], "offsets": [0, 3], "numel": 13} and aliases.spanning(group, [a, b]) is None
    made = aliases.shared([torch.ones(8), torch.full((10,), 2.0)], [group])
    assert shares(*made) and made[0].tolist() == [1, 1, 1, 2, 2, 2, 2, 2] and made[1].tolist() == [2.0] * 10
    assert aliases.slices((6, 8), (8, 1), (5, 8), (8, 1), 8) == [(1, 6), (0, 8)]
    assert aliases.slices((6, 8), (8, 1), (6, 4), (8, 1), 2) == [(0, 6), (2, 6)]
    assert aliases.slices((6, 8), (8, 1), (8, 6), (1, 8), 0) is None  # a transpose is no slice


def test_the_capture_leaves_the_jobs_inputs_alone_and_the_case_loads_them_aliased(tmp_path):
    from reprokit.fx.capture import capture_graph
    from reprokit.fx.materialize import load_case

    def refresh(bank, update, recent):
        bank.mul_(0.5).add_(update)
        return (recent[0],)

    gm = torch.fx.symbolic_trace(refresh)
    bank = torch.randn(6, 8, dtype=torch.float64)
    update, before = torch.randn(8, dtype=torch.float64), bank.clone()
    capture_graph(gm, [bank, update, bank[1:]], str(tmp_path), max_input_bytes=1 << 20)
    assert torch.equal(bank, before), "capturing ran the graph on the job's own tensors"
    _, (b, u, r), meta_ = load_case(str(tmp_path))
    assert meta_["aliases"] == [{"inputs": [0, 2], "offsets": [0, 8], "numel": 48}]
    assert r._base is b and torch.equal(r, before[1:]) and not shares(b, bank)


BANK = [
    meta(torch.randn(6, 8, dtype=torch.float64)),
    meta(torch.randn(8, dtype=torch.float64)),
    meta(torch.randn(6, 8, dtype=torch.float64)[1:]),
]
REFRESH = "def forward(self, bank, update, recent):\n    bank.mul_(0.5).add_(update)\n    return (recent[0],)"


@pytest.mark.parametrize("use_saved", [False, True])
def test_repro_py_makes_the_slice_again_and_gives_each_reference_one_copy_of_the_memory(use_saved):
    text = render(
        parts(
            forward=REFRESH,
            inputs=BANK,
            names=("bank", "update", "recent"),
            config_lines=[],
            aliases=[{"inputs": [0, 2], "offsets": [0, 8], "numel": 48}],
        ),
        accuracy=True,
        use_saved=use_saved,
    )
    if use_saved:
        assert "recent = bank[1:]  # a view of it, as in the captured call" in text
    else:
        assert "recent = bank[1:]  # a view of bank, as in the captured call" in text
        assert text.index("bank = ") < text.index("recent = ") < text.index("update = ")
    assert (
        "results(Repro(), (bank_copy := bank.clone()), update.clone(), bank_copy[1:]), "
        "results(compiled, bank, update, recent)"
    ) in text
    assert "results(Repro().double(), (bank_copy := bank.clone()), update.clone(), bank_copy[1:])" in text
    if use_saved:
        return
    run_harness(text, REFRESH)  # compiled as eager: no failure
    wrong = "def forward(self, bank, update, recent):\n    bank.mul_(0.5).add_(update)\n    return (bank[0],)"
    with pytest.raises(AssertionError, match=r"^output 0: "):  # #198095: the view regenerated from the wrong base
        run_harness(text, wrong)


def test_inputs_with_no_spanning_member_are_views_of_a_buffer_made_for_them():
    base = torch.arange(20.0)
    text = render(
        parts(
            forward="def forward(self, a, b):\n    a.add_(1)\n    return (b * 2,)",
            inputs=[meta(base[2:10]), meta(base[5:15])],
            names=("a", "b"),
            config_lines=[],
            aliases=[{"inputs": [0, 1], "offsets": [0, 3], "numel": 13}],
        ),
        accuracy=True,
    )
    assert "a_memory = torch.empty(13)\na = a_memory[:8].copy_(" in text and "\nb = a_memory[3:].copy_(" in text
    made = {}
    exec(compile(text.split("\n\ndef error(")[0], "repro.py", "exec"), made)
    assert shares(made["a"], made["b"]) and made["b"].storage_offset() == 3
    run_harness(text, "def forward(self, a, b):\n    a.add_(1)\n    return (b * 2,)")
    with pytest.raises(AssertionError, match=r"^output 0: "):  # b read before a's write landed in it
        run_harness(text, "def forward(self, a, b):\n    out = b * 2\n    a.add_(1)\n    return (out,)")


def test_repro_inputs_of_a_cut_that_dropped_the_spanning_input_start_at_their_own_span(tmp_path):
    """A cut keeps the two slices and drops the tensor they view: repro_inputs.pt holds them as one new span, from 0."""
    from reprokit.fx.capture import capture_graph
    from reprokit.fx.materialize import repro_parts

    def f(base, a, b):
        base.add_(1)
        return (a * 2 + b[:8],)

    base = torch.arange(20.0)
    capture_graph(torch.fx.symbolic_trace(f), [base, base[2:10], base[5:15]], str(tmp_path / "case"), 1 << 20)
    names = [n.name for n in torch.fx.symbolic_trace(f).graph.nodes if n.op != "placeholder" and n.op != "output"]
    kept = [n for n in names if n != "add_"]  # the write to base is cut: base is no input of the cut graph
    got = repro_parts(str(tmp_path / "case"), {"computed": kept, "cut": [], "outputs": [names[-1]]}, str(tmp_path))
    assert got["aliases"] == [{"inputs": [0, 1], "offsets": [0, 3], "numel": 13}], got["aliases"]
    a, b = torch.load(tmp_path / "repro_inputs.pt")["inputs"]
    assert shares(a, b) and (a.storage_offset(), b.storage_offset()) == (0, 3) and b.tolist() == list(range(5, 15))
