"""The doctor's "nothing was compiled" finding, from observed.json's plain data: a wrapper Dynamo skips gets the
wrap-after-compile fix, any other callable a pointer to its graph breaks."""

from reprokit.doctor.wrappers import compiled_nothing_findings

LINES = {"train.py": ["import torch", "step = torch.compile(DDP(model))", "f = torch.compile(step_fn)"]}


def callable_at(label: str, line: int, graphs: int = 0, ops: int = 0, calls: int = 4) -> dict:
    return {
        "label": label,
        "site": ["train.py", line],
        "counts": {"graphs": graphs, "ops": ops},
        "seconds": [0.1] * calls,
    }


def test_a_compiled_ddp_is_told_to_compile_the_module_first():
    (f,) = compiled_nothing_findings({"callables": [callable_at("DistributedDataParallel", 2)]}, LINES)
    assert (f.kind, f.file, f.line, f.code, f.count) == ("compiled_nothing", "train.py", 2, LINES["train.py"][1], 4)
    assert f.title == (
        "nothing was compiled: torch.compile of DistributedDataParallel skips its forward, so all 4 calls ran eager "
        "(no graph reached the compiler)"
    )
    assert f.fix == "compile the module, then wrap it: `DDP(torch.compile(model))`"
    assert f.detail.startswith("Dynamo does not trace DistributedDataParallel's own forward")


def test_a_function_whose_graphs_hold_no_op_points_at_its_breaks():
    (f,) = compiled_nothing_findings({"callables": [callable_at("step_fn", 3, graphs=2)]}, LINES)
    assert f.title == "nothing was compiled: step_fn ran 4 calls eager (2 graph(s) of no op)"
    assert f.fix == "fix the graph breaks below, or compile the function that does the work" and f.detail == ""


def test_a_callable_that_compiled_ops_or_never_ran_is_no_finding():
    compiled, idle = callable_at("step_fn", 3, graphs=1, ops=5), callable_at("DataParallel", 2, calls=0)
    assert compiled_nothing_findings({"callables": [compiled, idle]}, LINES) == []
