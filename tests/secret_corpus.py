"""Sample secrets, one per format, each as the line a log, a shell or a file would show it.

(format, line, the secret in it). Values are made up, and assembled from pieces so that no scanner flags this file.
"""

B64 = "q3Vx9ZkT7LmN2pR8sW4yB6cD1fG5hJ0k"  # 32 characters of token-like noise
HEX = "3f9a6c2e8b1d7f40a5c9e3b2d6f8a1c4"


def _pem(kind: str, body: str = "MIIEowIBAAKCAQEA" + B64 + B64, end: bool = True) -> str:
    head = "-----BEGIN " + kind + "-----\n" + body + "\n" + B64 + "Zx\n"
    return head + ("-----END " + kind + "-----\n" if end else "")


CORPUS = [
    ("github classic token", "export GH=ghp_" + B64 + "ab12", "ghp_" + B64 + "ab12"),
    ("github fine-grained token", "token github_pat_11ABCDEFG0" + B64 + "_" + B64, "github_pat_11ABCDEFG0" + B64),
    ("github oauth token", "using gho_" + B64 + "Zz99", "gho_" + B64 + "Zz99"),
    ("github app token", "ghs_" + B64 + "Yy88 expires", "ghs_" + B64 + "Yy88"),
    ("hugging face token", "login hf_" + B64 + "Xyz", "hf_" + B64 + "Xyz"),
    ("hugging face org token", "api_org_" + B64 + "Qr", "api_org_" + B64 + "Qr"),
    ("openai key", "client = OpenAI(api_key=sk-proj-" + B64 + ")", "sk-proj-" + B64),
    ("anthropic key", "ANTHROPIC=sk-ant-api03-" + B64 + "-" + B64, "sk-ant-api03-" + B64),
    ("aws access key id", "aws_access_key_id = AKIA" + "Q7ZK3RTVB5NX2MWA", "AKIA" + "Q7ZK3RTVB5NX2MWA"),
    ("aws secret access key", "aws_secret_access_key = " + B64 + "wJalrXUt", B64 + "wJalrXUt"),
    ("gcp api key", "key=AIza" + "Sy" + B64 + "-_a", "AIza" + "Sy" + B64 + "-_a"),
    ("gcp oauth client secret", "client_secret GOCSPX-" + B64[:28], "GOCSPX-" + B64[:28]),
    ("slack bot token", "xoxb-" + "123456789012-1234567890123-" + B64[:24], "xoxb-" + "123456789012-1234567890123"),
    ("slack user token", "SLACK xoxp-" + "123456789012-1234567890123-" + B64, "xoxp-" + "123456789012-1234567890123"),
    ("slack refresh token", "refresh xoxe-" + "1-" + B64 + B64, "xoxe-" + "1-" + B64),
    ("slack rotating token", "xoxe." + "xoxp-1-" + B64 + B64, "xoxp-1-" + B64),
    ("slack app token", "app xapp-" + "1-A0123BCDEF-1234567890123-" + HEX, "xapp-" + "1-A0123BCDEF-1234567890123"),
    (
        "slack webhook",
        "POST https://hooks.slack.com/services/" + "T0123ABCD/B0123ABCD/" + B64[:24],
        "T0123ABCD/B0123ABCD/" + B64[:24],
    ),
    (
        "discord webhook",
        "https://discord.com/api/webhooks/" + "123456789012345678/" + B64 + B64,
        "123456789012345678/" + B64,
    ),
    ("wandb key", "wandb login " + HEX + "0a1b2c3d", HEX + "0a1b2c3d"),
    (
        "jwt",
        "cookie eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + B64,
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + B64,
    ),
    ("url credentials", "git clone https://alice:" + "hunter2Pass@github.com/x/y.git", "hunter2Pass"),
    ("database url", "DATABASE_URL=postgres://app:" + "Pg5ecretPw@db:5432/main", "Pg5ecretPw"),
    ("rsa private key", _pem("RSA PRIVATE KEY"), B64 + "Zx"),
    ("private key cut off (no END line)", "[... 81920 bytes cut ...]\n" + _pem("PRIVATE KEY", end=False), B64 + "Zx"),
    (
        "openssh private key cut off",
        _pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA" + B64, end=False),
        "b3BlbnNzaC1rZXktdjEAAAAA" + B64,
    ),
    ("pgp private key block", _pem("PGP PRIVATE KEY BLOCK", "lQOYBGX" + B64 + "\n=aB3d"), "lQOYBGX" + B64),
    ("netrc", "machine api.example.com login alice password " + "n3trcPassw0rd", "n3trcPassw0rd"),
    ("dotenv stripe key", "STRIPE_KEY=" + "plainStripeValue42", "plainStripeValue42"),
    ("dotenv db pass", "DB_PASS=" + "Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("dotenv lower-case password", "db_password=" + "lowercasePw99", "lowercasePw99"),
    ("yaml unquoted password", "  password: " + "yamlPassw0rd", "yamlPassw0rd"),
    ("yaml unquoted api key", "api_key: " + "yamlApiKey123", "yamlApiKey123"),
    (
        "authorization bearer",
        "send: b'GET / HTTP/1.1\\r\\nAuthorization: Bearer " + "opaqueBearer123abc\\r\\n'",
        "opaqueBearer123abc",
    ),
    ("authorization basic", "Authorization: Basic " + "YWxpY2U6czNjcjN0UGFzcw==", "YWxpY2U6czNjcjN0UGFzcw=="),
    ("api key header", "X-Api-Key: " + "headerKey0987zyx", "headerKey0987zyx"),
    ("--key argument", "train.py --key " + "argKeyValue777", "argKeyValue777"),
    ("--password= argument", "serve --password=" + "argPassValue888", "argPassValue888"),
    ("mysql -p", "mysql -u root -p" + "MySqlSecret9 -h db", "MySqlSecret9"),
    ("curl -u user:password", "curl -u alice:" + "curlPw7788 https://api.example.com", "curlPw7788"),
    ("docker login -p", "docker login -u bob -p " + "dockerPw4455 registry.io", "dockerPw4455"),
    (
        "azure storage account key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + B64 + B64 + "==;",
        B64 + B64 + "==",
    ),
    (
        "azure sas signature",
        "https://acct.blob.core.windows.net/c?sv=2022&sig=" + "AbCdEf0123456789%2BxyzSig%3D",
        "AbCdEf0123456789%2BxyzSig%3D",
    ),
    ("npm token", "npm_" + B64 + "Abcd", "npm_" + B64 + "Abcd"),
    (
        "npmrc auth token",
        "//registry.npmjs.org/:_authToken=" + "0a1b2c3d-4e5f-6789-abcd-ef0123456789",
        "0a1b2c3d-4e5f-6789-abcd-ef0123456789",
    ),
    ("gitlab personal token", "PRIVATE-TOKEN: glpat-" + B64[:20], "glpat-" + B64[:20]),
    ("stripe live key", "stripe.api_key = sk_live_" + B64 + "xy", "sk_live_" + B64 + "xy"),
    ("stripe restricted key", "rk_live_" + B64 + "Q1", "rk_live_" + B64 + "Q1"),
    ("sendgrid key", "SG." + B64[:22] + "." + B64 + "abcdefghijk", "SG." + B64[:22]),
    ("pypi token", "password = pypi-AgEIcHlwaS5vcmc" + B64 + B64, "pypi-AgEIcHlwaS5vcmc" + B64),
    ("twilio key", "twilio SK" + HEX, "SK" + HEX),
    ("telegram bot token", "bot 123456789:" + "AAH" + B64, "AAH" + B64),
    ("databricks token", "dapi" + HEX, "dapi" + HEX),
    ("quoted literal in code", 'db_secret = "' + "codeLiteralSecret1" + '"', "codeLiteralSecret1"),
    ("TOKEN assignment", "MY_SERVICE_TOKEN=" + "tokenVal-5555", "tokenVal-5555"),
]

# Code and torch's words a scrubber must leave whole: operators (`//` is no path), URLs that name no machine,
# torch's own relative paths. The export guard is pytorch/pytorch#181097's, as ep.module() raises it.
CODE_KEPT = [
    "AssertionError: Guard failed: x.size()[0] // 5 != 1",
    "n_blocks = x.shape[0] // 5 + total // block; half = (s0 + 1)/2; a/b//c",
    "see https://github.com/pytorch/pytorch/issues/181097 and https://pytorch.org/docs/stable/export.html",
    "torch/_inductor/codegen/cpp.py:1234 in codegen_kernel; ../third_party/gloo/gloo/transport/tcp/pair.cc:534",
    "Suggested fixes:\n  batch = Dim('batch', max=16) // 2",
]
# A home, a temp folder and a virtual environment: this machine's places, as a run records them (report/places.py).
MACHINE_PLACES = [
    ("/home/alice/venvs/t/lib/python3.11/site-packages", "<site-packages>"),
    ("/home/alice", "<home>"),
    ("/tmp", "<tmp>"),
]
# (line, the machine's path in it): the path is replaced, and the code beside it stays whole.
PATHS_REPLACED = [
    ('File "/home/alice/proj/serve.py", line 26: Guard failed: x.size()[0] // 5 != 1', "/home/alice/proj"),
    ("/tmp/torchinductor_alice/ab/cabcd.cpp:12:3: error: x // 5", "/tmp/torchinductor_alice"),
    ("/home/alice/venvs/t/lib/python3.11/site-packages/torch/export/_trace.py:1077", "/home/alice/venvs"),
    ("written to /work/checkout/artifacts/run/repro.py (see https://github.com/pytorch/pytorch)", "/work/checkout"),
]
