"""States as the same value in every process: their canonical encoding, fingerprint and orbit
representative, for a search whose processes share nothing but values (``checks/sparkbfs``).

Rules
-----
1. The encoding of a state is ``canonical_text(export_state(system, state))`` (``checks/explore/
   fingerprint.py``, ``checks/explore/system.py`` ``PortableStates``): the process-independent value of
   each id written canonically (sets sorted), ints as they are. ``Portable`` builds it from per-id texts
   kept by id (an id's value never changes in a process), so each value is written once per process.
2. The fingerprint of a state is BLAKE2b-64 of its encoding (``digest64``): the same in every process
   and on every machine, never Python's ``hash``. It is not the one-process search's fingerprint (which
   hashes this process's ids): only fingerprints of one kind are ever compared.
3. Symmetry: one-process representatives are the smallest tuple of this process's ids
   (``models/symmetry.py`` rule 4) and so differ between processes. Here the representative of an orbit
   is the image whose encoding is smallest (``SymmetryImages``), a choice every process makes alike; the
   orbit's size is the number of distinct encodings among the images, exactly ``canonical_batch``'s.
   Orbits, hence states per level, are those of the one-process search (its rule 7).
4. A state crosses processes as the pickle of a tuple (``wire``): its ints that mean the same everywhere,
   and for each id the pickle of its value (made once per id and process). The receiving process turns
   each value's bytes into its own id (``import_values``), once per distinct bytes it is sent (a state
   shares most values with others), so the state read back is ``import_state`` of the exported value.
   Only the encoding is ever hashed, never a pickle (equal values may pickle differently).
"""

from __future__ import annotations

import pickle
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from checks.explore.fingerprint import Canonical, Fingerprints, digest64
from checks.explore.system import PortableStates, SymmetryImages, offers

PICKLE_PROTOCOL = 5


class Portable:
    """Rules 1 to 4 for one system in one process."""

    def __init__(self, system: Any, *, symmetry: bool = True) -> None:
        if not offers(system, PortableStates):
            raise ValueError(f"{getattr(system, 'name', system)}: the system offers no PortableStates: its states "
                             "cannot cross processes")
        self.system = system
        self.layout = list(system.portable_layout())
        group = getattr(system, "symmetry_group_size", 1)
        self.symmetric = symmetry and offers(system, SymmetryImages) and isinstance(group, int) and group > 1
        self.group_size = group if self.symmetric else 1
        self.texts: dict[int, list[str]] = {space: [] for space in self.layout if space is not None}
        self.values: dict[int, list[Hashable]] = {space: [] for space in self.texts}
        self.pickled: dict[int, list[bytes | None]] = {space: [] for space in self.texts}  # rule 4, by id
        self.received: dict[int, dict[bytes, int]] = {space: {} for space in self.texts}  # rule 4: bytes -> id
        self.canonical = Canonical()

    def _known(self, space: int, top: int) -> None:
        """Texts and values of the ids of ``space`` below ``top``."""
        texts, values = self.texts[space], self.values[space]
        if top > len(texts):
            fresh = self.system.export_values(space, list(range(len(texts), top)))
            values.extend(fresh)
            texts.extend(self.canonical(value) for value in fresh)
            self.canonical.by_id.clear()  # the memo keys by identity: kept per batch only

    def encode(self, state: Sequence[int]) -> str:
        """Rule 1: ``canonical_text(export_state(system, state))``."""
        parts = []
        for number, space in zip(state, self.layout, strict=True):
            if space is None:
                parts.append(repr(int(number)))
                continue
            texts = self.texts[space]
            if number >= len(texts):
                self._known(space, max(int(number) + 1, self.system.known_ids(space)))
            parts.append(texts[number])
        return "(" + ",".join(parts) + ")"

    def export(self, state: Sequence[int]) -> tuple[Hashable, ...]:
        """``export_state(system, state)`` from the kept values."""
        out: list[Hashable] = []
        for number, space in zip(state, self.layout, strict=True):
            if space is None:
                out.append(int(number))
                continue
            if number >= len(self.values[space]):
                self._known(space, max(int(number) + 1, self.system.known_ids(space)))
            out.append(self.values[space][number])
        return tuple(out)

    def representatives(self, states: Sequence[Any]) -> tuple[list[tuple[int, ...]], list[str], list[int]]:
        """Per state (tuples or rows of ints): its orbit's representative (rule 3; the state itself
        without symmetry), the representative's encoding and the orbit's size."""
        if not len(states):
            return [], [], []
        if not self.symmetric:
            tuples = [tuple(map(int, s)) for s in states]
            return tuples, [self.encode(s) for s in tuples], [1] * len(tuples)
        images = [_tuples(batch) for batch in self.system.symmetry_images(states)]
        reps, texts, sizes = [], [], []
        for row in zip(*images, strict=True):
            encoded = [self.encode(image) for image in row]
            best = min(range(len(row)), key=encoded.__getitem__)
            reps.append(row[best])
            texts.append(encoded[best])
            sizes.append(len(set(encoded)))
        return reps, texts, sizes

    def fingerprints(self, states: Sequence[Any]) -> Fingerprints:
        """Rule 2: the fingerprints of the representatives of ``states``."""
        _, texts, _ = self.representatives(states)
        return fingerprints_of(texts)

    def wire(self, state: Sequence[int]) -> bytes:
        """Rule 4: ``state`` as bytes for another process."""
        parts: list[int | bytes] = []
        for number, space in zip(state, self.layout, strict=True):
            if space is None:
                parts.append(int(number))
                continue
            pickled = self.pickled[space]
            if number >= len(pickled):
                self._known(space, max(int(number) + 1, self.system.known_ids(space)))
                pickled.extend([None] * (len(self.values[space]) - len(pickled)))
            data = pickled[number]
            if data is None:
                data = pickled[number] = pickle.dumps(self.values[space][number], protocol=PICKLE_PROTOCOL)
            parts.append(data)
        return pickle.dumps(tuple(parts), protocol=PICKLE_PROTOCOL)

    def unwire(self, data: bytes) -> tuple[int, ...]:
        """This process's state sent as ``wire`` (rule 4). The bytes are this search's own (the
        checkpoint folder's or Spark's), never user input."""
        out = []
        for part, space in zip(pickle.loads(data), self.layout, strict=True):
            if space is None:
                out.append(int(part))
                continue
            received = self.received[space]
            number = received.get(part)
            if number is None:
                number = received[part] = self.system.import_values(space, [pickle.loads(part)])[0]
            out.append(number)
        return tuple(out)


def fingerprints_of(texts: Sequence[str]) -> Fingerprints:
    return np.fromiter((digest64(text.encode()) for text in texts), dtype=np.int64, count=len(texts))


def _tuples(batch: Any) -> list[tuple[int, ...]]:
    if isinstance(batch, np.ndarray):
        return list(map(tuple, batch.tolist()))
    return [tuple(map(int, state)) for state in batch]
