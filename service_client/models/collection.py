"""``Collection``: the thread-safe dict every cache is made of, with ``find``, ``filter`` and ``first``;
``ModelList``: the list the ``fetch_*`` methods return. Both show as tables in Jupyter and give a
``pandas.DataFrame`` with ``to_frame()``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any, TypeVar, overload

from .._defaults import MISSING
from .._html import collection_html, data_frame, frame_columns, frame_rows, list_html

__all__ = ["Collection", "ModelList"]

K = TypeVar("K")
V = TypeVar("V")
_D = TypeVar("_D")


class Collection(dict[K, V]):
    """A ``dict`` keyed by id, safe to read and iterate from any thread.

    Writers (``__setitem__``, ``__delitem__``, ``pop``, ``update``, ``clear``,
    ``setdefault``, ``popitem``) run under one re-entrant lock; :meth:`atomic`
    holds it across several steps, so that a read-modify-write is seen whole. Iteration (``iter``,
    ``keys``, ``values``, ``items``) works on a copy taken under that lock, so
    it never raises "dictionary changed size during iteration" while events
    update the cache; what is iterated is the content at the moment iteration
    started. Single lookups (``[]``, ``get``, ``in``, ``len``) read the live dict.
    For a plain-dict snapshot use ``cache.copy()`` or ``dict(cache.items())``:
    ``dict(cache)`` and ``{**cache}`` look keys up one by one and may raise
    KeyError when another thread removes an entry meanwhile.

    Thread-safe.
    """

    __slots__ = ("_lock",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lock = threading.RLock()
        super().__init__(*args, **kwargs)

    def atomic(self) -> AbstractContextManager[Any]:
        """A context manager that holds this collection's lock for a whole block.

        Inside ``with cache.atomic():`` a read-modify-write (look an entry up,
        then replace or remove it) happens as one step: other writers and
        snapshot readers (iteration, ``copy``) wait until the block ends.
        Re-entrant, so the block may use every method of the collection. Keep
        the block short and never do I/O or call user code in it.
        """
        return self._lock

    # -- writers -------------------------------------------------------------

    def __setitem__(self, key: K, value: V) -> None:
        with self._lock:
            dict.__setitem__(self, key, value)

    def __delitem__(self, key: K) -> None:
        with self._lock:
            dict.__delitem__(self, key)

    @overload
    def pop(self, key: K) -> V:
        """Remove ``key`` and return its value; KeyError when absent."""

    @overload
    def pop(self, key: K, default: V | _D) -> V | _D:
        """Remove ``key`` and return its value, or ``default`` when absent."""

    def pop(self, key: K, default: Any = MISSING) -> Any:
        """Remove ``key`` and return its value (``default`` if given and absent, else KeyError)."""
        with self._lock:
            if default is MISSING:
                return dict.pop(self, key)
            return dict.pop(self, key, default)

    def popitem(self) -> tuple[K, V]:
        """Remove and return the last inserted item; KeyError when empty."""
        with self._lock:
            return dict.popitem(self)

    def setdefault(self, key: K, default: V = None) -> V:  # type: ignore[assignment]
        """``dict.setdefault`` under the lock (atomic get-or-insert)."""
        with self._lock:
            return dict.setdefault(self, key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        """``dict.update`` under the lock (the batch is applied atomically)."""
        with self._lock:
            dict.update(self, *args, **kwargs)

    def clear(self) -> None:
        """Remove every entry."""
        with self._lock:
            dict.clear(self)

    def __ior__(self, other: Any) -> Collection[K, V]:  # type: ignore[override,misc]
        self.update(other)
        return self

    # -- snapshot readers ----------------------------------------------------

    def _snapshot(self) -> dict[K, V]:
        # dict.copy() and dict(self) would call the overridden keys()/__iter__;
        # a C-level view of the underlying table does not.
        with self._lock:
            return dict(dict.items(self))

    def copy(self) -> Collection[K, V]:
        """A new Collection with the same entries (a consistent snapshot)."""
        return Collection(self._snapshot())

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._snapshot()))

    def keys(self) -> list[K]:  # type: ignore[override]
        """A list of the keys at this moment (a snapshot, not a live view)."""
        return list(self._snapshot())

    def values(self) -> list[V]:  # type: ignore[override]
        """A list of the values at this moment (a snapshot, not a live view)."""
        return list(self._snapshot().values())

    def items(self) -> list[tuple[K, V]]:  # type: ignore[override]
        """A list of the (key, value) pairs at this moment (a snapshot)."""
        return list(self._snapshot().items())

    def __reversed__(self) -> Iterator[K]:
        return iter(list(self._snapshot())[::-1])

    def __repr__(self) -> str:
        return f"Collection({dict.__repr__(self._snapshot())})"

    def __reduce__(self) -> Any:
        return (Collection, (self._snapshot(),))

    def _repr_html_(self) -> str:
        """A small HTML table of the entries (a snapshot), for Jupyter.

        One row per entry (at most 50, then a row saying how many more); when
        the values are models, the columns are their main attributes. Every
        key and value is HTML-escaped; secrets (tokens) are never shown.
        """
        snapshot = self._snapshot()
        return collection_html(snapshot.items(), len(snapshot), title=type(self).__name__)

    def to_frame(self) -> Any:
        """A ``pandas.DataFrame`` of the values (a snapshot): one row per entry, in insertion order.

        The columns are the values' ``to_dict()`` keys
        (Python names, times as timezone-aware UTC datetimes, nested models by name); values
        that are not models give one ``value`` column. ``id`` is a column like the others::

            frame = guild.members.to_frame()
            frame[frame["bot"]]                          # the bots of the server

        Returns:
            The ``pandas.DataFrame``.

        Raises:
            ImportError: pandas is not installed (``pip install pandas``).
        """
        values = list(self._snapshot().values())
        return data_frame(frame_rows(values), frame_columns(values) or ["value"])

    def to_dicts(self) -> list[dict[str, Any]]:
        """The values' ``to_dict()`` rows (a snapshot, in insertion order; no pandas needed);
        a value that is not a model gives ``{"value": value}``."""
        return frame_rows(list(self._snapshot().values()))

    # -- lookup helpers: find, filter, first ----------------------------------

    def find(self, pred: Callable[[V], bool]) -> V | None:
        """The first value (in insertion order) for which ``pred(value)`` is true.

        Args:
            pred: Called with each value; must not mutate this collection.

        Returns:
            The value, or None when none matches.

        Raises:
            TypeError: ``pred`` is not callable.
        """
        if not callable(pred):
            raise TypeError("pred must be callable")
        for value in self._snapshot().values():
            if pred(value):
                return value
        return None

    def filter(self, pred: Callable[[V], bool]) -> Collection[K, V]:
        """A new Collection of the entries for which ``pred(value)`` is true.

        Raises:
            TypeError: ``pred`` is not callable.
        """
        if not callable(pred):
            raise TypeError("pred must be callable")
        return Collection((k, v) for k, v in self._snapshot().items() if pred(v))

    def first(self) -> V | None:
        """The first inserted value, or None when empty."""
        with self._lock:
            for value in dict.values(self):
                return value
        return None

    def map(self, fn: Callable[[V], _D]) -> list[_D]:
        """``[fn(v) for v in values()]`` over a snapshot."""
        return [fn(v) for v in self._snapshot().values()]

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[K, V]] | Mapping[K, V]) -> Collection[K, V]:
        """Build a Collection from pairs or a mapping."""
        return cls(pairs)


class ModelList(list[V]):
    """A ``list`` of results (what ``fetch_*`` methods and ``pins()`` return) that shows as a
    table in Jupyter and gives a ``pandas.DataFrame``.

    It is a plain ``list`` in every other way (indexing, slicing gives a plain list, equality
    with a list). Not thread-safe for writes, like a list.
    """

    __slots__ = ()

    def _repr_html_(self) -> str:
        """A small HTML table of the items, for Jupyter: one row each (at most 50), the columns
        the models' main attributes; every value escaped, secrets never shown."""
        values = list(self)
        return list_html(values, len(values), title=type(self).__name__)

    def to_frame(self) -> Any:
        """A ``pandas.DataFrame`` of the items, one row each, in order: as
        :meth:`Collection.to_frame`.

        Raises:
            ImportError: pandas is not installed (``pip install pandas``).
        """
        values = list(self)
        return data_frame(frame_rows(values), frame_columns(values) or ["value"])

    def to_dicts(self) -> list[dict[str, Any]]:
        """The items' ``to_dict()`` rows (no pandas needed)."""
        return frame_rows(list(self))
