"""Captured graphs replay on the device they ran on, and big inputs are kept cheaply (issue 48, items 1 and 2).

The CPU-only machine's "other device" is `meta`: a real torch device that is not the CPU, whose tensors hold no
values (as a capture with `--max-input-bytes 0` holds none), on which the graph still runs. A stand-in made on the
CPU, or moved there on load, fails these tests; no device is faked."""

import json

import pytest
import torch

from reprokit.bisect.from_capture import _stand_ins_line
from reprokit.fx.capture import capture_graph
from reprokit.fx.keep import Caps, summary
from reprokit.fx.materialize import load_case


def gather_masked(x, idx, mask, w):
    return (x[idx] * w).masked_fill(mask, 0.0).relu()


def test_stand_ins_are_made_on_the_recorded_device_with_its_strides_and_dtypes(tmp_path):
    gm = torch.fx.symbolic_trace(gather_masked)
    x = torch.empty(64, 32, dtype=torch.float16, device="meta").t()  # strides (1, 32): a transposed activation
    idx = torch.empty(16, dtype=torch.int64, device="meta")
    mask = torch.empty(16, 64, dtype=torch.bool, device="meta")
    w = torch.empty(64, dtype=torch.float16, device="meta").expand(16, 64)  # stride 0: memory smaller than it
    note = capture_graph(gm, [x, idx, mask, w], str(tmp_path), max_input_bytes=1 << 20)
    assert note == (
        "inputs 0, 1, 2, 3 (0.0 MiB) were not saved (caps: 1 MiB a tensor, 4 MiB a graph); trials use stand-ins made "
        "on their recorded device (meta) and matched on shape, stride, dtype and statistics"
    )
    _, made, meta = load_case(str(tmp_path))
    assert [(t.device.type, t.dtype, t.shape, t.stride()) for t in made] == [
        (t.device.type, t.dtype, t.shape, t.stride()) for t in (x, idx, mask, w)
    ]
    # which inputs the capture kept and which it replaced, and which of those a failure may depend on
    assert summary(meta) == {
        "kept": [],
        "on_disk": [],
        "replaced": [0, 1, 2, 3],
        "values_matter": [[1, "idx", "an index or mask (int64)"], [2, "mask", "an index or mask (bool)"]],
    }
    assert _stand_ins_line(meta) == (
        "; its stand-ins cannot show a failure that depends on the values of idx (input 1: an index or mask (int64)), "
        "mask (input 2: an index or mask (bool)), which the capture replaced: capture again with a larger "
        "--max-input-bytes or with --keep-inputs-on-disk"
    )


def branch(x, y):
    return torch.where(x > 0.5, y, -y)


def test_a_float_input_a_branch_reads_is_named_when_replaced(tmp_path):
    x, y = torch.rand(256), torch.randn(256)
    capture_graph(torch.fx.symbolic_trace(branch), [x, y], str(tmp_path), max_input_bytes=0)
    _, (sx, sy), meta = load_case(str(tmp_path))
    assert meta["values_matter"] == [[0, "x", "compared or branched on"]]  # y's values decide no branch
    assert 0 <= float(sx.min()) and float(sx.max()) <= 1  # the stand-in keeps the recorded range


def lookup(table, big, ids, keep):
    return table[ids] + big.sum() * keep


@pytest.mark.parametrize("on_disk", [False, True])
def test_caps_per_tensor_and_per_graph_keep_indices_and_stream_the_rest_to_disk(tmp_path, on_disk):
    table = torch.randn(1000)  # 4000 bytes: within both caps
    big = torch.randn(50, 40).t()  # 8000 bytes, transposed: over the per-tensor cap
    ids = torch.randint(0, 1000, (2000,))  # 16000 bytes of indices: kept exactly, whatever the caps
    keep = torch.rand(2000) < 0.5
    gm = torch.fx.symbolic_trace(lookup)
    capture_graph(gm, [table, big, ids, keep], str(tmp_path), 4000, caps=Caps(4000, 4000, on_disk=on_disk))
    _, (t, b, i, k), meta = load_case(str(tmp_path))
    assert torch.equal(t, table) and torch.equal(i, ids) and torch.equal(k, keep)
    assert b.shape == big.shape and b.stride() == big.stride()
    assert torch.equal(b, big) is on_disk  # the exact values from disk, or a stand-in
    assert summary(meta)["kept"] == [0, 2, 3] and summary(meta)["on_disk" if on_disk else "replaced"] == [1]
    assert (tmp_path / "inputs" / "1.bin").stat().st_size == 8000 if on_disk else not (tmp_path / "inputs").exists()
    assert json.loads((tmp_path / "meta.json").read_text())["values_saved"] is False
