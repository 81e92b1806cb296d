"""The economy of the sample economy bot (``samples/economy_bot.py``), an extension.

Balances live in SQLite, so they survive a restart of the bot; so does the time of each
member's last daily reward, read from the client's wall clock (``client.clock.utcnow()``).

- ``!balance [member]`` (``!bal``): a balance; everyone starts with 100 coins.
- ``!daily``: 50 coins, once per 24 hours.
- ``!give <member> <amount>``: coins to another member.
- ``!work``: 10 coins, once an hour per member (a dispatcher cooldown kept in SQLite).
- ``!grant <member> <amount>``: the Banker role prints coins.
- ``!board``: the Banker role makes this channel get the leaderboard every hour.
- ``!shop``: the shop, a message to react to: each emoji buys an item, the receipt comes by DM.
- A member who joins a server gets a welcome in a direct message.
"""

from __future__ import annotations

import datetime
import sqlite3
import threading

from service_client import Client, Cog, CommandContext, CommandError, Member, ReactionEvent, User, has_role

#: Coins of a new account.
START_COINS = 100
#: Coins of the daily reward, and the time between two.
DAILY_COINS = 50
DAILY = datetime.timedelta(hours=24)
#: The role allowed to print coins and to place the leaderboard.
BANKER = "Banker"
#: The shop: emoji -> (item, price).
SHOP = {
    "\N{HOT BEVERAGE}": ("coffee", 30),
    "\N{CROWN}": ("crown", 500),
}

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (user_id TEXT PRIMARY KEY, name TEXT NOT NULL, coins INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS dailies (user_id TEXT PRIMARY KEY, claimed TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS boards (channel_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS shops (message_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS purchases (user_id TEXT NOT NULL, item TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cooldowns (key TEXT PRIMARY KEY, until TEXT NOT NULL);
"""


class Ledger:
    """The bot's SQLite database: accounts, daily rewards, leaderboards, shops and cooldowns.

    Thread-safe: commands of different channels run at the same time.
    """

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.lock = threading.Lock()
        with self.lock, self.db:
            self.db.executescript(SCHEMA)

    def close(self) -> None:
        """Close the database."""
        with self.lock:
            self.db.close()

    def balance(self, user_id: str) -> int:
        """The coins of ``user_id``."""
        with self.lock:
            row = self.db.execute("SELECT coins FROM accounts WHERE user_id = ?", (user_id,)).fetchone()
        return START_COINS if row is None else int(row[0])

    def add(self, user_id: str, name: str, amount: int, *, at_least: int | None = None) -> int | None:
        """Add ``amount`` (negative to take); None, with nothing changed, when it would leave less than ``at_least``."""
        with self.lock, self.db:
            row = self.db.execute("SELECT coins FROM accounts WHERE user_id = ?", (user_id,)).fetchone()
            coins = (START_COINS if row is None else int(row[0])) + amount
            if at_least is not None and coins < at_least:
                return None
            self.db.execute("INSERT OR REPLACE INTO accounts VALUES (?, ?, ?)", (user_id, name, coins))
            return coins

    def richest(self, count: int) -> list[tuple[str, int]]:
        """The ``count`` richest accounts: (name, coins), richest first."""
        with self.lock:
            rows = self.db.execute("SELECT name, coins FROM accounts ORDER BY coins DESC, name LIMIT ?",
                                   (count,)).fetchall()
        return [(str(name), int(coins)) for name, coins in rows]

    def claim_daily(self, user_id: str, now: datetime.datetime) -> datetime.timedelta | None:
        """Record a daily claim at ``now``; or the time left, with nothing recorded, when the last was too recent."""
        with self.lock, self.db:
            row = self.db.execute("SELECT claimed FROM dailies WHERE user_id = ?", (user_id,)).fetchone()
            if row is not None:
                left = datetime.datetime.fromisoformat(row[0]) + DAILY - now
                if left > datetime.timedelta(0):
                    return left
            self.db.execute("INSERT OR REPLACE INTO dailies VALUES (?, ?)", (user_id, now.isoformat()))
            return None

    def rows(self, table: str) -> list[str]:
        """The ids of ``boards`` or ``shops``."""
        with self.lock:
            return [str(row[0]) for row in self.db.execute(f"SELECT * FROM {table} ORDER BY 1")]  # noqa: S608

    def remember(self, table: str, value: str) -> None:
        """Add an id to ``boards`` or ``shops``."""
        with self.lock, self.db:
            self.db.execute(f"INSERT OR IGNORE INTO {table} VALUES (?)", (value,))  # noqa: S608

    def buy(self, user_id: str, name: str, item: str, price: int) -> int | None:
        """Take ``price`` coins for ``item``: the coins left, or None when the buyer has too few."""
        left = self.add(user_id, name, -price, at_least=0)
        if left is not None:
            with self.lock, self.db:
                self.db.execute("INSERT INTO purchases VALUES (?, ?)", (user_id, item))
        return left

    # The dispatcher's cooldown store (the CooldownStore protocol).
    def get(self, key: str) -> datetime.datetime | None:
        """When the cooldown of ``key`` ends, or None."""
        with self.lock:
            row = self.db.execute("SELECT until FROM cooldowns WHERE key = ?", (key,)).fetchone()
        return datetime.datetime.fromisoformat(row[0]) if row else None

    def set(self, key: str, until: datetime.datetime) -> None:
        """Remember when the cooldown of ``key`` ends."""
        with self.lock, self.db:
            self.db.execute("INSERT OR REPLACE INTO cooldowns VALUES (?, ?)", (key, until.isoformat()))


def in_words(left: datetime.timedelta) -> str:
    """``23 h 12 min``: a wait, rounded up to the minute."""
    minutes = -(-int(left.total_seconds()) // 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


class Economy(Cog):
    """Coins, a daily reward, a shop and an hourly leaderboard."""

    def __init__(self, client: Client, ledger: Ledger) -> None:
        self.client = client
        self.ledger = ledger

    @Cog.command(aliases=["bal"])
    def balance(self, ctx: CommandContext, member: Member | None = None) -> None:
        """Show your balance, or a member's."""
        if member is None:
            ctx.reply(f"You have {self.ledger.balance(ctx.author.id)} coins.")
        else:
            ctx.reply(f"{member.display_name} has {self.ledger.balance(member.id)} coins.")

    @Cog.command()
    def daily(self, ctx: CommandContext) -> None:
        """Claim your daily coins."""
        left = self.ledger.claim_daily(ctx.author.id, self.client.clock.utcnow())
        if left is not None:
            raise CommandError(f"You had your daily coins. Come back in {in_words(left)}.")
        total = self.ledger.add(ctx.author.id, ctx.author.username, DAILY_COINS)
        ctx.reply(f"+{DAILY_COINS} coins: you have {total}.")

    @Cog.command(cooldown=3600)
    def work(self, ctx: CommandContext) -> None:
        """Work an hour for 10 coins."""
        total = self.ledger.add(ctx.author.id, ctx.author.username, 10)
        ctx.reply(f"+10 coins: you have {total}.")

    @Cog.command()
    def give(self, ctx: CommandContext, member: Member, amount: int) -> None:
        """Give coins to a member."""
        if amount < 1:
            raise CommandError("Give at least 1 coin.")
        if member.id == ctx.author.id:
            raise CommandError("You cannot give coins to yourself.")
        if self.ledger.add(ctx.author.id, ctx.author.username, -amount, at_least=0) is None:
            raise CommandError(f"You have only {self.ledger.balance(ctx.author.id)} coins.")
        self.ledger.add(member.id, member.display_name, amount)
        ctx.reply(f"{member.display_name} got {amount} coins from you.")
        self.client.create_dm(member.id).send(f"{ctx.author.username} gave you {amount} coins.")

    @Cog.command(hidden=True)
    @has_role(BANKER)
    def grant(self, ctx: CommandContext, member: Member, amount: int) -> None:
        """Print coins for a member."""
        total = self.ledger.add(member.id, member.display_name, amount)
        ctx.reply(f"{member.display_name} has {total} coins.")

    @Cog.command()
    @has_role(BANKER)
    def board(self, ctx: CommandContext) -> None:
        """Post the leaderboard in this channel every hour."""
        self.ledger.remember("boards", ctx.channel_id)
        ctx.reply("The leaderboard will be posted here every hour.")

    @Cog.command()
    def shop(self, ctx: CommandContext) -> None:
        """Open the shop: react to buy."""
        text = "Shop: react to buy. " + ", ".join(f"{emoji} {item} ({price} coins)"
                                                  for emoji, (item, price) in SHOP.items())
        posted = ctx.send(text)
        self.ledger.remember("shops", posted.id)
        for emoji in SHOP:
            posted.add_reaction(emoji)

    @Cog.listener()
    def on_message_reaction_add(self, info: ReactionEvent, user: User, message_id: str) -> None:
        if user.bot or info.emoji not in SHOP or message_id not in self.ledger.rows("shops"):
            return
        item, price = SHOP[info.emoji]
        left = self.ledger.buy(user.id, user.username, item, price)
        dm = self.client.create_dm(user.id)
        if left is None:
            dm.send(f"A {item} costs {price} coins; you have {self.ledger.balance(user.id)}.")
        else:
            dm.send(f"You bought a {item} for {price} coins. {left} coins left.")

    @Cog.listener()
    def on_guild_member_add(self, member: Member) -> None:
        self.ledger.add(member.id, member.display_name, 0)
        self.client.create_dm(member.id).send(f"Welcome! Your account holds {START_COINS} coins.")

    @Cog.every(hours=1, start_on_ready=True)
    def leaderboard(self) -> None:
        richest = self.ledger.richest(5)
        text = "Leaderboard: " + (", ".join(f"{name}: {coins}" for name, coins in richest) or "no accounts yet")
        for channel_id in self.ledger.rows("boards"):
            self.client.send_message(channel_id, text)


def setup(client: Client) -> None:
    """Add the economy (``client.load_extension("cogs.economy")`` calls it)."""
    import economy_bot  # the bot's settings: its database

    client.add_cog(Economy(client, economy_bot.ledger_of(client)))
