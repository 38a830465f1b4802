# EXPECT = {"failing_stage": "inductor", "kinds": ["exit"], "class": "wrong_dtype", "issue": 198081, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 6, "max_lines": 30}
# pytorch/pytorch#198081: [inductor] any() over a uint8 tensor yields bool instead of uint8, so later uint8 wrap-around arithmetic changes value
# CLASS: wrong_dtype
# WHY: Inductor's reduce_any lowering returns bool where eager keeps uint8; `hit - 1` then gives int64 -1 instead of uint8 255 and the script's own check exits 1
import sys

import torch
import torch.nn as nn


class EmptyRowMask(nn.Module):
    """Turns a uint8 occupancy grid into a 0/255 mask of rows and columns with no hits."""

    def forward(self, grid):
        row_hit = grid.any(dim=2)          # uint8 in eager (legacy any() result type)
        col_hit = grid.any(dim=1)
        # classic uint8 trick: 0 -> 255 (empty), 1 -> 0 (occupied)
        empty_rows = row_hit - 1
        empty_cols = col_hit - 1
        return empty_rows, empty_cols


def main():
    torch.manual_seed(0)
    grid = (torch.rand(2, 5, 6) > 0.8).to(torch.uint8)
    grid[0, 1] = 0
    grid[1, :, 3] = 0

    model = EmptyRowMask()
    ref_rows, ref_cols = model(grid)
    got_rows, got_cols = torch.compile(model)(grid)

    print("eager   :", ref_rows.dtype, ref_rows[0].tolist())
    print("compiled:", got_rows.dtype, got_rows[0].tolist())
    ok = True
    for name, ref, got in (("rows", ref_rows, got_rows), ("cols", ref_cols, got_cols)):
        if got.dtype != ref.dtype or not torch.equal(got.to(torch.int64), ref.to(torch.int64)):
            print(f"MISMATCH in {name}: eager {ref.dtype} vs compiled {got.dtype}")
            ok = False
    if not ok:
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
