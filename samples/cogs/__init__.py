"""The extensions of the sample bank bot (``samples/bank_bot.py``): one module per part of the bot."""
