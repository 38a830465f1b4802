# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "signed_zero", "issue": 194347, "repro_kinds": ["graph", "graph_in_context", "graph_in_script", "source"], "max_nodes": 8, "max_lines": 25, "op": "aten.minimum"}
# pytorch/pytorch#194347: [inductor] torch.minimum(-0.0, 0.0) gives +0.0 on CPU under torch.compile (eager gives -0.0)
# CLASS: signed_zero
# WHY: the CPU minimum codegen loses the sign of zero, so atan2 on the clipped value lands on the other side of the branch cut (+pi instead of -pi); AssertionError from torch.testing.assert_close
import torch
import torch.nn as nn


class LowerHalfAngle(nn.Module):
    """Snaps points to a 0.25 grid, clips them to the lower half-plane, returns polar angle."""

    def forward(self, px, py):
        qy = torch.round(py * 4) / 4   # small negative y snaps to -0.0
        clipped = torch.minimum(qy, torch.zeros_like(qy))
        return torch.atan2(clipped, px)


def main():
    torch.manual_seed(0)
    px = -torch.rand(8) - 0.5          # all on the negative x side
    py = torch.randn(8)
    py[::2] = -0.05                    # points just below the axis

    model = LowerHalfAngle()
    ref = model(px, py)
    got = torch.compile(model)(px, py)

    print("eager   :", [round(v, 4) for v in ref.tolist()])
    print("compiled:", [round(v, 4) for v in got.tolist()])
    torch.testing.assert_close(got, ref)
    print("OK")


if __name__ == "__main__":
    main()
