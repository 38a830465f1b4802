"""Where trials run: the executor's name and its SLURM settings, as the CLI, an --executor-config file and run.json
give them."""

from __future__ import annotations

import dataclasses
import json
import os

from reprokit.errors import ReprokitError

EXECUTORS = ("local", "slurm")


@dataclasses.dataclass(frozen=True)
class ExecutorSettings:
    """local (the default) or slurm with the settings its jobs are submitted with; time in minutes."""

    name: str = "local"
    partition: str | None = None
    account: str | None = None
    time: int = 60
    gpus_per_node: int = 0
    nodes_per_trial: int = 1
    max_jobs: int = 8

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> ExecutorSettings:
        """Settings from run.json or a config file; unknown keys are bad input, not silently dropped."""
        data = {k.replace("-", "_").removeprefix("slurm_"): v for k, v in (data or {}).items()}
        data = {("name" if k == "executor" else k): v for k, v in data.items()}
        unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ReprokitError(f"unknown executor setting(s): {', '.join(unknown)}")
        settings = cls(**data)
        if settings.name not in EXECUTORS:
            raise ReprokitError(f"--executor takes one of {', '.join(EXECUTORS)} (got {settings.name})")
        for field in ("time", "nodes_per_trial", "max_jobs"):
            if int(getattr(settings, field)) < 1:
                raise ReprokitError(f"--slurm-{field.replace('_', '-')} takes a number of 1 or more")
        return settings


def load_settings(config_file: str | None, overrides: dict) -> ExecutorSettings:
    """The config file's settings (JSON or TOML, by its suffix), then every option the user passed on top."""
    data: dict = {}
    if config_file:
        if not os.path.isfile(config_file):
            raise ReprokitError(f"--executor-config: no such file: {config_file}")
        try:
            with open(config_file, "rb") as f:
                if config_file.endswith(".toml"):
                    import tomllib  # 3.11+; a JSON file works everywhere

                    data = tomllib.load(f)
                else:
                    data = json.load(f)
        except ValueError as e:
            raise ReprokitError(f"--executor-config: {config_file} is not valid JSON or TOML: {e}") from None
        if isinstance(data.get("slurm"), dict):  # [slurm] table, or {"slurm": {...}}
            data = {**{k: v for k, v in data.items() if k != "slurm"}, **data["slurm"]}
    data.update({k: v for k, v in overrides.items() if v is not None})
    if "name" not in data and "executor" not in data and data:
        data["name"] = "slurm"  # a config file or a --slurm-* option is only ever for the cluster
    return ExecutorSettings.from_dict(data)
