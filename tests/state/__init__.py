"""Tests of the connection state (state/): the socket event parsers and the message cache, and the fake State the model tests use."""
