"""EDN symbols, apart from the reader (``core.formats.edn`` is compiled with mypyc, whose
native classes cannot subclass ``str``)."""

from __future__ import annotations


class Symbol(str):
    """An EDN symbol (``foo``, not the keyword ``:foo``): a string that is not a name a
    Jepsen op uses, so that a reader can tell one from a keyword."""

    __slots__ = ()
