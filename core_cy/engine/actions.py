"""Named actions: every game's action ids as named kinds with named parameters.

An engine numbers its actions in contiguous blocks, one per kind; inside a block the
parameters are mixed-radix digits, the first one most significant (Pgx-style
`_decompose_action`).  The game module builds its `ActionSpace` from the engine's own Cython
constants, so the Python names can never drift from the C encoding:

    actions = ActionSpace(NUM_ACTIONS,
        Kind("move", A_MOVE, distance=(1, TRACK)),        # a parameter: size n (0..n-1) or (lo, hi)
        Kind("take", A_TAKE, k=LINE, cell=MAX_CELLS, rotation=ROTATIONS),
        Kind("pass", A_PASS))                             # no parameters: one id

and exposes it as `game.actions` (the same on every game):

    game.actions.encode("take", k=0, cell=7, rotation=1)   -> int (ValueError if out of range)
    game.actions.decode(a)                                 -> ("take", {"k": 0, "cell": 7, "rotation": 1})
    game.actions.kind_of(a)                                -> "take"
    game.actions.select(state.legal_actions(), "take")     -> the take actions among them
    game.actions["take"]                                   -> the Kind (base, size, params)
    len(game.actions)                                      -> the number of action ids

ActionSpace checks at import that the kinds tile [0, NUM_ACTIONS) exactly, in order.
"""
from __future__ import annotations

import math


class Kind:
    """One action kind: a block of ids from `base`, one per combination of parameters."""

    def __init__(self, name: str, base: int, **params):
        self.name = name
        self.base = base
        # (name, lo, hi) per parameter, most significant first
        self.params = tuple((p, *((0, v - 1) if isinstance(v, int) else v))
                            for p, v in params.items())
        self.size = math.prod(hi - lo + 1 for _, lo, hi in self.params)

    def __contains__(self, action) -> bool:
        return self.base <= action < self.base + self.size

    def encode(self, **values) -> int:
        names = [p for p, _, _ in self.params]
        if sorted(values) != sorted(names):
            raise ValueError(f"action '{self.name}' takes parameters {names}, got {sorted(values)}")
        a = 0
        for p, lo, hi in self.params:
            v = values[p]
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"action '{self.name}': {p} must be an integer in {lo}..{hi}, "
                                 f"got {v!r}")
            a = a * (hi - lo + 1) + (v - lo)
        return self.base + a

    def decode(self, action: int) -> dict:
        rest = action - self.base
        out = {}
        for p, lo, hi in reversed(self.params):
            rest, digit = divmod(rest, hi - lo + 1)
            out[p] = lo + digit
        return dict(reversed(out.items()))

    def __repr__(self):
        args = ", ".join(f"{p}={lo}..{hi}" for p, lo, hi in self.params)
        return f"Kind({self.name!r}, base={self.base}{', ' if args else ''}{args})"


class ActionSpace:
    """A game's action kinds, in id order; see the module docstring."""

    def __init__(self, num_actions: int, *kinds: Kind):
        self.kinds = kinds
        self._by_name = {k.name: k for k in kinds}
        at = 0
        for k in kinds:
            if k.base != at:
                raise ValueError(f"action kind '{k.name}' starts at {k.base}, expected {at}")
            at += k.size
        if at != num_actions or len(self._by_name) != len(kinds):
            raise ValueError(f"action kinds cover 0..{at - 1}, the engine has {num_actions}")
        self._bases = [k.base for k in kinds]

    def __len__(self) -> int:
        return self._bases[-1] + self.kinds[-1].size

    def __getitem__(self, name: str) -> Kind:
        if name not in self._by_name:
            raise ValueError(f"no action kind {name!r}; kinds: {list(self._by_name)}")
        return self._by_name[name]

    def encode(self, kind: str, **params) -> int:
        return self[kind].encode(**params)

    def _kind(self, action) -> Kind:
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < len(self):
            raise ValueError(f"action must be an integer in 0..{len(self) - 1}, got {action!r}")
        lo, hi = 0, len(self._bases) - 1
        while lo < hi:                      # the last kind whose base is <= action
            mid = (lo + hi + 1) // 2
            if self._bases[mid] <= action:
                lo = mid
            else:
                hi = mid - 1
        return self.kinds[lo]

    def kind_of(self, action: int) -> str:
        return self._kind(action).name

    def decode(self, action: int) -> tuple[str, dict]:
        k = self._kind(action)
        return k.name, k.decode(action)

    def select(self, actions, kind: str) -> list[int]:
        """The actions of one kind, in the given order."""
        k = self[kind]
        return [a for a in actions if a in k]

    def info(self) -> list[dict]:
        """The kinds as JSON-able data (name, first id, parameter ranges)."""
        return [{"kind": k.name, "base": k.base,
                 "params": {p: [lo, hi] for p, lo, hi in k.params}} for k in self.kinds]
