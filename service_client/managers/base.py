"""The base manager and the convention every manager follows.

- every manager holds a ``cache`` (:class:`Collection`) and ``resolve()``;
- ``fetch*`` methods take keyword-only ``cache: bool = True``: with True they
  insert or overwrite entries and never purge others; with False they write
  nothing to any cache (not even the users they meet);
- ``fetch*`` methods always perform a request, even when the entry is cached:
  use ``cache.get()`` or ``resolve()`` to read without one.

One shape rule for every accessor of the library: what is read from a cache
(``cache`` itself, ``guild.channels``, ``guild.categories``,
``guild.members``, ``member.roles``, ``category.channels``,
``members.for_guild()``, ``voice_states.in_channel()``) is a
:class:`Collection`, a dict keyed by id (iterating gives ids, ``.values()``
the objects) and makes no request; what asks the service (``fetch*``,
``search_*``, ``audit_log``, ``pins``, ``webhooks``, ``overwrites``,
``reactions_for``) returns a list in the service's order
(``channel.history()`` an iterator that fetches page by page).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from .._html import collection_html
from ..models._port import StateLike, state_of
from ..models.collection import Collection

__all__ = ["BaseManager"]


K = TypeVar("K", bound=Hashable)
M = TypeVar("M")


class BaseManager(Generic[K, M]):
    """A cache of models keyed by id, plus the requests that fill it.

    Thread-safe: the cache is a :class:`Collection`; methods may be called
    from any thread, listeners included.

    Attributes:
        cache: The entries, keyed by public id (see each manager for its key).
    """

    __slots__ = ("_state", "cache")

    #: The model class ``resolve`` accepts as already resolved.
    model: type[Any] = object

    def __init__(self, state: StateLike) -> None:
        """Create an empty manager that sends its requests through ``state``."""
        self._state = state_of(state)
        self.cache: Collection[K, M] = Collection()

    def resolve(self, id_or_object: Any) -> M | None:
        """The cached entry for an id, or the model itself when given one.

        Never performs a request.

        Args:
            id_or_object: A cache key, or an instance of this manager's model.

        Returns:
            The cached entry (the cached object for a given model whose key is
            cached), the given model when it is not cached, or None.
        """
        if isinstance(id_or_object, self.model):
            cached = self.cache.get(self._key_of(id_or_object))
            return cached if cached is not None else id_or_object
        try:
            return self.cache.get(id_or_object)
        except TypeError:  # unhashable
            return None

    def resolve_id(self, id_or_object: Any) -> K | None:
        """The key of an id or model (no request), or None for anything else."""
        if isinstance(id_or_object, self.model):
            return self._key_of(id_or_object)
        if isinstance(id_or_object, str) and id_or_object:
            return id_or_object  # type: ignore[return-value]
        return None

    def get(self, key: K) -> M | None:
        """``cache.get(key)``."""
        return self.cache.get(key)

    def _key_of(self, obj: Any) -> K:
        return obj.id  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self.cache)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cached={len(self.cache)}>"

    def _repr_html_(self) -> str:
        """The HTML table of :attr:`cache` (see :meth:`Collection._repr_html_`), for Jupyter."""
        snapshot = self.cache.copy()
        return collection_html(snapshot.items(), len(snapshot), title=f"{type(self).__name__}.cache")
