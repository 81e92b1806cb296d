"""The emulator's web page in a real Chromium: a person chats with the sample bot in a browser.

Every test drives the page only through what a person does (pick a user, click, type, press
Enter) and reads only what the page shows; the bot and the emulator are the real ones.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import threading
from typing import Any

import pytest
import requests

from service_client import EmbedBuilder
from service_client.emulator import Emulator

from .conftest import Demo

pytestmark = pytest.mark.browser

expect: Any = None  # playwright's expect, imported once a test runs (playwright may be missing)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "_static" / "emulator-page.png"
#: Set to 1 to refresh the committed screenshot from this run.
UPDATE_SCREENSHOT_ENV = "SERVICE_CLIENT_UPDATE_SCREENSHOT"
BOT_WAIT_S = 15.0


@pytest.fixture(autouse=True)
def _expect() -> None:
    global expect
    playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = playwright_api.expect


def message(page: Any, text: str) -> Any:
    """The message of the open channel whose text is exactly ``text``."""
    return page.locator("#messages .msg").filter(has=page.locator(".content", has_text=text)).filter(
        has=page.get_by_text(text, exact=True))


def open_channel(page: Any, name: str) -> None:
    page.locator(f'#channels .channel[data-name="{name}"]').click()
    expect(page.locator("#channel-name")).to_have_text(f"#{name}")


def send(page: Any, text: str) -> None:
    composer = page.locator("#composer")
    composer.fill(text)
    composer.press("Enter")
    expect(composer).to_have_value("")


def watch_notices(page: Any) -> None:
    """Record every notice text and connection state the page shows, in order, in ``window.__seen``
    (so a state that lasts a moment is not missed by polling)."""
    page.evaluate("""() => {
        window.__seen = [];
        const note = (text) => { if (window.__seen[window.__seen.length - 1] !== text) window.__seen.push(text); };
        const scan = () => {
            for (const n of document.querySelectorAll('#notices .notice-text')) note('notice: ' + n.textContent);
            note('connection: ' + document.getElementById('connection').textContent);
        };
        new MutationObserver(scan).observe(document.body, {childList: true, subtree: true, characterData: true});
    }""")


def seen(page: Any) -> list[str]:
    return list(page.evaluate("() => window.__seen"))


def test_alice_sends_ping_in_general_and_the_sample_bots_pong_appears(demo: Demo, open_page: Any) -> None:
    page = open_page("alice")
    expect(page.locator("#testonly")).to_contain_text("test-only")
    page.get_by_role("button", name="Demo Server").click()
    open_channel(page, "general")
    send(page, "!ping")
    mine = message(page, "!ping")
    expect(mine.locator(".author")).to_have_text("alice")
    pong = message(page, "Pong!")
    expect(pong.locator(".author")).to_have_text("pingbot")
    expect(pong.locator(".badge")).to_have_text("BOT")
    expect(mine.locator(".badge")).to_have_count(0)
    # the sample bot replies to the message: the page shows what it answers
    expect(pong.locator(".reply-ref")).to_contain_text("alice !ping")
    expect(page.locator("#pending .pending-item")).to_have_count(0)  # the echo settled the send
    # replying to the bot from the page sends replyToId: the reply shows what it answers
    pong.locator(".act-reply").click()
    expect(page.locator("#reply-text")).to_have_text("Replying to pingbot: Pong!")
    send(page, "thanks")
    expect(message(page, "thanks").locator(".reply-ref")).to_contain_text("pingbot Pong!")
    expect(page.locator("#reply-bar")).to_be_hidden()


def test_an_embed_reply_renders_its_title_fields_colour_and_footer(demo: Demo, open_page: Any,
                                                                    tmp_path: pathlib.Path) -> None:
    @demo.bot.on("message_create")
    def card(msg: Any) -> None:
        if msg.content == "!card" and msg.author is not None and not msg.author.bot:
            msg.reply(EmbedBuilder().set_title("Build #42").set_description("All green")
                      .set_color("#2ecc71").add_field("Tests", "1,204 passed", inline=True)
                      .add_field("Time", "3 min", inline=True).set_footer("ci"))

    page = open_page("alice")
    open_channel(page, "general")
    send(page, "!ping")
    expect(message(page, "Pong!")).to_have_count(1)
    send(page, "!card")  # no command of the sample bot's dispatcher: it stays silent, this listener answers
    embed = page.locator("#messages .msg .embed")
    expect(embed.locator(".embed-title")).to_have_text("Build #42")
    expect(embed.locator(".embed-description")).to_have_text("All green")
    expect(embed.locator(".embed-field-name")).to_have_text(["Tests", "Time"])
    expect(embed.locator(".embed-field-value")).to_have_text(["1,204 passed", "3 min"])
    expect(embed.locator(".embed-footer")).to_have_text("ci")
    expect(embed).to_have_css("border-left-color", "rgb(46, 204, 113)")
    reply = page.locator("#messages .msg").filter(has=page.locator(".embed"))
    expect(reply.locator(".badge")).to_have_text("BOT")
    expect(reply.locator(".reply-ref")).to_contain_text("alice !card")
    expect(page.locator("#messages .msg")).to_have_count(4)  # !ping, Pong!, !card, the card: no "Unknown command"
    # a reaction and a screenshot of the whole conversation, for the docs
    message(page, "Pong!").locator('.actions [data-emoji="\U0001F44D"]').click()
    expect(message(page, "Pong!").locator(".reaction .reaction-count")).to_have_text("1")
    shot = tmp_path / "emulator-page.png"
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get(UPDATE_SCREENSHOT_ENV) == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)


def test_a_message_posted_through_the_control_plane_appears_live(demo: Demo, open_page: Any) -> None:
    page = open_page("alice")
    open_channel(page, "general")
    expect(page.locator("#messages .msg")).to_have_count(0)
    text = "<b>not bold</b> & kept as typed"
    posted = requests.post(demo.emulator.control_url + "/messages", timeout=10, json={
        "channelId": demo.channel_id("general"), "authorId": demo.seed["bot"]["publicId"], "content": text})
    assert posted.status_code == 201, posted.text
    shown = message(page, text)
    expect(shown).to_have_count(1)
    expect(shown.locator(".content b")).to_have_count(0)  # text, never HTML
    expect(shown.locator(".author")).to_have_text("pingbot")
    # a message in another channel marks that channel unread instead of showing up here
    demo.emulator.post_message(demo.channel_id("random"), demo.seed["bot"]["publicId"], "elsewhere")
    expect(page.locator('#channels .channel[data-name="random"]')).to_have_class("channel unread")
    expect(page.locator("#messages").get_by_text("elsewhere")).to_have_count(0)


def test_edits_and_deletes_show_live(demo: Demo, open_page: Any) -> None:
    page = open_page("alice")
    open_channel(page, "general")
    sent = demo.bot.send_message(demo.channel_id("general"), "first version")
    expect(message(page, "first version")).to_have_count(1)
    sent.edit("second version")
    edited = message(page, "second version")
    expect(edited.locator(".edited")).to_have_text("(edited)")
    expect(page.locator("#messages").get_by_text("first version")).to_have_count(0)
    sent.delete()
    expect(page.locator("#messages").get_by_text("second version")).to_have_count(0)
    expect(page.locator("#messages .msg")).to_have_count(0)


def test_a_reaction_click_reaches_the_bot_as_message_reaction_add(demo: Demo, open_page: Any) -> None:
    got: list[tuple[Any, Any, Any]] = []
    arrived = threading.Event()

    @demo.bot.on("message_reaction_add")
    def on_reaction(info: Any, user: Any, message_id: Any) -> None:
        got.append((info, user, message_id))
        arrived.set()

    page = open_page("alice")
    open_channel(page, "general")
    send(page, "!ping")
    pong = message(page, "Pong!")
    expect(pong).to_have_count(1)
    pong_id = pong.get_attribute("data-id")
    pong.locator('.actions [data-emoji="\U0001F44D"]').click()
    assert arrived.wait(BOT_WAIT_S), "the bot never got message_reaction_add"
    info, user, message_id = got[0]
    assert message_id == pong_id
    assert info["emoji"] == "\U0001F44D" and info["count"] == 1
    assert user.id == demo.seed["human"]["publicId"]
    chip = pong.locator(".reaction")
    expect(chip).to_have_class("reaction mine")
    expect(chip.locator(".reaction-count")).to_have_text("1")
    chip.click()  # clicking one's own reaction again takes it back
    expect(chip).to_have_count(0)


def test_a_member_who_may_not_view_a_private_channel_does_not_see_it(demo: Demo, emulator: Emulator,
                                                                       open_page: Any) -> None:
    bob = emulator.create_user("bob")
    emulator.add_member(demo.server_id, bob["user"]["publicId"])
    created = requests.post(f"{emulator.control_url}/servers/{demo.server_id}/channels", timeout=10,
                            json={"name": "staff-only", "type": "TEXT", "isPrivate": True})
    assert created.status_code == 201, created.text
    owner = open_page("alice")
    expect(owner.locator('#channels .channel[data-name="staff-only"]')).to_have_count(1)
    page = open_page("bob")
    expect(page.locator('#channels .channel[data-name="general"]')).to_have_count(1)
    expect(page.locator('#channels .channel[data-name="staff-only"]')).to_have_count(0)


@pytest.mark.parametrize(("how", "reason"), [("server_disconnect", "io server disconnect"),
                                             ("drop_transport", "transport close")])
def test_a_dropped_connection_shows_the_notice_and_the_page_reconnects(demo: Demo, open_page: Any,
                                                                        how: str, reason: str) -> None:
    page = open_page("alice")
    open_channel(page, "general")
    watch_notices(page)
    alice = demo.seed["human"]["publicId"]
    assert getattr(demo.emulator, how)(alice) >= 1
    page.wait_for_function("() => window.__seen.some(s => s.startsWith('notice: Reconnected'))")
    expect(page.locator("#connection")).to_have_text("connected")
    history = seen(page)
    lost = history.index(f"notice: Connection lost ({reason}). Reconnecting\u2026 Messages sent meanwhile "
                         "are not delivered.")
    assert any(s.startswith("connection: disconnected") for s in history[lost:]), history
    assert lost < next(i for i, s in enumerate(history) if s.startswith("notice: Reconnected")), history
    # the new socket is a working one: a live message and a send both go through
    demo.emulator.post_message(demo.channel_id("general"), demo.seed["bot"]["publicId"], "after the drop")
    expect(message(page, "after the drop")).to_have_count(1)
    send(page, "!ping")
    expect(message(page, "Pong!")).to_have_count(1)


def test_refused_sends_and_403s_show_visible_notices(demo: Demo, emulator: Emulator, open_page: Any) -> None:
    bob = emulator.create_user("bob")["user"]
    emulator.add_member(demo.server_id, bob["publicId"])
    everyone = next(r for r in emulator.member(demo.server_id, bob["publicId"])["roles"] if r["name"] == "@everyone")
    emulator.update_role(demo.server_id, everyone["publicId"], permissions=str(512))  # view, never send
    page = open_page("bob")
    # listing members needs VIEW_MEMBERS: the 403 shows in the members panel
    expect(page.locator("#members .members-error")).to_contain_text("403")
    open_channel(page, "general")
    # with refusal errors on, the service says why at once
    emulator.configure(send_errors=True)
    send(page, "hello?")
    expect(page.locator(".notice-error")).to_contain_text("messages.errors.missing_permission")
    # by default a refused send produces nothing on the wire: the page says so after 10 s
    emulator.configure(send_errors=False)
    send(page, "anyone?")
    expect(page.locator(".notice-error").filter(has_text="not delivered")).to_have_count(1, timeout=25_000)
    expect(page.locator("#pending .failed")).to_contain_text("anyone?")
    expect(page.locator("#messages .msg")).to_have_count(0)


def test_typing_and_presence_follow_the_socket(demo: Demo, emulator: Emulator, open_page: Any) -> None:
    bob = emulator.create_user("bob")["user"]
    emulator.add_member(demo.server_id, bob["publicId"])
    alice_page = open_page("alice")
    open_channel(alice_page, "general")
    bob_dot = alice_page.locator(f'#members .member[data-user="{bob["publicId"]}"] .dot')
    expect(bob_dot).to_have_class("dot status-offline")
    bob_page = open_page("bob")  # opening the page makes bob appear online
    expect(bob_dot).to_have_class("dot status-online")
    open_channel(bob_page, "general")
    bob_page.locator("#status").select_option("dnd")
    expect(bob_dot).to_have_class("dot status-dnd")
    bob_page.locator("#composer").press_sequentially("hel")
    expect(alice_page.locator("#typing")).to_have_text("bob is typing\u2026")
    bob_page.locator("#composer").press("Enter")
    expect(alice_page.locator("#typing")).to_have_text("")
    expect(message(alice_page, "hel").locator(".author")).to_have_text("bob")


def test_a_dm_with_the_bot(demo: Demo, open_page: Any) -> None:
    page = open_page("alice")
    bot_id = demo.seed["bot"]["publicId"]
    page.locator(f'#members .member[data-user="{bot_id}"] .member-dm').click()
    expect(page.locator("#channel-name")).to_have_text("@pingbot")
    send(page, "!ping")
    expect(message(page, "Pong!").locator(".author")).to_have_text("pingbot")
    expect(page.locator('#channels .channel.dm[data-name="pingbot"]')).to_have_count(1)


def test_the_admin_panel_drives_the_world_and_shows_the_socket_events(demo: Demo, emulator: Emulator,
                                                                      open_page: Any) -> None:
    page = open_page("alice")
    events = page.locator("#events .event")
    page.locator("#admin-channel-name").fill("announcements")
    page.get_by_role("button", name="Create channel").click()
    expect(page.locator('#channels .channel[data-name="announcements"]')).to_have_count(1)
    expect(events.filter(has_text="server:channels_updated")).not_to_have_count(0)
    carol = emulator.create_user("carol")["user"]
    picker = page.locator("#admin-member-user")
    expect(picker.locator("option", has_text="carol")).to_have_count(0)  # created after the page loaded
    picker.focus()  # opening a picker refreshes the user list
    expect(picker.locator("option", has_text="carol")).to_have_count(1)
    picker.select_option(label="carol")
    page.get_by_role("button", name="Add member").click()
    expect(events.filter(has_text="server:member_add")).to_have_count(1)
    member = page.locator(f'#members .member[data-user="{carol["publicId"]}"]')
    expect(member).to_have_count(1)
    page.get_by_role("button", name="Kick").click()
    expect(events.filter(has_text="server:member_removed")).to_have_count(1)
    expect(member).to_have_count(0)
    # a refused control call is a visible notice too
    page.get_by_role("button", name="Kick").click()
    expect(page.locator(".notice-error")).to_contain_text("404")
