"""Mondo invariants (hypothesis), determinism, the state-dict round trip, bad input, and the
golden playthrough (tests/games/mondo/golden.txt; MEEPLELAB_REGOLD=1 rewrites it)."""
import pytest
from hypothesis import given, settings, strategies as st

from core_cy import agents
from core_cy.play import batch
from golden import check_golden
from mondo_pos import GAME

SHORT = {"timer_seconds": 90}


def check_invariants(s):
    d = s.to_dict()
    n = len(d["rules"]["tiles"])
    where = [t for t, _ in d["pool"]]
    for seat in d["seats"]:
        if seat["hand"] is not None:
            where.append(seat["hand"]["tile"])
        where += [x["tile"] for row in seat["board"] for x in row if x]
    assert sorted(where) == list(range(n))                     # every tile exactly once
    if s.is_terminal():
        return d
    rows, cols = len(d["seats"][0]["board"]), len(d["seats"][0]["board"][0])
    timer = min(seat["t_next"] for seat in d["seats"] if not seat["finished"])
    assert d["clock"] == timer == d["seats"][s.current_player]["t_next"]
    for i, seat in enumerate(d["seats"]):
        placed = {(r, c) for r in range(rows) for c in range(cols) if seat["board"][r][c]}
        if len(placed) > 1:                                    # placed next to a tile
            assert all(any((r + dr, c + dc) in placed for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)))
                       for r, c in placed)
        assert len(seat["tasks"]) <= 2
        assert not (seat["finished"] and (seat["hand"] or seat["pending"]))
        assert seat["t_next"] >= d["clock"] or seat["finished"]
    chips = [seat["chip"] for seat in d["seats"] if seat["chip"]]
    assert len(chips) == len(set(chips)) == d["bonus_taken"] or 0 in d["rules"]["bonus_stack"].get(str(d["players"]), [])
    assert s.legal_actions()
    return d


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(1, 4),
       level=st.sampled_from(["beginner", "advanced", "master"]),
       side=st.sampled_from(["water", "frame"]), agent=st.sampled_from(["random", "greedy_placer"]))
def test_random_play_keeps_every_state_legal(seed, players, level, side, agent):
    rules = dict(SHORT, board_side=side, level=level if players > 1 else "beginner")
    s = GAME.new(players, rules, seed=seed)
    k = 0
    while not s.is_terminal():
        check_invariants(s)
        if k % 25 == 0:
            assert GAME.from_dict(s.to_dict()).to_bytes() == s.to_bytes()
        s.apply(agents.choose(s, agent, seed + k))
        k += 1
    check_invariants(s)
    assert GAME.from_dict(s.to_dict()).to_bytes() == s.to_bytes()
    assert sum(s.win_shares()) == pytest.approx(1.0) or players == 1


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(1, 4))
def test_same_seed_same_game(seed, players):
    assert GAME.new(players, seed=seed).to_bytes() == GAME.new(players, seed=seed).to_bytes()
    a = batch.play(GAME, players, SHORT, "greedy_placer", seed=seed, count=3)
    b = batch.play(GAME, players, SHORT, "greedy_placer", seed=seed, count=3)
    assert a.equals(b)


def test_new_state_bytes_are_canonical():
    s = GAME.new(3, seed=9)
    t = GAME.from_dict(s.to_dict())
    assert t.to_bytes() == s.to_bytes() and t == s


def test_batch_rows_have_the_outcome_columns():
    b = batch.play(GAME, 3, {"level": "master"}, "greedy_placer", seed=1, count=4)
    cols = set(b.schema.names)
    for name in ("seat_round1_score", "seat_round2_score", "seat_round3_score", "seat_empty_spaces",
                 "seat_error_edges", "seat_bonus_chips", "seat_bonus_points", "solo_win"):
        assert name in cols
    rows = b.to_pylist()
    for r in rows:
        assert r["seat_score"] == [a + b_ + c for a, b_, c in zip(r["seat_round1_score"], r["seat_round2_score"], r["seat_round3_score"])]
    solo = batch.play(GAME, 1, {"solo_difficulty": "easy"}, "greedy_placer", seed=1, count=6).to_pylist()
    assert all(r["solo_win"] == r["seat_win_share"][0] for r in solo)


@pytest.mark.parametrize("rules,field", [
    ({"level": "expert"}, "level"), ({"board_side": "x"}, "board_side"),
    ({"timer_seconds": -1}, "timer_seconds"), ({"handicap": True}, "handicap"),
    ({"tiles": []}, "tiles"), ({"timing": {"mode": "events"}}, "timing"),
    ({"board": {"rows": 9, "cols": 6}}, "board"), ({"nonsense": 1}, "nonsense"),
    ({"tasks": [{"id": "X", "kind": "species3", "species": "dodo", "points": 3}]}, "tasks"),
    ({"bonus_stack": {"2": [4, "x"]}}, "bonus_stack"),
])
def test_bad_rules_name_the_option(rules, field):
    with pytest.raises(ValueError, match=field):
        GAME.new(2, rules)


@pytest.mark.parametrize("terrain", [1, None, "", "WP", "w"])
def test_a_species_terrain_that_is_not_one_letter_names_the_species(terrain):
    with pytest.raises(ValueError, match=r"rule option 'species'\['heron'\]"):
        GAME.new(2, {"species": {"heron": terrain}})


def test_bad_state_dicts_name_the_field():
    d = GAME.new(2, seed=1).to_dict()
    bad = dict(d, pool=d["pool"][1:])
    with pytest.raises(ValueError, match="nowhere"):
        GAME.from_dict(bad)
    bad = dict(d, seats=[dict(d["seats"][0], board="x"), d["seats"][1]])
    with pytest.raises(ValueError, match="board"):
        GAME.from_dict(bad)
    with pytest.raises(ValueError, match="speeds"):
        GAME.new(2, speeds=[1.0, 0.0])
    with pytest.raises(ValueError, match="level"):
        GAME.new(1, {"level": "master"})


# ---- golden playthrough ----------------------------------------------------------------------

GOLDEN_GAMES = [
    ("2 players, beginner, 2 rounds of 100 s, greedy_placer", 2,
     {"timer_seconds": 100, "rounds": 2}, "greedy_placer", 11),
    ("3 players, master, 1 round of 40 s, random", 3,
     {"level": "master", "timer_seconds": 40, "rounds": 1}, "random", 12),
    ("solo easy, 120 s, greedy_placer", 1, {"solo_difficulty": "easy", "timer_seconds": 120},
     "greedy_placer", 13),
]


def golden_text():
    out = []
    for title, players, rules, agent, seed in GOLDEN_GAMES:
        s = GAME.new(players, rules, seed=seed)
        out.append(f"=== {title} (seed {seed})")
        k, rnd = 0, 0
        while not s.is_terminal():
            p, d = s.current_player, s.to_dict()
            a = agents.choose(s, agent, seed * 1000 + k)
            out.append(f"r{d['round'] + 1} t={d['clock']:.2f} seat {p}: {s.describe(a)}")
            s.apply(a)
            k += 1
            d = s.to_dict()
            if d["round"] != rnd or s.is_terminal():
                rnd = d["round"]
                out.append("  round scores: " + "; ".join(
                    f"seat {i} {x['round_scores']}" for i, x in enumerate(d["seats"])))
        _, seats = s.outcomes()
        out.append(f"  end: {s.end_reason}, scores {s.scores()}, win shares {s.win_shares()}, "
                   f"empty spaces {[x['empty_spaces'] for x in seats]}, error edges "
                   f"{[x['error_edges'] for x in seats]}, bonus points {[x['bonus_points'] for x in seats]}")
    return "\n".join(out) + "\n"


def test_golden_playthrough():
    check_golden("mondo", golden_text())
