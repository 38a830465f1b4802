"""The secret formats the redactor knows: (kind, pattern); the whole match is replaced unless the pattern has a
group named "secret".

Measured against detect-secrets 1.5.0 on tests/secret_corpus.py (54 formats then; 55 now): its plugins report a line's secret
type but yield only a regex group (`ghp` of a GitHub token, the header of a private key), so they cannot say what
to cut; they recognised 14 of the 54 formats, and took 4.7 s per MB of log (2.6 s of it the keyword plugin). The
formats its plugins know and these rules lacked (Stripe, SendGrid, Twilio, Telegram, npm, Slack webhooks,
Discord, Mailchimp, Square) were ported here; detect-secrets stays a test dependency, a second opinion over the
scrubbed corpus (tests/test_redact_corpus.py).
"""

from __future__ import annotations

import re

# Names of variables whose values are secrets (environment, run.json): presence only, never the value.
SECRET_NAME = re.compile(r"TOKEN|SECRET|KEY|PASS|CREDENTIAL|AUTH", re.IGNORECASE)

_V = r"[\"']?(?P<secret>[^\s\"',;&]+)"  # an unquoted or quoted value up to a separator
_PEM_TAIL = r"(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,.\[\]_-]*)"
# A secret word at the end of a lower- or mixed-case name (db_password, api_key, client_secret) ...
_WORD = r"(?:passw(?:or)?d|pwd|secret|api_?key|apikey|access_?key|secret_?key|private_?key|auth_?token|token)"
# ... and in an environment-style upper-case name (STRIPE_KEY, DB_PASS, HF_TOKEN, MY_SECRET_2).
_UPPER = r"(?:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|API_?KEY|(?<![A-Z])KEY|(?<![A-Z])PASS|PWD)[A-Z0-9_]*"
# Words that end code, not values: `api_key: str = ...`, `password = None`.
_CODE_VALUES = r"(?!(?:str|int|bool|float|bytes|None|True|False|Optional|self|cls|os|torch)\b)"

PATTERNS = [
    ("private key block", re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----" + _PEM_TAIL)),
    ("github token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("hugging face token", re.compile(r"\b(?:hf_|api_org_)[A-Za-z0-9]{20,}")),
    ("api key (sk-)", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}")),
    ("stripe key", re.compile(r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("aws access key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")),
    ("aws secret key", re.compile(r"(?i)aws.{0,20}?(?:secret|key).{0,5}?[=:]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})")),
    ("gcp api key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("gcp client secret", re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{20,}")),
    ("slack token", re.compile(r"\bxox[a-z]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}")),
    (
        "webhook url",
        re.compile(
            r"(?i)(?:hooks\.slack\.com/(?:services|workflows|triggers)/|"
            r"discord(?:app)?\.com/api/webhooks/|webhook\.office\.com/webhookb2/)"
            r"(?P<secret>[A-Za-z0-9/_@.-]+)"
        ),
    ),
    ("gitlab token", re.compile(r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt)-[A-Za-z0-9_-]{20,}")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{30,}")),
    ("pypi token", re.compile(r"\bpypi-AgEI[A-Za-z0-9_-]{50,}")),
    ("sendgrid key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    ("twilio key", re.compile(r"\b(?:SK|AC)[0-9a-f]{32}\b")),
    ("telegram bot token", re.compile(r"\b\d{8,10}:AA[0-9A-Za-z_-]{32,}")),
    ("databricks token", re.compile(r"\bdapi[0-9a-f]{32}(?:-\d)?\b")),
    ("mailchimp key", re.compile(r"\b[0-9a-f]{32}-us\d{1,2}\b")),
    ("square secret", re.compile(r"\bsq0(?:csp|atp)-[0-9A-Za-z_-]{22,}")),
    ("discord bot token", re.compile(r"\b[MNO][A-Za-z\d]{23,25}\.[\w-]{6}\.[\w-]{27,}")),
    ("wandb key", re.compile(r"(?i)wandb.{0,30}?\b(?P<secret>[0-9a-f]{40})\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("url credentials", re.compile(r"(?<=://)(?P<secret>[^/@\s:\"']+(?::[^/@\s\"']*)?)@")),
    ("azure key", re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<secret>[^;\s\"']+)")),
    (
        "url signature",
        re.compile(r"(?i)[?&](?:sig|signature|x-amz-signature|token|access_token)=(?P<secret>[^&\s\"'#]+)"),
    ),
    ("npmrc auth", re.compile(r"(?i):?_(?:authToken|auth|password)\s*=\s*" + _V)),
    (
        "authorization header",
        re.compile(
            r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest|bot|negotiate)\s+)?"
            r"(?P<secret>[A-Za-z0-9._~+/=-]{6,})"
        ),
    ),
    ("bearer token", re.compile(r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{12,}=*)")),
    (
        "api key header",
        re.compile(r"(?i)\b(?:x-api-key|api-key|x-auth-token|private-token|x-access-token|x-goog-api-key)\s*:\s*" + _V),
    ),
    ("netrc password", re.compile(r"(?i)\b(?:machine|login)\s+\S+\s+(?:login\s+\S+\s+)?password\s+(?P<secret>\S+)")),
    ("netrc password", re.compile(r"(?im)^\s*password\s+(?P<secret>\S+)\s*$")),
    ("password argument", re.compile(r"\bmysql(?:dump|admin)?\b[^\n]*?\s-p(?P<secret>[^\s\"']+)")),
    ("password argument", re.compile(r"\bcurl\b[^\n]*?\s(?:-u|--user)[=\s]+[\"']?[^:\s\"']+:(?P<secret>[^\s\"']+)")),
    (
        "password argument",
        re.compile(
            r"(?i)\b(?:docker|podman|helm|buildah)\s+(?:registry\s+)?login\b[^\n]*?"
            r"\s-p\s+(?P<secret>[^\s\"']+)"
        ),
    ),
    (
        "secret argument",
        re.compile(
            r"(?i)(?<![\w-])--?(?:password|passwd|pass|pwd|token|api[-_]?key|key|secret|access[-_]?key|auth|"
            r"credentials?|client[-_]secret)(?:[-_](?:token|key|secret|file|value))?(?:=|\s+)" + _V
        ),
    ),
    # NAME=value with an environment-variable style name (.env files, shells, logs) ...
    ("secret assignment", re.compile(_UPPER + r"\s*(?<![=!<>])[=:](?!=)\s*" + _V.replace("]+)", "]{3,})"))),
    # ... name = "literal" in code, any case ...
    ("secret literal", re.compile(r"(?i)" + _WORD + r"\w*[\"']?\s*[=:]\s*\\?[\"'](?P<secret>[^\"'\s\\]{4,})\\?[\"']")),
    # ... and lower-case `db_password=x` (.env) or `password: x` (YAML): the name must end in the secret word, so
    # `tokens = torch.randint(...)` and `max_tokens: int` stay code, and a call or attribute is not a value.
    (
        "secret assignment",
        re.compile(
            r"(?i)"
            + _WORD
            + r"[\"']?[ \t]*(?<![=!<>])[=:](?!=)[ \t]*(?:\\?[\"'])?"
            + _CODE_VALUES
            + r"(?P<secret>[^\s\"'(),\[\]{}\\]{4,})(?![\w.]*\()"
        ),
    ),
]

# Lower-case strings of which a text must hold one for a kind's pattern to be tried: one substring search instead
# of a regex pass per kind keeps scrubbing a large log cheap. A kind not named here is always tried.
NEEDLES = {
    "private key block": ("private key",),
    "github token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "hugging face token": ("hf_", "api_org_"),
    "api key (sk-)": ("sk-",),
    "stripe key": ("k_live_", "k_test_"),
    "aws access key": ("akia", "asia", "agpa", "aida", "aroa", "anpa"),
    "aws secret key": ("aws",),
    "gcp api key": ("aiza",),
    "gcp client secret": ("gocspx-",),
    "slack token": ("xox", "xapp-"),
    "webhook url": ("hooks.slack.com", "discord", "webhook.office.com"),
    "gitlab token": ("gl",),
    "npm token": ("npm_",),
    "pypi token": ("pypi-",),
    "sendgrid key": ("sg.",),
    "telegram bot token": (":aa",),
    "databricks token": ("dapi",),
    "mailchimp key": ("-us",),
    "square secret": ("sq0",),
    "wandb key": ("wandb",),
    "jwt": ("eyj",),
    "url credentials": ("://",),
    "azure key": ("accountkey", "sharedaccess"),
    "url signature": ("sig=", "signature=", "token="),
    "npmrc auth": ("_auth", "_password"),
    "authorization header": ("authorization",),
    "bearer token": ("bearer",),
    "api key header": ("api-key", "auth-token", "private-token", "access-token"),
    "netrc password": ("password",),
    "password argument": ("mysql", "login", "curl"),
    "secret argument": ("pass", "pwd", "token", "key", "secret", "auth", "credential"),
    "secret assignment": ("pass", "pwd", "token", "key", "secret", "credential"),
    "secret literal": ("pass", "pwd", "token", "key", "secret"),
}
