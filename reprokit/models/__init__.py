"""Named architectures built without weights, for `reprokit pack --model`."""
