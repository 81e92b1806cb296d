"""The bank of the sample bank bot, an extension: coins, a daily reward, gifts and an hourly leaderboard.

``setup(client)`` adds the :class:`Bank` cog, whose commands, listener and task come and go
together: ``client.load_extension("cogs.bank")`` adds them, ``client.unload_extension`` removes
them, and ``client.reload_extension`` swaps in this file's new code while the bot runs (the
balances, kept in memory here, start afresh; a real bot keeps them in a database).

- ``!balance [member]`` (``!bal``): a balance; everyone starts with 100 coins.
- ``!daily``: 50 coins, once per 24 hours of the client's clock.
- ``!give <member> <amount>``: coins to another member.
- ``!leaderboard``: post the five richest members in this channel now and every hour.
- A member who joins a server gets an account and a welcome in a direct message.
"""

from __future__ import annotations

import threading

from service_client import Client, Cog, CommandContext, CommandError, Member

#: Coins of a new account.
START_COINS = 100
#: Coins of the daily reward, and the seconds between two.
DAILY_COINS = 50
DAILY_S = 24 * 3600


class Bank(Cog):
    """Coins, a daily reward and an hourly leaderboard."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._lock = threading.Lock()  # commands of different channels run at the same time
        self._coins: dict[str, int] = {}
        self._names: dict[str, str] = {}
        self._last_daily: dict[str, float] = {}
        self._boards: set[str] = set()  # channels that get the leaderboard

    def balance_of(self, user_id: str) -> int:
        """The coins of ``user_id`` (an account is opened on first sight)."""
        with self._lock:
            return self._coins.setdefault(user_id, START_COINS)

    def _add(self, user_id: str, name: str, amount: int) -> int:
        with self._lock:
            self._names[user_id] = name
            self._coins[user_id] = self._coins.get(user_id, START_COINS) + amount
            return self._coins[user_id]

    @Cog.command(aliases=["bal"])
    def balance(self, ctx: CommandContext, member: Member | None = None) -> None:
        """Show your balance, or a member's."""
        if member is None:
            ctx.reply(f"You have {self.balance_of(ctx.author.id)} coins.")
        else:
            ctx.reply(f"{member.display_name} has {self.balance_of(member.id)} coins.")

    @Cog.command()
    def daily(self, ctx: CommandContext) -> None:
        """Claim your daily coins."""
        now = self.client.clock.now()
        with self._lock:
            last = self._last_daily.get(ctx.author.id)
            if last is not None and now - last < DAILY_S:
                left = DAILY_S - (now - last)
                hours, minutes = divmod(int(left + 59) // 60, 60)
                raise CommandError(f"You had your daily coins. Come back in {hours} h {minutes} min.")
            self._last_daily[ctx.author.id] = now
        total = self._add(ctx.author.id, ctx.author.username, DAILY_COINS)
        ctx.reply(f"+{DAILY_COINS} coins: you have {total}.")

    @Cog.command()
    def give(self, ctx: CommandContext, member: Member, amount: int) -> None:
        """Give coins to a member."""
        if amount < 1:
            raise CommandError("Give at least 1 coin.")
        if member.id == ctx.author.id:
            raise CommandError("You cannot give coins to yourself.")
        with self._lock:
            mine = self._coins.setdefault(ctx.author.id, START_COINS)
            if mine < amount:
                raise CommandError(f"You have only {mine} coins.")
            self._coins[ctx.author.id] = mine - amount
            self._names[ctx.author.id] = ctx.author.username
        self._add(member.id, member.display_name, amount)
        ctx.reply(f"{member.display_name} got {amount} coins from you.")

    @Cog.command()
    def leaderboard(self, ctx: CommandContext) -> None:
        """Post the leaderboard in this channel now and every hour."""
        with self._lock:
            self._boards.add(ctx.channel_id)
            start = not self.post_leaderboard.is_running()
            if start:
                self.post_leaderboard.start()  # its first run is due at once
        ctx.reply("The leaderboard will be posted here every hour.")

    @Cog.listener()
    def on_guild_member_add(self, member: Member) -> None:
        self._add(member.id, member.display_name, 0)
        self.client.create_dm(member.id).send(f"Welcome! Your account holds {START_COINS} coins.")

    @Cog.every(hours=1)
    def post_leaderboard(self) -> None:
        with self._lock:
            richest = sorted(self._coins.items(), key=lambda item: (-item[1], item[0]))[:5]
            lines = [f"{self._names.get(user_id, user_id)}: {coins}" for user_id, coins in richest]
            boards = sorted(self._boards)
        text = "Leaderboard: " + (", ".join(lines) if lines else "no accounts yet")
        for channel_id in boards:
            self.client.send_message(channel_id, text)


def setup(client: Client) -> None:
    """Add the bank (``client.load_extension("cogs.bank")`` calls it)."""
    client.add_cog(Bank(client))
