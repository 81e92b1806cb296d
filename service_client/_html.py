"""HTML tables for Jupyter, and the plain rows pandas is given: what ``_repr_html_``,
``to_dict()`` and ``to_frame()`` of models and collections return.

A model renders as a two-column table (attribute, value) of its ``_HTML``
attributes; a :class:`Collection` renders as
one row per entry, its columns the ``_HTML`` attributes of its first value
when that is a model. It sits in the package's lowest layer, beside the other leaves, and
recognises a model by the attributes it declares (``_REPR``, ``_HTML``), not by its class.
Pure: no I/O, no request (the attributes listed by the
models never make one).

Every text is escaped with :func:`html.escape` (quotes included), values are
shortened to :data:`MAX_TEXT` characters, tables to :data:`MAX_ROWS` rows,
and a ``Secret`` (a token) shows only as
``[REDACTED]``.

:func:`model_dict` gives the same attributes as a dict of plain Python values (times stay
aware ``datetime`` objects in UTC, a nested model becomes its name), and :func:`data_frame`
turns such rows into a ``pandas.DataFrame``; pandas is optional and imported on first use.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ._secret import Secret

__all__ = ["MAX_ROWS", "MAX_TEXT", "class_columns", "collection_html", "data_frame", "frame_columns", "frame_rows",
           "list_html", "model_dict", "model_html", "plain_value", "require_pandas"]

#: Rows shown before a table is cut (a last row says how many were left out).
MAX_ROWS = 50
#: Characters of one value shown before it is cut with an ellipsis.
MAX_TEXT = 120
#: Entries of a nested list or collection named in one cell before only a count is given.
MAX_LISTED = 5

_STYLE = "border-collapse:collapse;font-size:0.9em"


def _escape(text: str, quote: bool = True) -> str:
    """:func:`html.escape`, its package imported on first use (it costs about 1.5 ms)."""
    from html import escape as html_escape

    return html_escape(text, quote=quote)


def _attrs(model: Any) -> tuple[str, ...]:
    fields: tuple[str, ...] = getattr(model, "_HTML", ()) or getattr(model, "_REPR", ())
    return fields


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "\u2026"


def _label(value: Any) -> str:
    """A short name for a model shown inside a cell."""
    for attr in ("display_name", "username", "name", "code", "id"):
        try:
            found = getattr(value, attr, None)
        except Exception:  # noqa: BLE001 - a cell never breaks the table
            continue
        if isinstance(found, str) and found:
            return found
    return type(value).__name__


def _is_model(value: Any) -> bool:
    """True for a model (it declares the attributes its repr shows); this module sits below the
    model base class and so recognises models by that declaration."""
    return isinstance(getattr(type(value), "_REPR", None), tuple)


def _text(value: Any) -> str:
    """The plain text of one cell (not yet escaped)."""
    if isinstance(value, Secret):
        return repr(value)
    if value is None:
        return "None"
    if _is_model(value):
        return _label(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, enum.Flag):
        names = [flag.name for flag in type(value) if flag.name and flag in value and bin(flag.value).count("1") == 1]
        if not names:
            return str(int(value))  # type: ignore[call-overload]
        return " | ".join(names) if len(names) <= MAX_LISTED else f"{len(names)} permissions"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, (str, int, float, bool)):
        return str(value)
    if isinstance(value, Mapping):
        items: Iterable[Any] = list(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    else:
        return repr(value)
    items = list(items)
    if len(items) <= MAX_LISTED and all(isinstance(i, (str, int, float)) or _is_model(i) for i in items):
        return ", ".join(_text(i) for i in items)
    return f"{len(items)} items"


def _cell(value: Any) -> str:
    return _escape(_cut(_text(value)), quote=True)


def _read(model: Any, attr: str) -> Any:
    try:
        return getattr(model, attr)
    except Exception:  # noqa: BLE001 - a cell never breaks the table
        return "?"


def model_html(model: object) -> str:
    """The HTML table of one model: its class name, then one row per ``_HTML`` attribute.

    Args:
        model: Any model.

    Returns:
        An HTML ``<table>`` fragment, every value escaped.
    """
    rows = "".join(
        f"<tr><th style='text-align:left'>{_escape(attr)}</th><td style='text-align:left'>"
        f"{_cell(_read(model, attr))}</td></tr>"
        for attr in _attrs(model)
    )
    caption = _escape(type(model).__name__)
    return f"<table style='{_STYLE}'><caption style='text-align:left'><b>{caption}</b></caption>{rows}</table>"


def collection_html(items: Iterable[tuple[Any, Any]], count: int, *, title: str = "Collection") -> str:
    """The HTML table of a collection: one row per entry, at most :data:`MAX_ROWS`.

    Args:
        items: The ``(key, value)`` pairs (a snapshot).
        count: The number of entries (shown in the caption).
        title: The caption's name.

    Returns:
        An HTML ``<table>`` fragment, every key and value escaped. When the
        first value is a model, the columns are its ``_HTML`` attributes
        (other values show in one wide cell), after a ``key`` column unless
        every key is its value's ``id``; else ``key`` and ``value``.
    """
    pairs = list(items)
    shown = pairs[:MAX_ROWS]
    first = shown[0][1] if shown else None
    columns = _attrs(first) if _is_model(first) else ()
    kind = type(first)
    # The usual case, keys that are the values' ids, needs no column of its own.
    keyed = not (columns and "id" in columns and all(k == _read(v, "id") for k, v in shown))
    heads = (("key",) if keyed else ()) + (columns or ("value",))
    header = "".join(f"<th style='text-align:left'>{_escape(c)}</th>" for c in heads)
    body = []
    for key, value in shown:
        if columns and type(value) is kind:
            cells = "".join(f"<td style='text-align:left'>{_cell(_read(value, c))}</td>" for c in columns)
        else:
            cells = f"<td style='text-align:left' colspan='{max(1, len(columns))}'>{_cell(value)}</td>"
        key_cell = f"<td style='text-align:left'>{_cell(key)}</td>" if keyed else ""
        body.append(f"<tr>{key_cell}{cells}</tr>")
    if len(pairs) > len(shown):
        span = len(heads)
        body.append(f"<tr><td colspan='{span}'>\u2026 and {len(pairs) - len(shown)} more</td></tr>")
    noun = "entry" if count == 1 else "entries"
    what = f" of {_escape(kind.__name__)}" if columns else ""
    caption = f"<b>{_escape(title)}</b>{what}: {count} {noun}"
    return (
        f"<table style='{_STYLE}'><caption style='text-align:left'>{caption}</caption>"
        f"<thead><tr>{header}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def list_html(values: Iterable[Any], count: int, *, title: str) -> str:
    """The HTML table of a list of results: :func:`collection_html` keyed by the models' ids (so
    no key column), else by the positions.

    Args:
        values: The values (a snapshot).
        count: How many there are (shown in the caption).
        title: The caption's name.
    """
    pairs = [(_read(value, "id") if _is_model(value) and "id" in _attrs(value) else index, value)
             for index, value in enumerate(values)]
    return collection_html(pairs, count, title=title)


def _dict_fields(model: Any) -> tuple[str, ...]:
    fields: tuple[str, ...] = getattr(model, "_DICT", ()) or _attrs(model)
    return fields


def plain_value(value: Any) -> Any:
    """One value as :func:`model_dict` gives it: what the HTML cell shows, as Python data.

    ``None``, ``str``, ``int`` (an ``IntFlag`` such as ``Permissions`` included), ``float``,
    ``bool`` and aware ``datetime`` values stay as they are; a model becomes its name (the
    same label the tables show); another enum its value; a list, tuple, set or mapping of
    values a list of their plain values; a ``Secret`` ``"[REDACTED]"``; anything else its
    ``repr``.
    """
    if isinstance(value, Secret):
        return "[REDACTED]"
    if value is None or isinstance(value, (str, int, float, datetime)):
        return value  # bool and IntFlag are ints
    if _is_model(value):
        return _label(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return [plain_value(v) for v in list(value.values())]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain_value(v) for v in list(value)]
    return repr(value)


def model_dict(model: Any) -> dict[str, Any]:
    """A model as a dict of plain values, for pandas, JSON-like storage or a quick look.

    The keys are the model's Python attribute names: its ``_DICT`` fields, else those of its
    HTML table. A field ``"author.id"`` reads ``model.author.id`` into the key ``"author_id"``,
    and ``"username=user.username"`` reads ``model.user.username`` into ``"username"``.
    An attribute that cannot be read gives None. No request is made.
    """
    out: dict[str, Any] = {}
    for field in _dict_fields(model):
        key, path = _key_and_path(field)
        value: Any = model
        for part in path.split("."):
            try:
                value = getattr(value, part, None)
            except Exception:  # noqa: BLE001 - a row never breaks the table
                value = None
            if value is None:
                break
        out[key] = plain_value(value)
    return out


def _key_and_path(field: str) -> tuple[str, str]:
    """``"username=user.username"`` -> ``("username", "user.username")``; ``"author.id"`` ->
    ``("author_id", "author.id")``; ``"id"`` -> ``("id", "id")``."""
    key, sep, path = field.partition("=")
    if sep:
        return key, path
    return field.replace(".", "_"), field


def data_frame(rows: list[dict[str, Any]], columns: tuple[str, ...] | list[str]) -> Any:
    """A ``pandas.DataFrame`` of ``rows`` with these columns, in this order.

    Args:
        rows: One dict per row (:func:`model_dict`'s).
        columns: The column names; with no rows the frame still has them.

    Returns:
        The ``pandas.DataFrame``.

    Raises:
        ImportError: pandas is not installed (the text says how to install it).
    """
    return require_pandas().DataFrame.from_records(rows, columns=list(columns))


def require_pandas() -> Any:
    """The ``pandas`` module, imported now: a ``to_frame()`` that must read first calls it before
    reading, so that a missing pandas costs no request and consumes nothing.

    Raises:
        ImportError: pandas is not installed (the text says how to install it).
    """
    try:
        import pandas
    except ImportError as exc:
        raise ImportError(
            "to_frame() needs pandas, which is not installed: pip install pandas "
            "(to_dict() gives the same rows as plain dicts without it)",
            name="pandas",
        ) from exc
    return pandas


def class_columns(kind: type) -> list[str]:
    """The :func:`model_dict` keys of a model class: the columns of a frame of its models when
    there is none to read them from."""
    fields: tuple[str, ...] = getattr(kind, "_DICT", ()) or getattr(kind, "_HTML", ()) or getattr(kind, "_REPR", ())
    return [_key_and_path(field)[0] for field in fields]


def frame_columns(values: list[Any]) -> list[str]:
    """The columns of a frame of these models: the :func:`model_dict` keys of the first one's
    class, then any other key met (values of another class), in order; ``value`` when a value
    is not a model (the key :func:`frame_rows` gives it), so that no row is lost."""
    columns: list[str] = []
    for value in values:
        keys = [_key_and_path(field)[0] for field in _dict_fields(value)] if _is_model(value) else ["value"]
        for key in keys:
            if key not in columns:
                columns.append(key)
    return columns


def frame_rows(values: list[Any]) -> list[dict[str, Any]]:
    """One :func:`model_dict` per model; another value becomes ``{"value": plain_value(v)}``."""
    return [model_dict(v) if _is_model(v) else {"value": plain_value(v)} for v in values]
