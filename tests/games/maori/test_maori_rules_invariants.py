"""Maori rules as invariants over random play (hypothesis): whatever the legal actions,
the rules' conservation and placement constraints hold after every action."""
import random

from hypothesis import given, settings, strategies as st, HealthCheck

from maori_pos import GAME, PASS, d

PRINTED = {"standard": {(0, 3), (0, 4), (3, 0), (3, 1)}, "coral_reef": set()}


def _check(x, prev, side, mode):
    tiles = x["rules"]["tiles"]
    where = [t for row in x["display"] for t in row if t is not None] + x["pile"] + x["box"]
    for seat in x["seats"]:
        where += [c["tile"] for row in seat["board"] for c in row if c]
        if seat["storage"] is not None:
            where.append(seat["storage"])
    assert sorted(where) == list(range(len(tiles)))                      # tiles conserved
    assert x["bank"] + sum(s["shells"] for s in x["seats"]) == x["rules"]["total_shells"]
    assert x["bank"] >= 0 and all(s["shells"] >= 0 for s in x["seats"])
    for seat in x["seats"]:
        if seat["storage"] is not None:
            assert tiles[seat["storage"]]["shape"] != "VOLCANO"
        on = set()
        for r, row in enumerate(seat["board"]):
            for c, cell in enumerate(row):
                if cell:
                    on.add((r, c))
                    t = tiles[cell["tile"]]
                    assert t["shape"] != "VOLCANO" and (r, c) not in PRINTED[side]
                    assert cell["rotation"] == 0 or t["palms"] == 0             # palms upright
        if mode != "basic" and not x["terminal"]:
            assert (seat["small_ship"] is None) == (not on)
            assert seat["small_ship"] is None or tuple(seat["small_ship"]) in on
        if mode == "basic":
            assert seat["small_ship"] is None
    if prev is not None and prev["end_trigger"] is not None:
        assert x["end_trigger"] == prev["end_trigger"]             # later full boards: nothing
        assert x["terminal"] or x["current_player"] != x["end_trigger"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4),
       mode=st.sampled_from(["basic", "advanced", "pro"]),
       side=st.sampled_from(["standard", "coral_reef"]),
       pass_bias=st.floats(0, 0.3))
def test_random_play_keeps_the_rules(seed, players, mode, side, pass_bias):
    rng = random.Random(seed)
    s = GAME.new(players, rules={"mode": mode, "board_side": side}, seed=seed)
    prev = None
    x = d(s)
    assert not any(x["rules"]["tiles"][t]["shape"] == "VOLCANO"
                   for row in x["display"] for t in row)
    while not s.is_terminal():
        acts = s.legal_actions()
        a = PASS if PASS in acts and rng.random() < pass_bias else rng.choice(acts)
        s.apply(a)
        x = d(s)
        _check(x, prev, side, mode)
        prev = x
    assert s.end_reason in ("board_full", "stall", "turn_limit")
    assert abs(sum(s.win_shares()) - 1.0) < 1e-9
    assert s.scores() == [b["total"] for b in s.score_breakdown()]
    assert GAME.from_dict(s.to_dict()) == s
