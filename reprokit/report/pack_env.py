"""env/ of a pack: collect_env's report, the installed packages, nvidia-smi, the allowlisted variables; a bisect's
also the script's compiler config, its compile arguments and the command line."""

from __future__ import annotations

import json

from reprokit.report.pack_facts import PackFacts
from reprokit.report.redact import Redactor


def env_texts(env_data: dict, *, collect_json: bool = True, smi: tuple = ("txt", "json")) -> dict:
    """env/: collect_env's text (and JSON), the installed packages, and nvidia-smi's `smi` forms on a GPU."""
    texts = {"env/collect_env.txt": env_data.get("text") or env_data.get("error", "")}
    if collect_json:
        texts["env/collect_env.json"] = json.dumps(env_data.get("json") or {}, indent=2, sort_keys=True)
    texts["env/packages.json"] = json.dumps(env_data.get("packages") or {}, indent=2, sort_keys=True)
    found = env_data.get("nvidia_smi")
    if found and "txt" in smi:
        texts["env/nvidia-smi.txt"] = found.get("text", "")
    if found and "json" in smi:
        texts["env/nvidia-smi.json"] = json.dumps(found.get("gpus"), indent=2)
    return texts


def environment_variables(allowed: dict, redactor: Redactor) -> str:
    """env/environment.json: the allowlisted variables recorded in run.json (env.allowed_env), secret-named values
    withheld."""
    variables = {k: redactor.env_value(k, val, "env/environment.json") for k, val in allowed.items()}
    return json.dumps(variables, indent=2, sort_keys=True)


def bisect_env_texts(facts: PackFacts) -> dict:
    """env/ of a bisect pack: versions, allowlisted variables, the script's compiler config and compile args."""
    info, iso = facts.info, facts.verdict.isolation
    texts = env_texts(facts.env)
    texts["env/environment.json"] = environment_variables(facts.variables, facts.redactor)
    texts["env/compiler_config.json"] = json.dumps(facts.first.get("user_configs") or {}, indent=2, sort_keys=True)
    texts["env/compile_args.json"] = json.dumps(iso.compile_args or {}, indent=2, sort_keys=True)
    texts["env/command.txt"] = (info.get("command") or "") + "\n" + "argv: " + json.dumps(iso.argv) + "\n"
    return texts
