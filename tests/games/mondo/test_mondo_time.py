"""Mondo's real-time rules (spec sections 3, 4, 4.3): the clock, current player, durations,
contention for pool tiles, returning, jumping out with the bonus stack, time-out, placement
legality, task timing, rounds and timers per level and variant."""
import pytest

from core_cy.play import batch
from mondo_pos import (ACTIONS, JUMP, RETURN, FLIP, GAME, NO_SKILL, PICK, PLACE, TASK,
                       board_rules, build, params, tiles)

T = dict(NO_SKILL)     # default durations, no random skill: pick = 0.7 + 36 * 0.35 s


def pick_seconds():
    return T["pick"] + T["scan"] * T["scan_tiles"]


def fresh(players, speeds=None, **rules):
    return GAME.new(players, dict({"timing": T}, **rules), seed=5, speeds=speeds)


def alone(top=None, **rules):
    """Seat 0 alone in a 2-player round (seat 1 has jumped out), so it acts every time."""
    return build(2, dict({"timing": T, "rounds": 1}, **rules), [{}, {}], [{}, {"finished": True}],
                **(top or {}))


def seat(state, i):
    return state.to_dict()["seats"][i]


def test_current_player_is_the_earliest_next_decision_ties_lowest_seat():
    s = fresh(3)
    assert s.current_player == 0                     # all at t = 0: lowest seat
    s.apply(FLIP(0))
    assert s.current_player == 1
    s.apply(PICK(1))
    assert s.current_player == 2
    s.apply(PICK(2))
    assert s.current_player == 0 and s.to_dict()["clock"] == pytest.approx(T["flip"])


def test_durations_are_divided_by_seat_speed():
    s = fresh(2, speeds=[1.0, 2.0])
    s.apply(PICK(0))
    s.apply(PICK(1))
    d = s.to_dict()
    assert d["seats"][0]["t_next"] == pytest.approx(pick_seconds())
    assert d["seats"][1]["t_next"] == pytest.approx(pick_seconds() / 2)
    assert s.current_player == 1


def test_skill_draw_scales_speed_when_sigma_positive():
    s = GAME.new(2, seed=1, speeds=[1.0, 1.0])
    sp = [x["speed"] for x in s.to_dict()["seats"]]
    assert sp[0] != 1.0 and sp[1] != 1.0 and sp[0] != sp[1]
    assert [x["speed"] for x in fresh(2).to_dict()["seats"]] == [1.0, 1.0]


def test_pick_puts_the_tile_in_hand_when_it_completes():
    s = fresh(1)
    pool = {t for t, _ in s.to_dict()["pool"]}
    t = min(pool)
    s.apply(PICK(t))
    d = s.to_dict()
    assert d["seats"][0]["hand"]["tile"] == t and t not in {x for x, _ in d["pool"]}
    assert all(a >= PLACE(0) for a in s.legal_actions())          # only place / return now


def test_contention_first_completed_pick_wins_the_other_loses_its_time():
    s = fresh(2, speeds=[1.0, 2.0])
    s.apply(PICK(7))            # seat 0 completes at p
    s.apply(PICK(7))            # seat 1 completes at p/2: it gets the tile
    assert s.current_player == 1 and seat(s, 1)["hand"]["tile"] == 7
    s.apply(RETURN)           # seat 1 decides at p/2, returns at p/2 + 0.25 (< p)
    while s.current_player == 1:
        s.apply(FLIP(3))
    # seat 0's pick completes at p: the tile is back in the pool, so seat 0 gets it now.
    assert s.current_player == 0 and seat(s, 0)["hand"]["tile"] == 7
    s2 = fresh(2, speeds=[1.0, 2.0])
    s2.apply(PICK(7))
    s2.apply(PICK(7))
    s2.apply(PLACE(0))          # seat 1 keeps it on its board
    while s2.current_player == 1:
        s2.apply(FLIP(3))
    assert seat(s2, 0)["hand"] is None and seat(s2, 0)["t_next"] == pytest.approx(pick_seconds())
    assert PICK(7) not in s2.legal_actions()


def test_flip_turns_a_pool_tile_over():
    s = fresh(1)
    t, face = s.to_dict()["pool"][0]
    s.apply(FLIP(t))
    assert dict(map(tuple, s.to_dict()["pool"]))[t] == 1 - face


def test_return_puts_the_tile_back_visible_after_return_time():
    s = fresh(2)
    s.apply(PICK(4))
    s.apply(FLIP(9))
    while s.current_player != 0:
        s.apply(FLIP(9))
    face = seat(s, 0)["hand"]["face"]
    s.apply(RETURN)
    assert seat(s, 0)["pending"] == {"op": "return"}
    while s.current_player != 0:
        s.apply(FLIP(9))
    d = s.to_dict()
    assert d["seats"][0]["hand"] is None and [4, face] in d["pool"]


def test_place_duration_adds_look_and_rotate():
    for face_delta, rot, extra in ((0, 0, 0.0), (1, 0, T["look"]), (0, 1, T["rotate"]), (1, 3, T["look"] + T["rotate"])):
        s = alone()
        t = min(tt for tt, _ in s.to_dict()["pool"])
        s.apply(PICK(t))
        hf = seat(s, 0)["hand"]["face"]
        s.apply(PLACE(0, hf ^ face_delta, rot))
        d = s.to_dict()["seats"][0]
        assert d["t_next"] == pytest.approx(pick_seconds() + T["place"] + extra)
        assert d["board"][0][0] == {"tile": t, "face": hf ^ face_delta, "rotation": rot}


def test_tv18_placement_legality():
    s = alone()
    s.apply(PICK(0))
    assert {params(a)["cell"] for a in ACTIONS.select(s.legal_actions(), "place")} == set(range(24))
    s.apply(PLACE(7))                                    # (1,1) first: anywhere
    s.apply(PICK(1))
    cells = {params(a)["cell"] for a in ACTIONS.select(s.legal_actions(), "place")}
    assert cells == {1, 6, 8, 13}                         # orthogonal neighbours only
    assert 0 not in cells and 7 not in cells              # diagonal / occupied: illegal
    with pytest.raises(ValueError):
        s.apply(PLACE(0))


def test_the_one_hand_rule_limits_actions():
    s = alone()
    kinds = {ACTIONS.kind_of(a) for a in s.legal_actions()}
    assert kinds == {"pick", "flip", "jump"}                # empty hand: nothing to place
    s.apply(PICK(0))
    kinds = {ACTIONS.kind_of(a) for a in s.legal_actions()}
    assert kinds == {"place", "return"}                     # a tile in hand: place or return


@pytest.mark.parametrize("players,stack", [(2, [4, 3]), (3, [4, 3, 2]), (4, [4, 3, 2, 1])])
def test_tv13_bonus_chips_in_jump_order(players, stack):
    speeds = [1.0 + k for k in range(players)]           # the last seat completes first
    s = fresh(players, speeds=speeds, rounds=1)
    for _ in range(players):
        s.apply(JUMP)
    assert s.is_terminal()
    got = [x["stats"]["bonus_points"] for x in s.to_dict()["seats"]]
    assert got == list(reversed(stack))


def test_empty_stack_gives_no_chip_and_solo_has_none():
    s = fresh(3, rounds=1, bonus_stack={"3": [4]})
    for _ in range(3):
        s.apply(JUMP)
    assert sorted(x["stats"]["bonus_points"] for x in s.to_dict()["seats"]) == [0, 0, 4]
    s = fresh(1)
    s.apply(JUMP)
    assert s.is_terminal() and s.to_dict()["seats"][0]["stats"]["bonus_points"] == 0


def test_a_finished_hand_never_acts_again_in_the_round():
    s = fresh(2, level="master", rounds=1)
    s.apply(JUMP)
    for _ in range(30):
        assert s.current_player == 1
        s.apply(FLIP(5))


def timeout_state(place_at, jump_at, timer=10):
    rules = {"timing": T, "timer_seconds": timer, "rounds": 1,
             "tiles": tiles([{"edges": "WWWW", "animal": "fish"}], players=2)}
    seats = [{"t_next": place_at, "hand": {"tile": 0, "face": 0}}, {"t_next": jump_at}]
    return build(2, rules, [{}, {}], seats, clock=place_at)


def test_tv14_timeout_returns_the_tile_and_a_started_jump_keeps_its_chip():
    s = timeout_state(9.5, 9.6)
    s.apply(PLACE(0))               # completes at 10.5 > 10: cancelled
    assert s.current_player == 1
    s.apply(JUMP)                 # started at 9.6 < 10: completes after the timer
    assert s.is_terminal()
    d = s.to_dict()
    assert d["seats"][0]["stats"]["tiles_placed"] == 0 and d["seats"][0]["stats"]["animals"] == 0
    assert [0, 0] in d["pool"]
    assert d["seats"][1]["stats"]["bonus_points"] == 4 and d["timeouts"] == 1


def test_place_completing_before_the_timer_counts():
    s = timeout_state(8.5, 9.6)
    s.apply(PLACE(0))               # completes at 9.5 <= 10
    assert s.current_player == 0
    s.apply(JUMP)
    s.apply(JUMP)                 # seat 1
    d = s.to_dict()
    assert d["seats"][0]["stats"]["animals"] == 1


def test_no_decision_at_or_after_the_timer():
    s = timeout_state(10.0, 10.0)
    assert s.is_terminal() and s.to_dict()["timeouts"] == 1


def engine_timer(players=2, **rules):
    """Binary check that the round's timer is where the rules say: a hand due at T - 0.01
    still decides, one due at T does not."""
    from core_cy.games.mondo.engine import timer_of
    r = GAME.resolve_rules(dict(rules, rounds=1), players)
    t = timer_of(r, players)
    b = board_rules(4, 6)
    for at, alive in ((t - 0.01, True), (t, False)):
        seats = [{"t_next": at}] + [{"finished": True}] * (players - 1)
        s = build(players, dict(rules, rounds=1), [{} for _ in range(players)], seats)
        assert (not s.is_terminal()) == alive
    return t


def test_timers_per_level_solo_and_variants():
    assert engine_timer(level="beginner") == 420
    assert engine_timer(level="advanced") == 360
    assert engine_timer(level="master") == 300
    assert engine_timer(1, solo_difficulty="easy") == 600
    assert engine_timer(1, solo_difficulty="medium") == 360
    assert engine_timer(1, solo_difficulty="hard") == 300
    assert engine_timer(children=True) == 600
    assert engine_timer(timer_seconds=240) == 240          # the shorter-time variant


def test_tv15_task_timing():
    s = alone({"tasks_face_up": ["BUFFALO3", "PERFECT", "IN_TIME", "FIRST"]}, level="master")
    d = s.to_dict()
    ids = [t["id"] for t in d["rules"]["tasks"]]
    tasks = {TASK(ids.index(x)) for x in d["tasks_face_up"]}
    assert len(tasks) == 4
    for k in range(3):
        assert not tasks & set(s.legal_actions())        # fewer than 3 tiles placed
        s.apply(PICK(k))
        s.apply(PLACE(k))
    assert tasks <= set(s.legal_actions())
    first, second = sorted(tasks)[:2]
    s.apply(first)
    assert tasks - {first} <= set(s.legal_actions())
    s.apply(second)
    assert len(seat(s, 0)["tasks"]) == 2
    assert not tasks & set(s.legal_actions())            # a third task: illegal
    s.apply(JUMP)                                      # after jumping out: nothing more
    assert s.is_terminal()


def test_rounds_and_the_board_reset():
    s = fresh(2)
    for r in range(3):
        assert s.to_dict()["round"] == r
        s.apply(PICK(0)) if r == 0 else None
        while s.to_dict()["round"] == r and not s.is_terminal():
            acts = s.legal_actions()
            s.apply(PLACE(0) if PLACE(0) in acts else JUMP)
    assert s.is_terminal() and s.end_reason == "rounds_complete"
    assert all(len(x["round_scores"]) == 3 for x in s.to_dict()["seats"])
    assert s.scores() == [sum(x["round_scores"]) for x in s.to_dict()["seats"]]


def test_rounds_option_and_solo_single_round():
    s = fresh(2, rounds=2)
    while not s.is_terminal():
        s.apply(JUMP)
    assert len(s.to_dict()["seats"][0]["round_scores"]) == 2
    s = fresh(1)
    s.apply(JUMP)
    assert s.is_terminal()


def test_ties_share_the_win():
    s2 = build(2, {"timing": T, "rounds": 1, "bonus_stack": {"2": [0, 0]}}, [{}, {}],
               [{"finished": True}, {"finished": True}])
    assert s2.win_shares() == [0.5, 0.5]


def test_hidden_timer_gives_each_hand_an_error():
    d = fresh(3, hidden_timer=True).to_dict()
    assert all(x["noise"] != 0 for x in d["seats"])
    assert all(x["noise"] == 0 for x in fresh(3).to_dict()["seats"])


def test_per_placement_mode_takes_the_tile_at_decision_time():
    tm = dict(T, mode="per_placement")
    s = fresh(2, timing=tm)
    s.apply(PICK(3))
    assert s.current_player == 0 and seat(s, 0)["hand"]["tile"] == 3
    s.apply(PLACE(0))
    assert seat(s, 0)["t_next"] >= tm["per_placement"]["min"]


def test_speed_in_batch_play_matters():
    fast = batch.play(GAME, 2, {"timing": T}, "greedy_placer", seed=3, count=12, speeds=[1.5, 1.0])
    slow = batch.play(GAME, 2, {"timing": T}, "greedy_placer", seed=3, count=12, speeds=[1.0, 1.0])
    wf = sum(x[0] for x in fast.column("seat_win_share").to_pylist())
    ws = sum(x[0] for x in slow.column("seat_win_share").to_pylist())
    assert wf > ws


def test_safety_limit_ends_every_game():
    s = GAME.new(2, {"max_round_decisions": 10}, seed=1)
    while not s.is_terminal():
        s.apply(FLIP(s.to_dict()["pool"][0][0]))
    assert s.end_reason == "safety_limit" and s.outcomes()[0]["safety_cuts"] == 3
