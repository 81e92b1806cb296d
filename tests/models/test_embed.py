"""EmbedBuilder (protocol 3.8)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from service_client.models import EmbedBuilder


def test_fluent_setters_and_to_dict() -> None:
    e = (
        EmbedBuilder()
        .set_title("T")
        .set_description("D")
        .set_url("http://u")
        .set_color("#3366ff")
        .set_footer("foot", icon_url="http://f")
        .set_image("http://img")
        .set_thumbnail("http://th")
        .set_author("me", url="http://a", icon_url="http://ai")
        .add_field("n1", "v1")
        .add_field("n2", "v2", inline=True)
        .set_timestamp(datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc))
    )
    assert e.to_dict() == {
        "title": "T", "description": "D", "url": "http://u", "color": 0x3366FF,
        "footer": {"text": "foot", "iconUrl": "http://f"}, "image": {"url": "http://img"},
        "thumbnail": {"url": "http://th"}, "author": {"name": "me", "url": "http://a", "iconUrl": "http://ai"},
        "fields": [{"name": "n1", "value": "v1", "inline": False}, {"name": "n2", "value": "v2", "inline": True}],
        "timestamp": "2026-01-02T03:04:05.678Z",
    }


def test_only_set_keys_and_none_removes() -> None:
    assert EmbedBuilder().to_dict() == {}
    assert EmbedBuilder().set_title("x").set_title(None).to_dict() == {}
    assert EmbedBuilder().set_footer("f").to_dict() == {"footer": {"text": "f"}}


def test_color_forms() -> None:
    assert EmbedBuilder().set_color("#FFFFFF").to_dict()["color"] == 0xFFFFFF
    assert EmbedBuilder().set_color("00ff00").to_dict()["color"] == 0x00FF00
    assert EmbedBuilder().set_color(255).to_dict()["color"] == 255
    for bad in ("#12345", "#gggggg", "red", "#1234567"):
        with pytest.raises(ValueError):
            EmbedBuilder().set_color(bad)
    with pytest.raises(ValueError):
        EmbedBuilder().set_color(0x1000000)
    with pytest.raises(TypeError):
        EmbedBuilder().set_color(1.5)  # type: ignore[arg-type]


def test_timestamp_defaults_to_now() -> None:
    before = datetime.now(timezone.utc)
    stamp = EmbedBuilder().set_timestamp().to_dict()["timestamp"]
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert abs((parsed - before).total_seconds()) < 5


def test_to_dict_is_a_copy_and_type_errors() -> None:
    e = EmbedBuilder().add_field("a", "b")
    d = e.to_dict()
    d["fields"].append("junk")
    assert len(e.to_dict()["fields"]) == 1
    with pytest.raises(TypeError, match="title"):
        EmbedBuilder().set_title(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="inline"):
        EmbedBuilder().add_field("a", "b", inline="yes")  # type: ignore[arg-type]
