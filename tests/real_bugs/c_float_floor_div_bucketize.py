# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "accuracy", "issue": 197895, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 6, "max_lines": 40, "op": "div.Tensor_mode"}
# pytorch/pytorch#197895: [inductor] float floor division computed as floor(a / b): bucket ids one too high
# CLASS: accuracy
# WHY: float floor division lowered as floor(a / b) instead of eager's fmod-based algorithm -> compiled bucket ids off by one (e.g. 1.0 // 0.1 gives 10 instead of 9); AssertionError from torch.testing.assert_close
import torch
import torch.nn as nn


class Bucketizer(nn.Module):
    """Maps continuous features to integer bucket ids (e.g. for an embedding lookup)."""

    def __init__(self, low: float, bucket_width: float, num_buckets: int):
        super().__init__()
        self.low = low
        self.bucket_width = bucket_width
        self.num_buckets = num_buckets

    def forward(self, values: torch.Tensor) -> torch.Tensor:
        shifted = values - self.low
        bucket = shifted // self.bucket_width
        bucket = bucket.clamp(0, self.num_buckets - 1)
        return bucket.to(torch.int64)


class BucketEmbedding(nn.Module):
    def __init__(self, num_buckets: int = 64, dim: int = 4):
        super().__init__()
        self.bucketizer = Bucketizer(low=0.0, bucket_width=0.1, num_buckets=num_buckets)
        self.table = nn.Embedding(num_buckets, dim)

    def forward(self, values: torch.Tensor):
        ids = self.bucketizer(values)
        return ids, self.table(ids)


def main():
    torch.manual_seed(0)
    model = BucketEmbedding().eval()
    # Prices / distances that happen to sit on bucket boundaries.
    values = torch.tensor([0.05, 0.3, 0.5, 0.7, 1.0, 2.5, 4.2, 6.0])

    with torch.no_grad():
        ref_ids, ref_emb = model(values)
        compiled = torch.compile(model)
        got_ids, got_emb = compiled(values)

    print("eager ids   :", ref_ids.tolist())
    print("compiled ids:", got_ids.tolist())
    torch.testing.assert_close(got_ids, ref_ids)
    torch.testing.assert_close(got_emb, ref_emb)
    print("OK")


if __name__ == "__main__":
    main()
