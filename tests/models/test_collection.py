"""Collection: dict helpers and safe iteration while another thread writes."""

from __future__ import annotations

import threading

import pytest

from service_client.models import Collection


def test_is_a_dict_with_helpers() -> None:
    c: Collection[str, int] = Collection(a=1, b=2, c=3)
    assert isinstance(c, dict)
    assert c.find(lambda v: v > 1) == 2
    assert c.find(lambda v: v > 5) is None
    f = c.filter(lambda v: v != 2)
    assert isinstance(f, Collection) and dict(f) == {"a": 1, "c": 3}
    assert c.first() == 1 and Collection().first() is None
    assert list(c) == ["a", "b", "c"] and c.keys() == ["a", "b", "c"]
    assert c.values() == [1, 2, 3] and c.items() == [("a", 1), ("b", 2), ("c", 3)]
    assert c.pop("a") == 1 and c.pop("zz", None) is None
    c.update({"d": 4})
    assert c.setdefault("d", 9) == 4
    assert dict(c.copy()) == {"b": 2, "c": 3, "d": 4}
    with pytest.raises(TypeError):
        c.find("nope")  # type: ignore[arg-type]


def test_iteration_is_a_snapshot() -> None:
    c: Collection[int, int] = Collection((i, i) for i in range(5))
    seen = []
    for key in c:
        c.pop(key)  # mutating while iterating does not raise
        c[key + 100] = key
        seen.append(key)
    assert seen == [0, 1, 2, 3, 4]


def test_iterate_from_one_thread_while_another_floods_updates() -> None:
    cache: Collection[int, int] = Collection()
    stop = threading.Event()
    writes = [0]

    def writer() -> None:
        i = 0
        while not stop.is_set():
            cache[i % 2000] = i
            if i % 3 == 0:
                cache.pop((i * 7) % 2000, None)
            if i % 1000 == 999:
                cache.update({-k: k for k in range(50)})
            i += 1
        writes[0] = i

    errors: list[BaseException] = []
    thread = threading.Thread(target=writer, name="service_client-test-writer", daemon=True)
    thread.start()
    try:
        iterations = 0
        while iterations < 150:
            try:
                for _ in cache:
                    pass
                _ = sum(1 for _ in cache.values())
                _ = [k for k, _ in cache.items()]
                _ = cache.filter(lambda v: v % 2 == 0)
                _ = cache.find(lambda v: v < 0)
                _ = cache.copy()
                _ = dict(cache.items())
            except RuntimeError as exc:  # "dictionary changed size during iteration"
                errors.append(exc)
                break
            iterations += 1
    finally:
        stop.set()
        thread.join(5)
    assert not errors
    assert writes[0] > 0
