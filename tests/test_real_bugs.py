"""End to end on genuine upstream bugs: `reprokit bisect --json` on each script in tests/real_bugs/.

Each script there reproduces an open pytorch/pytorch issue on torch 2.13 CPU (its comments name the issue, the
class and why it fails) and states on its first line what reprokit should find (# EXPECT = {...}): the first
failing stage, the failure kinds, the repro kinds that are acceptable for it ("graph", "graph_in_context",
"graph_in_script", "source"), loose upper bounds on the repro's size, and, where the verdict should name it, the
op. tests/real_bugs/BASELINE.md has the seconds and the result of each case. A bug fixed in the installed torch
skips and says so: by its EXPECT's "fixed_in" (the release where it no longer reproduces), or when the bisect finds
nothing to isolate and the script passes alone (issue #45: the README's test command on what pip installs).

CI runs 7 of the 43; the other 36 (OPT_IN below, each with the case that keeps its class) are opt-in with
REPROKIT_ALL_REAL_BUGS=1, to keep CI under 45 minutes on two cores (BASELINE.md has each case's seconds). The first:
- interp_conv_pool_where_grad (124 s): backward-only failures are covered by funcgrad_custom_function_ste;
- b_segformer_sr_conv_dynamic_recompile (485 s in that CI, 11% of the suite's work): its source reduction is
  covered by funcgrad, autogradcpu and nested, its time share by tests/test_source_share.py;
- index_put_then_flip_add (146 s): input mutation is covered by unfold_gapped_inplace and dropout_eval_inplace_alias;
- b_generator_yield_from_return (277 s, issue #32's Dynamo-stage script of 50+ lines): its source reduction, stopped
  at its 240 s share, is covered by funcgrad, autogradcpu and nested;
- dropout_eval_inplace_alias (92 s in the CI at 8d7a70e, which took 44 min 30 s before the newest torch's smoke
  set): input mutation is covered by unfold_gapped_inplace;
- b_aot_cache_overlap_guard (73 s alone; issue #32's failure that shows only with a warm cache): the warm-cache rung
  and its repro are covered by test_e2e's planted case;
- b_spawn_teardown_abort_cumsum (40 s alone; issue #32's multi-rank script whose plain run now and then dies at
  teardown, #190489, with #193263 compiled in each rank): a baseline that fails at teardown after its work is
  covered by test_unsteady's spawn_exit_hang, which hangs there every time;
- rng_object_stale_draw (issue #32's flaky failure, #145445: it fails in about 40% of plain runs, so a run of its
  test passes or fails the checks by chance): asking each question until it fails is covered by test_e2e's planted
  flaky case, which fails on a fixed pattern of runs.
- the nine c_* cases: held-out bugs reprokit had never seen, measured on torch 2.15 in stop 43 (BASELINE.md).
b_diag_mask_setitem_softmax_keyerror (#196570) runs: every cut of its graph renumbers the buffer its KeyError
names, which made minify refuse every cut as another failure (torch 2.15, 17 -> 17 nodes; 10 now).
b_jacfwd_half_reduction_cpp_error runs again since its graph repro takes under a minute (it was a source reduction
of 110-164 s): it is the corpus's graph whose cuts mostly fail another way (issue #32).
"""

import ast
import json
import os
import pathlib
import shutil
import subprocess
import sys
from importlib import metadata

import pytest

from reprokit.versions import releases

CASES = pathlib.Path(__file__).parent / "real_bugs"
REPO = pathlib.Path(__file__).parent.parent
BISECT_TIMEOUT = 1800  # seconds: the slowest case took 430 s alone on two cores; beside another worker's bisect, more
REPRO_TIMEOUT = 600

# Run by default: all but the slowest cases whose class another case covers (BASELINE.md has the seconds).
OPT_IN = {
    "interp_conv_pool_where_grad.py",  # 124 s; backward-only: funcgrad_custom_function_ste
    "b_segformer_sr_conv_dynamic_recompile.py",  # 485 s; source reduction: funcgrad, autogradcpu, nested
    "index_put_then_flip_add.py",  # 146 s; input mutation: unfold_gapped_inplace, dropout_eval_inplace_alias
    "b_generator_yield_from_return.py",  # 277 s; Dynamo-stage source reduction: funcgrad, autogradcpu, nested
    "dropout_eval_inplace_alias.py",  # 92 s in CI at 8d7a70e; input mutation: unfold_gapped_inplace
    "b_aot_cache_overlap_guard.py",  # 73 s; the warm-cache rung: test_e2e's planted warm-cache case
    "b_spawn_teardown_abort_cumsum.py",  # 40 s; a baseline that dies at teardown: test_unsteady's spawn_exit_hang
    "rng_object_stale_draw.py",  # flaky by nature (about 40% of runs fail): test_e2e's planted flaky case
    # Held-out bugs reprokit had never seen, run on torch 2.15 in stop 43 (BASELINE.md): their classes are covered
    # above, and together they take about 20 minutes. Not c_memory_bank_alias_view (#198095, about 60 s): inputs that
    # alias each other (fx/aliases.py) have no other genuine case.
    "c_addmm_beta0_nan_state.py",
    "c_avgpool_ceil_mode_backward.py",
    "c_float_floor_div_bucketize.py",
    "c_tiled_reduction_tail_gelu_matmul.py",
    "c_activation_probe_closure.py",
    "c_gradcam_feature_hook.py",
    "c_ste_forward_grad_jvp.py",
    "c_streaming_generator_return.py",
    # Held-out bugs of stop 44 (BASELINE.md), the same way; d_minimum_signed_zero_angle (#194347) runs in CI: it
    # found two wrong answers (float64 across zero from eager; a source cut that dropped the seed).
    "d_atan2_amin_heading_backward.py",
    "d_contiguous_alias_unsqueeze_guard.py",
    "d_copy_into_nograd_state_backward.py",
    "d_half_bool_sum_cpp_error.py",
    "d_identity_toggle_stale_branch.py",
    "d_uint8_any_hit_mask.py",
    "d_unfold_overlap_inplace_abs.py",
    # Held-out bugs of stop 45 (BASELINE.md); e_local_class_attr_graph_break (#192872) runs in CI: its source
    # reduction had dropped the graph break and weakened the script's check, and showed a sibling bug.
    "e_view_dtype_mutation_order.py",
    "e_saved_input_view_inplace_grad.py",
    "e_jvp_ldexp_aot_eager.py",
    "e_while_loop_int_carry.py",
    "e_guidance_batch_recompile.py",
    # The slowest case in the default set (733 s on a loaded machine, stop 53): an inductor compile error under
    # jacfwd; b_cumsum_zero_dim_lowering covers that class in CI.
    "b_jacfwd_half_reduction_cpp_error.py",
    # CI ran 67 minutes at stop 54 (45 kept to); seconds in the suite at 110e4fd, and the case that keeps the class:
    "d_minimum_signed_zero_angle.py",  # 409 s; accuracy: erfinv_near_one_f64 (the refused seed cut: test_source_passes)
    "b_custom_op_dtype_view_diagonal_scatter.py",  # 392 s; custom op: b_aten_autogradcpu_override_fake
    "attention_softmax_nonlast_dim.py",  # 350 s; accuracy: erfinv_near_one_f64 (fixed in 2.15: skipped there anyway)
    "b_diag_mask_setitem_softmax_keyerror.py",  # 236 s; inductor compile error: b_cumsum_zero_dim_lowering
    "bmm_int8_output_dtype.py",  # 165 s; accuracy: erfinv_near_one_f64
    "b_nested_region_global_rebind.py",  # 143 s; Dynamo-stage source reduction: e_local_class_attr, funcgrad
    # CI ran 50 minutes at 988ae24; seconds in that suite, and the tests that keep the class:
    "autocast_disabled_region_backward.py",  # 94 s; a graph replayed in its call-time context (graph_in_context):
    # test_e2e's compiler hook and test_dist_e2e's segfaulting ranks; a backward-only failure: funcgrad
}


def expect(name: str) -> dict:
    first = (CASES / name).read_text().splitlines()[0]
    assert first.startswith("# EXPECT = ")
    return ast.literal_eval(first[len("# EXPECT = ") :])


def cpu_flags() -> set:
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()}


# The cases the README's test command runs on the newest torch too (.ci/run, `-m newest_smoke`): one fixed there.
NEWEST_SMOKE = {"attention_softmax_nonlast_dim.py"}
TORCH = metadata.version("torch")


def fixed_here(exp: dict) -> str | None:
    """Why the case cannot fail on the installed torch, when its EXPECT line says the bug is fixed in it."""
    fixed = exp.get("fixed_in")
    if fixed and releases.key(TORCH) >= releases.key(fixed):
        return f"pytorch/pytorch#{exp['issue']} is fixed in torch {fixed}: it does not reproduce on torch {TORCH}"
    return None


def params():
    """One parameter per script; the ones in OPT_IN skip unless REPROKIT_ALL_REAL_BUGS=1, the ones fixed in the
    installed torch skip and say so."""
    everything = os.environ.get("REPROKIT_ALL_REAL_BUGS") == "1"
    for path in sorted(CASES.glob("*.py")):
        marks = [pytest.mark.newest_smoke] if path.name in NEWEST_SMOKE else []
        exp = expect(path.name)
        # Fixed here first: the newest torch's smoke set runs a case fixed there to see it skip saying so.
        if fixed_here(exp):
            marks.append(pytest.mark.skip(reason=fixed_here(exp)))
        elif not everything and path.name in OPT_IN:
            marks.append(pytest.mark.skip(reason="opt-in: REPROKIT_ALL_REAL_BUGS=1 runs every real bug"))
        isa = exp.get("isa")
        if isa and not set(isa) & cpu_flags():
            marks.append(pytest.mark.skip(reason=f"needs a vector ISA ({' or '.join(isa)}) for the bug's codegen"))
        yield pytest.param(path.name, marks=marks, id=path.stem)


def skip_if_fixed(workdir: pathlib.Path, case: str, exp: dict, p) -> None:
    """Nothing to isolate (exit 3) because the script itself passes on this torch: the bug is fixed here, not
    missed by reprokit, so the case skips naming the release and the issue (its EXPECT line may say fixed_in)."""
    if p.returncode != 3:
        return
    alone = subprocess.run([sys.executable, case], cwd=workdir, capture_output=True, text=True, timeout=REPRO_TIMEOUT)
    if alone.returncode == 0:
        pytest.skip(f"pytorch/pytorch#{exp['issue']} does not reproduce on torch {TORCH}: the script passes compiled")


def bisect(workdir: pathlib.Path, case: str):
    cmd = [sys.executable, "-m", "reprokit", "bisect", case, "--json", "-o", str(workdir / "artifacts")]
    p = subprocess.run(
        cmd,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=BISECT_TIMEOUT,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    data = json.loads(p.stdout) if p.stdout.strip() else None
    return p, data


def copy_elsewhere(repro: str, folder: pathlib.Path) -> pathlib.Path:
    """repro.py (with its inputs) copied into a folder of its own, the way a maintainer would get it."""
    folder.mkdir()
    shutil.copy(repro, folder / "repro.py")
    inputs = pathlib.Path(repro).with_name("repro_inputs.pt")
    if inputs.exists():
        shutil.copy(inputs, folder / "repro_inputs.pt")
    return folder


def run_repro(folder: pathlib.Path, **env):
    """A fresh interpreter in that folder, with no PYTHONPATH from us."""
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "repro.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=REPRO_TIMEOUT,
        env={**clean, **env},
    )


def imports_reprokit(text: str) -> bool:
    for node in ast.walk(ast.parse(text)):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        if any(n.split(".")[0] == "reprokit" for n in names):
            return True
    return False


def check_verdict(data: dict, exp: dict) -> None:
    assert data["failing_stage"] == exp["failing_stage"], data
    assert data["kind"] in exp["kinds"], data
    if "op" in exp:
        # The op the issue is about is named: by the lowering bisection or in the failure itself.
        named = json.dumps([data.get("subsystem"), data.get("signature"), data.get("message")])
        assert exp["op"] in named, named


def check_repro(data: dict, exp: dict, elsewhere: pathlib.Path) -> None:
    assert data.get("repro_kind") in exp["repro_kinds"], (data.get("repro_kind"), data.get("message"))
    assert data["repro_verified"] is True, data.get("message")
    nodes = data["nodes"]
    bound = exp["max_lines"] if nodes.get("unit") == "lines" else exp["max_nodes"]
    assert nodes["minified"] <= min(bound, nodes["original"]), nodes
    if nodes["original"] > bound:
        assert nodes["minified"] < nodes["original"], nodes  # there was something to cut, and it was cut
    text = pathlib.Path(data["repro"]).read_text()
    assert not imports_reprokit(text), "repro.py must stand alone"
    for kept in exp.get("repro_keeps", ()):  # what the bug needs, as the issue says: a cut showed another bug
        assert kept in text, text
    folder = copy_elsewhere(data["repro"], elsewhere)
    p = run_repro(folder)
    # The repro fails on its own, in a fresh process and another folder, the way the original did.
    assert p.returncode != 0, p.stdout + p.stderr
    if data["kind"] == "exception" and data["signature"]["exc_type"] != "AssertionError":
        assert data["signature"]["exc_type"] in p.stderr, p.stderr[-3000:]
    # Its test_repro.py, run alone the same way, fails today too (issue 46).
    if data.get("test_repro"):
        shutil.copy(data["test_repro"], folder / "test_repro.py")
        t = subprocess.run(
            [sys.executable, "test_repro.py"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=REPRO_TIMEOUT,
            # without CI: under CI=true PyTorch's run_tests needs xmlrunner, and would fail on that import
            env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")},
        )
        assert t.returncode != 0 and "xmlrunner" not in t.stderr, t.stdout + t.stderr[-3000:]
    # ... and it is a compiler bug still: with torch.compile turned off the same file passes. (A reduction that
    # keeps only the failing assert, or breaks the user's code, fails here.)
    off = run_repro(folder, TORCHDYNAMO_DISABLE="1")
    assert off.returncode == 0, "repro.py fails without torch.compile too:\n" + text + off.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.real_bug
@pytest.mark.parametrize("case", list(params()))
def test_real_bug_is_bisected_and_reproduced(workdir, tmp_path, case):
    exp = expect(case)
    p, data = bisect(workdir, case)
    skip_if_fixed(workdir, case, exp, p)
    assert p.returncode == 0, p.stderr[-3000:]
    check_verdict(data, exp)
    check_repro(data, exp, tmp_path / "elsewhere")
