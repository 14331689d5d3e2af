"""The models the linearizability checker knows, by name (see each module's doc)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from typing import Final

from core.compiled import extend_path

__path__ = extend_path(__name__, __path__)

from checkers.linear.model import Model, ModelError

_WHERE: Final = {
    "register": ("register", "REGISTER"),
    "cas-register": ("register", "CAS_REGISTER"),
    "etcd": ("register", "ETCD"),
    "kv": ("kv", "KV"),
    "mutex": ("mutex", "MUTEX"),
    "multi-register": ("multi_register", "MULTI_REGISTER"),
}
"""Each model's module (in this package) and name there."""


class _Models(Mapping[str, Model]):
    """The models by name, each module imported when its model is first asked for (a
    check needs one model: importing them all was a tenth of a small check's start-up)."""

    def __getitem__(self, name: str) -> Model:
        module, attr = _WHERE[name]
        full = f"{__name__}.{module}"  # asked per file checked: the import system once
        model: Model = getattr(sys.modules.get(full) or importlib.import_module(full), attr)
        return model

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


MODELS: Final[Mapping[str, Model]] = _Models()


def get_model(model: str | Model) -> Model:
    """A model by name (or the model itself); ModelError names the choices."""
    if not isinstance(model, str):
        return model
    try:
        return MODELS[model]
    except KeyError:
        raise ModelError(f"unknown model {model!r}: choose one of {', '.join(MODELS)}") from None
