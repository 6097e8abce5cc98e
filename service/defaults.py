"""A process-wide default instance, built on first use and replaceable (a gateway or a test
installs its own). The producers' module-level functions and the worker's job use one each;
everything else receives its resources explicitly."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Default(Generic[T]):
    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._build()
            return self._value

    def set(self, value: T | None) -> None:
        """Install ``value``; ``None`` builds a fresh one on the next ``get``."""
        with self._lock:
            self._value = value
