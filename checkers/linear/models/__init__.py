"""The models the linearizability checker knows, by name (see each module's doc)."""

from __future__ import annotations

from typing import Final

from core.compiled import extend_path

__path__ = extend_path(__name__, __path__)

from checkers.linear.model import Model, ModelError
from checkers.linear.models.kv import KV
from checkers.linear.models.multi_register import MULTI_REGISTER
from checkers.linear.models.mutex import MUTEX
from checkers.linear.models.register import CAS_REGISTER, ETCD, REGISTER

MODELS: Final[dict[str, Model]] = {
    "register": REGISTER,
    "cas-register": CAS_REGISTER,
    "etcd": ETCD,
    "kv": KV,
    "mutex": MUTEX,
    "multi-register": MULTI_REGISTER,
}


def get_model(model: str | Model) -> Model:
    """A model by name (or the model itself); ModelError names the choices."""
    if not isinstance(model, str):
        return model
    try:
        return MODELS[model]
    except KeyError:
        raise ModelError(f"unknown model {model!r}: choose one of {', '.join(MODELS)}") from None
