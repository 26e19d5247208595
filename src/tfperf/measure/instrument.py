"""Replace library attributes only while a counting block is open; the pattern every counter shares.

``host_syncs``, ``traces`` and ``op_counts`` each keep one :class:`Patches`: the first
block to open installs the wrappers, the last to close restores the originals (also on
exceptions), and blocks may nest or overlap across threads. :meth:`Patches.tampered`
says whether code inside a block removed or replaced a wrapper, so a grading check can
refuse a count that learner code switched off.

:meth:`Patches.keep` installs the wrappers for good (they count nothing outside a block):
a process that runs a learner's answer keeps them from before the answer runs, so the
answer cannot tell a counted call from any other by looking at the library's functions.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_MISSING = object()


class Patches(Generic[T]):
    """Wrappers installed by ``install(patches)`` while at least one block is open."""

    def __init__(self, install: Callable[[Patches[T]], None]):
        self._install = install
        self._lock = threading.RLock()
        self.active: list[T] = []
        self._installed: list[tuple[Any, str, Any, Any]] = []  # owner, name, original, wrapper
        self.kept = False

    def replace(self, owner: Any, name: str, make_wrapper: Callable[[Any], Any]) -> None:
        """Set ``owner.name`` to ``make_wrapper(original)`` (``original`` is None where there was none)."""
        found = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name, _MISSING)
        wrapper = make_wrapper(None if found is _MISSING else found)
        setattr(owner, name, wrapper)
        self._installed.append((owner, name, found, wrapper))

    def _restore(self) -> None:
        for owner, name, original, _ in reversed(self._installed):
            if original is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._installed.clear()

    def tampered(self) -> list[str]:
        """The installed wrappers that are no longer in place (empty when all is well)."""
        with self._lock:
            if self.active and not self._installed:
                return ["every counting patch (removed while counting)"]
            changed = []
            for owner, name, _, wrapper in self._installed:
                now = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name, _MISSING)
                if now is not wrapper:
                    changed.append(f"{getattr(owner, '__name__', owner)}.{name}")
            return changed

    def _installed_now(self) -> None:
        """Install the wrappers where none are (all or none: restored if one fails). Call with the lock held."""
        if not self._installed:
            try:
                self._install(self)
            except BaseException:
                self._restore()
                raise

    def keep(self) -> list[tuple[Any, str]]:
        """Install the wrappers now, if they are not, and keep them installed after every block ends; the attributes
        replaced, as ``(owner, name)``."""
        with self._lock:
            self._installed_now()
            self.kept = True
            return [(owner, name) for owner, name, _, _ in self._installed]

    @contextlib.contextmanager
    def block(self, record: T) -> Iterator[T]:
        """Install the wrappers if none are, count into ``record`` until the block ends."""
        with self._lock:
            self._installed_now()
            self.active.append(record)
        try:
            yield record
        finally:
            with self._lock:
                with contextlib.suppress(ValueError):
                    self.active.remove(record)
                if not self.active and not self.kept:
                    self._restore()

    @property
    def is_open(self) -> bool:
        return bool(self.active)
