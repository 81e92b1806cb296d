"""Fixtures of the store's unit tests: each repository on an in-memory sqlite database, built alone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service_client.emulator.store.database import Database
from service_client.emulator.store.members import MemberRepository
from service_client.emulator.store.servers import ServerRepository
from service_client.emulator.store.users import UserRepository


@pytest.fixture
def db() -> Iterator[Database]:
    """A fresh in-memory database, closed after the test."""
    database = Database()
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def users(db: Database) -> UserRepository:
    return UserRepository(db)


@pytest.fixture
def servers(db: Database, users: UserRepository) -> ServerRepository:
    return ServerRepository(db, users=users)


@pytest.fixture
def members(db: Database, users: UserRepository, servers: ServerRepository) -> MemberRepository:
    return MemberRepository(db, users=users, servers=servers)
