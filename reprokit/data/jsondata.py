"""JsonData: the dict and JSON round-trip of the frozen dataclasses of plain values that pass between layers."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, ClassVar


def _from_dict(cls, data):
    if data is None:
        return None
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


class JsonData:
    """Mixin: dict / JSON round-trip for frozen dataclasses of plain values."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # every subclass is a dataclass: asdict() takes it

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data):
        return _from_dict(cls, data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)
