"""detect-secrets 1.5.0 vs reprokit's rules: formats caught (as located values) and ms per MB on a clean TORCH_LOGS-like log.

Run from the checkout root: python tests/measure_redaction.py (needs detect-secrets)."""

import sys
import tempfile
import time

sys.path.insert(0, "tests")
sys.path.insert(0, ".")
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.settings import default_settings
from secret_corpus import CORPUS

from reprokit.report import keyed
from reprokit.report.redact import Redactor

lines = [
    f"V1123 01:02:03.456000 1234 torch/_inductor/graph.py:{i} [0/0] buf{i} = empty_strided_cpu((4, 16), (16, 1), torch.float32) key_states token kernel cidgcdipbf{i}23ipx2qi22f5"
    for i in range(2000)
]
text = "\n".join(lines)[:250_000]
mb = len(text) / 1e6


def calib():
    t = time.perf_counter()
    sum(range(10**6))
    return (time.perf_counter() - t) * 1000


with default_settings():
    plugins = [c() for c in get_mapping_from_secret_type_to_class().values()]
    located = detected = 0
    for _fmt, line, secret in CORPUS:
        found = [m for l in line.splitlines() for p in plugins for m in p.analyze_string(l)]
        detected += bool(found)
        located += any(secret in m for m in found)
    print(f"detect-secrets: {detected}/{len(CORPUS)} lines flagged, {located} with the secret's value located")
    c0 = calib()
    t = time.perf_counter()
    [list(p.analyze_string(l)) for l in text.splitlines() for p in plugins]
    ds = (time.perf_counter() - t) * 1000 / mb
r = Redactor(known_secrets=[], home="/nonexistent", user="", host="")
t = time.perf_counter()
r.scrub(text, "x")
own = (time.perf_counter() - t) * 1000 / mb
d = tempfile.mkdtemp()
keyed.record(d, {f"A{i}_TOKEN": "v" * (8 + 3 * i) for i in range(5)})
r = Redactor.for_run(d)
t = time.perf_counter()
r.scrub(text, "x")
own_keyed = (time.perf_counter() - t) * 1000 / mb
own_ok = sum(s not in Redactor(known_secrets=[], home="/x", user="", host="").scrub(l, "x") for _, l, s in CORPUS)
print(f"reprokit rules: {own_ok}/{len(CORPUS)} redacted")
print(
    f"ms/MB: detect-secrets {ds:.0f}, reprokit rules {own:.0f}, rules + keyed hashes (5 lengths) {own_keyed:.0f}; "
    f"calibration sum(range(1e6)) {c0:.0f} ms (about 10 ms on an idle core)"
)
