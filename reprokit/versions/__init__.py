"""Which torch releases a failure affects: managed environments per release, the check run in each, bisection."""
