"""The benchmarks' own checks reuse the suite's fixtures (``tests/conftest.py``): a store on a
SQLite file of the test's own and the loopback fake model; nothing here reaches PostgreSQL or
Redis, so these checks are part of the fast target (``pytest``)."""

from tests.conftest import engine, fake_llm, llm_server, sqlite_template, store

__all__ = ["engine", "fake_llm", "llm_server", "sqlite_template", "store"]
