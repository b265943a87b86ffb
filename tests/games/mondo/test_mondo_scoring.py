"""Mondo scoring rules (spec section 5, 2.6, 2.7, 6) and the spec's test vectors (section 8)."""
import pytest

from mondo_pos import GAME, board_rules, breakdown, build, tiles

W4 = {"edges": "WWWW"}


def one_board(faces, rows, cols, cells, frame=None, side="water", players=1, extra=None, **kw):
    rules = {"board": board_rules(rows, cols, frame), "board_side": side,
             "tiles": tiles(faces, players=players, rows=rows, cols=cols), **(extra or {})}
    boards = [cells] + [{} for _ in range(players - 1)]
    return build(players, rules, boards, **kw)


# ---- test vectors (section 8) -------------------------------------------------------------

def test_tv1_mismatch_counted_once():
    s = one_board([{"edges": "WDWW"}, {"edges": "WWWF"}], 1, 2, {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0)}, players=2)
    b = breakdown(s)
    assert (b["error_edges"], b["areas"], b["round_total"]) == (1, 0, -1)


def test_tv2_enclosed_two_tile_area():
    s = one_board([{"edges": "WDWW"}, {"edges": "WWWD"}], 1, 2, {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0)}, players=2)
    b = breakdown(s)
    assert (b["error_edges"], b["areas"], b["round_total"]) == (0, 1, 2)
    assert b["areas_by_terrain"]["desert"] == 1


def test_tv3_land_on_the_sea_rim():
    s = one_board([{"edges": "DDDD"}], 1, 1, {(0, 0): (0, 0, 0)}, players=2)
    b = breakdown(s)
    assert (b["error_edges"], b["areas"], b["round_total"]) == (4, 0, -4)


def test_tv4_empty_neighbour_is_not_an_error():
    s = one_board([{"edges": "WDWW"}], 1, 2, {(0, 0): (0, 0, 0)}, players=2)
    b = breakdown(s)
    assert (b["error_edges"], b["empty_spaces"], b["areas"], b["round_total"]) == (0, 1, 0, -1)


def test_tv6_frame_side_closes_areas():
    s = one_board([{"edges": "DDDD"}], 1, 1, {(0, 0): (0, 0, 0)}, side="frame",
                  frame={"top": "D", "right": "D", "bottom": "D", "left": "D"}, players=2)
    b = breakdown(s)
    assert (b["error_edges"], b["areas"], b["round_total"]) == (0, 1, 2)
    s = one_board([{"edges": "DDDD"}], 1, 1, {(0, 0): (0, 0, 0)}, side="frame",
                  frame={"top": "F", "right": "D", "bottom": "D", "left": "D"}, players=2)
    b = breakdown(s)
    assert (b["error_edges"], b["areas"], b["round_total"]) == (1, 0, -1)


def test_tv7_frame_side_water_is_not_a_lake():
    s = one_board([{"edges": "WPPP"}], 1, 1, {(0, 0): (0, 0, 0)}, side="frame",
                  frame={"top": "W", "right": "P", "bottom": "P", "left": "P"}, players=2)
    b = breakdown(s)
    assert (b["error_edges"], b["lakes"], b["areas"], b["round_total"]) == (0, 0, 1, 2)


def test_rotation_turns_edges_clockwise():
    # Face N=D: turned once clockwise the desert edge points east, onto the neighbour's D.
    s = one_board([{"edges": "DWWW"}, {"edges": "WWWD"}], 1, 2, {(0, 0): (0, 0, 1), (0, 1): (1, 0, 0)}, players=2)
    assert breakdown(s)["areas"] == 1 and breakdown(s)["error_edges"] == 0
    s = one_board([{"edges": "DWWW"}, {"edges": "WWWD"}], 1, 2, {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0)}, players=2)
    assert breakdown(s)["error_edges"] == 2      # D on the north rim, D|W between them


def test_lake_needs_enclosure_away_from_the_rim():
    # A water segment inside a ring of plains on a 3x3 board is a lake; water never scores +2.
    ring = {"edges": "PPPP", "segments": [{"terrain": "P", "edges": "NESW"},
                                         {"terrain": "W", "edges": ""}]}
    s = one_board([ring], 1, 1, {(0, 0): (0, 0, 0)}, side="frame",
                  frame={"top": "P", "right": "P", "bottom": "P", "left": "P"}, players=2)
    b = breakdown(s)
    assert (b["lakes"], b["largest_lake"], b["areas"]) == (1, 1, 1)
    # Water reaching the sea rim is the sea: no lake.
    s = one_board([W4], 1, 1, {(0, 0): (0, 0, 0)}, players=2)
    assert (breakdown(s)["lakes"], breakdown(s)["areas"], breakdown(s)["error_edges"]) == (0, 0, 0)


def test_animals_count_anywhere():
    s = one_board([{"edges": "DDDD", "animal": "snake"}], 1, 1, {(0, 0): (0, 0, 0)}, players=2)
    b = breakdown(s)
    assert (b["animals"], b["areas"], b["error_edges"], b["round_total"]) == (1, 0, 4, -3)


def test_alternating_pattern_default_segments_split_the_crossed_terrain():
    # PFPF: plains crosses N-S, forest is split: E and W forests are different areas.
    faces = [{"edges": "WWWF"}, {"edges": "FWFW"}, {"edges": "WFWW"}]
    cells = {(0, 0): (1, 0, 0), (0, 1): (0, 0, 0), (1, 0): (2, 0, 0)}
    s = one_board([{"edges": "WWWF"}, {"edges": "WFWF", "segments": [
        {"terrain": "W", "edges": "N"}, {"terrain": "W", "edges": "S"},
        {"terrain": "F", "edges": "EW"}]}, {"edges": "WFWW"}], 1, 3,
        {(0, 0): (2, 0, 0), (0, 1): (1, 0, 0), (0, 2): (0, 0, 0)}, players=2)
    assert breakdown(s)["areas"] == 1                       # explicit segments: one forest
    s = one_board([{"edges": "WWWF"}, {"edges": "WFWF"}, {"edges": "WFWW"}], 1, 3,
                  {(0, 0): (2, 0, 0), (0, 1): (1, 0, 0), (0, 2): (0, 0, 0)}, players=2)
    assert breakdown(s)["areas"] == 2                       # default: split forest, 2 areas


# ---- volcanoes (section 5.3, B10, B11) ------------------------------------------------------

def volcano_boards(counts, dormant=(), chips=()):
    faces, boards = [], []
    for i, n in enumerate(counts):
        cells = {}
        for k in range(n):
            cells[(0, k)] = (len(faces), 0, 0)
            faces.append({"edges": "WWWW", "volcano": "active"})
        for k in range(dormant[i] if dormant else 0):
            cells[(1, k)] = (len(faces), 0, 0)
            faces.append({"edges": "WWWW", "volcano": "dormant"})
        boards.append(cells)
    rules = {"tiles": tiles(faces, players=len(counts))}
    seats = [{"volcano_chip": i in chips} for i in range(len(counts))]
    return build(len(counts), rules, boards, seats)


def test_tv8_volcano_tie_all_pay():
    s = volcano_boards([4, 4, 2])
    assert [b["volcano_points"] for b in s.score_breakdown()] == [-4, -4, 0]


def test_tv10_no_volcanoes_no_penalty():
    s = volcano_boards([0, 0, 0], dormant=[3, 0, 0])
    assert [b["volcano_points"] for b in s.score_breakdown()] == [0, 0, 0]


def test_dormant_volcanoes_count_only_for_the_chip_holder():
    s = volcano_boards([2, 3], dormant=[2, 0])
    assert [b["volcano_points"] for b in s.score_breakdown()] == [0, -3]
    s = volcano_boards([2, 3], dormant=[2, 0], chips=(0,))
    assert [b["volcano_points"] for b in s.score_breakdown()] == [-4, 0]


def we1(j_has_chip):
    """The rulebook example (section 5.4) on a 2 x 4 water-side board: Jasmin (seat 0) has 4
    tiles with an inner desert/desert/forest/plains patch (closed areas) and an animal each,
    4 active volcanoes on them, a row of flawed tiles with 2 dormant volcanoes, 2 more animals,
    4 error edges and 1 empty space; she holds the 2 chip.  Vilhelmina has 5 active volcanoes."""
    def patch(t, animal, volcano):
        return {"edges": "WWWW", "segments": [{"terrain": "W", "edges": "NESW"},
                                             {"terrain": t, "edges": ""}],
                "animal": animal, "volcano": volcano}
    faces = [patch("D", "snake", "active"), patch("D", "camel", "active"),
             patch("F", "panda", "active"), patch("P", "zebra", "active"),
             {"edges": "DWWW", "animal": "lizard", "volcano": "dormant"},
             {"edges": "FPWW", "volcano": "dormant"},
             {"edges": "PWWW", "animal": "buffalo"}]
    faces += [{"edges": "WWWW", "volcano": "active"}] * 5
    j = {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0), (0, 2): (2, 0, 0), (0, 3): (3, 0, 0),
         (1, 0): (4, 0, 0), (1, 1): (5, 0, 0), (1, 2): (6, 0, 0)}
    v = {(0, k): (7 + k, 0, 0) for k in range(4)}
    v[(1, 0)] = (11, 0, 0)
    rules = {"board": board_rules(2, 4), "tiles": tiles(faces, players=2, rows=2, cols=4)}
    seats = [{"chip": 2, "volcano_chip": j_has_chip, "finished": True, "jump_order": 2},
             {"finished": True, "jump_order": 1, "chip": 4}]
    return build(2, rules, [j, v], seats, bonus_taken=2, jumps=2)


def test_we1_worked_example_scores_11():
    s = we1(False)     # both hands finished: from_dict ends and scores round 1
    d = s.to_dict()
    assert d["round"] == 1
    st = d["seats"][0]["stats"]
    assert (st["animals"], st["areas"], st["bonus_points"], st["empty_spaces"],
            st["error_edges"], st["volcano_points"]) == (6, 4, 2, 1, 4, 0)
    assert d["seats"][0]["round_scores"] == [11]
    assert d["seats"][1]["stats"]["volcano_points"] == -5


def test_we1b_with_the_volcano_chip_scores_5():
    d = we1(True).to_dict()
    assert d["seats"][0]["round_scores"] == [5]
    assert d["seats"][0]["stats"]["volcano_points"] == -6
    assert d["seats"][1]["stats"]["volcano_points"] == 0


def test_volcano_chip_goes_to_the_round_top_scorers():
    d = we1(False).to_dict()
    v_score = d["seats"][1]["round_scores"][0]
    assert v_score < 11
    assert [x["volcano_chip"] for x in d["seats"]] == [True, False]


# ---- handicap and children variants (section 6) ---------------------------------------------

def test_handicap_advantaged_seat_never_pays_others_pay_active():
    faces = [{"edges": "WWWW", "volcano": "active"}] * 3 + [{"edges": "WWWW", "volcano": "dormant"}] * 2
    boards = [{(0, 0): (0, 0, 0), (0, 1): (1, 0, 0)}, {(0, 0): (2, 0, 0), (0, 1): (3, 0, 0), (0, 2): (4, 0, 0)}]
    for mode, expect in (("on", [0, -1]), ("strong", [0, -3]), ("off", [-2, 0])):
        s = build(2, {"handicap": mode, "advantaged_seats": [0], "tiles": tiles(faces, players=2)}, boards)
        assert [b["volcano_points"] for b in s.score_breakdown()] == expect, mode


def test_handicap_has_no_volcano_chip():
    rules = {"handicap": "on", "tiles": tiles([{"edges": "WWWW", "animal": "fish"}], players=2)}
    s = build(2, rules, [{(0, 0): (0, 0, 0)}, {}], [{"finished": True}, {"finished": True}])
    assert [x["volcano_chip"] for x in s.to_dict()["seats"]] == [False, False]
    rules.pop("handicap")
    s = build(2, rules, [{(0, 0): (0, 0, 0)}, {}], [{"finished": True}, {"finished": True}])
    assert [x["volcano_chip"] for x in s.to_dict()["seats"]] == [True, False]


def test_children_variant_scores_no_volcanoes_and_has_a_long_timer():
    faces = [{"edges": "WWWW", "volcano": "active"}]
    s = build(2, {"children": True, "tiles": tiles(faces, players=2)}, [{(0, 0): (0, 0, 0)}, {}])
    assert breakdown(s)["volcano_points"] == 0
    s = build(2, {"tiles": tiles(faces, players=2)}, [{(0, 0): (0, 0, 0)}, {}])
    assert breakdown(s)["volcano_points"] == -1
    s = GAME.new(2, {"children": True, "timing": dict(GAME.new(2).to_dict()["rules"]["timing"])}, seed=1)
    assert _timer(s) == 600


def _timer(state):
    """The round's timer: the first t_next at or past which a hand never decides."""
    from core_cy.games.mondo.engine import timer_of
    d = state.to_dict()
    return timer_of(d["rules"], d["players"])


# ---- scoring modifiers (section 2.6) --------------------------------------------------------

def modifier_state(mod, boards, faces, players=2, rows=4, cols=6):
    deck = [mod] + [m for m in ("MOST_AREAS", "MOST_LAKES", "MOST_WATER_ANIMALS", "LARGEST_LAKE",
                                "LARGEST_FOREST") if m != mod]
    rules = {"level": "advanced", "board": board_rules(rows, cols),
             "tiles": tiles(faces, players=players, rows=rows, cols=cols)}
    return build(players, rules, boards, modifier_deck=deck)


def test_tv12_largest_forest_counts_enclosed_tiles_only():
    cross = {"edges": "WFWF", "segments": [{"terrain": "W", "edges": "N"}, {"terrain": "W", "edges": "S"},
                                         {"terrain": "F", "edges": "EW"}]}
    faces = [{"edges": "WFWW"}, cross, {"edges": "WWWF"}]          # closed forest of 3
    faces += [{"edges": "WFWW"}] + [cross] * 5                     # open forest of 6 (east rim)
    faces += [{"edges": "FFFF"}]                                   # seat 1: an open forest
    p1 = {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0), (0, 2): (2, 0, 0)}
    p1.update({(1, c): (3 + c, 0, 0) for c in range(6)})
    s = modifier_state("LARGEST_FOREST", [p1, {(0, 0): (9, 0, 0)}], faces)
    b = s.score_breakdown()
    assert (b[0]["modifier_value"], b[1]["modifier_value"]) == (3, 0)
    assert (b[0]["modifier_points"], b[1]["modifier_points"]) == (4, -4)


@pytest.mark.parametrize("mod,face,seg", [
    ("MOST_AREAS", {"edges": "WWWW", "segments": [{"terrain": "W", "edges": "NESW"}, {"terrain": "D", "edges": ""}]}, None),
    ("MOST_LAKES", {"edges": "PPPP", "segments": [{"terrain": "P", "edges": "NESW"}, {"terrain": "W", "edges": ""}]}, None),
    ("MOST_WATER_ANIMALS", {"edges": "WWWW", "animal": "whale"}, None),
])
def test_each_modifier_rewards_most_and_punishes_least(mod, face, seg):
    # seat 0: two such tiles, seat 1: one, seat 2: none -> +4 / 0 / -4.
    faces = [face] * 3
    boards = [{(1, 1): (0, 0, 0), (1, 2): (1, 0, 0)}, {(1, 1): (2, 0, 0)}, {}]
    s = modifier_state(mod, boards, faces, players=3)
    b = s.score_breakdown()
    assert [x["modifier"] for x in b] == [mod] * 3
    assert [x["modifier_points"] for x in b] == [4, 0, -4]


def test_largest_lake_counts_tiles_of_one_lake():
    inner = {"edges": "PPPP", "segments": [{"terrain": "P", "edges": "NESW"}, {"terrain": "W", "edges": ""}]}
    a = {"edges": "PWPP", "segments": [{"terrain": "P", "edges": "NSW"}, {"terrain": "W", "edges": "E"}]}
    b = {"edges": "PPPW", "segments": [{"terrain": "P", "edges": "NES"}, {"terrain": "W", "edges": "W"}]}
    boards = [{(1, 1): (0, 0, 0), (1, 2): (1, 0, 0)}, {(1, 1): (2, 0, 0), (1, 2): (3, 0, 0)}, {}]
    s = modifier_state("LARGEST_LAKE", boards, [a, b, inner, inner], players=3)
    bd = s.score_breakdown()
    assert [x["largest_lake"] for x in bd] == [2, 1, 0]
    assert [x["lakes"] for x in bd] == [1, 2, 0]
    assert [x["modifier_points"] for x in bd] == [4, 0, -4]


def crossing(x, split):
    """A face with terrain x on E and W and plains on N and S: x crosses the tile in one
    area, or (split) x forms two separate halves E and W with the plains crossing N-S
    (the rulebook's alternating tile, spec 2.3)."""
    if split:
        return {"edges": f"P{x}P{x}"}             # default segments: P crosses, x split
    return {"edges": f"P{x}P{x}", "segments": [{"terrain": x, "edges": "EW"},
                                               {"terrain": "P", "edges": "N"},
                                               {"terrain": "P", "edges": "S"}]}


@pytest.mark.parametrize("x,mod,field", [("F", "LARGEST_FOREST", "largest_forest"),
                                         ("W", "LARGEST_LAKE", "largest_lake")])
def test_area_size_counts_distinct_tiles_not_halves(x, mod, field):
    """Spec 2.6, B12: an area's size is the number of distinct tiles it covers.  Seat 0's
    closed 2 x 3 loop runs through both halves of one split tile (0,1): 6 tiles, 7 halves.
    Seat 1's straight closed area covers 6 tiles; seat 2 has none.  So seats 0 and 1 tie
    for the largest (+4 each); counting halves would give seat 0 alone the lead."""
    loop = [{"edges": f"P{x}{x}P"}, crossing(x, split=True), {"edges": f"PP{x}{x}"},
            {"edges": f"{x}{x}PP"}, crossing(x, split=False), {"edges": f"{x}PP{x}"}]
    row = [{"edges": f"P{x}PP"}] + [crossing(x, split=False)] * 4 + [{"edges": f"PPP{x}"}]
    seat0 = {(r, c): (3 * r + c, 0, 0) for r in range(2) for c in range(3)}
    seat1 = {(0, c): (6 + c, 0, 0) for c in range(6)}
    deck = [mod] + [m for m in ("MOST_AREAS", "MOST_LAKES", "MOST_WATER_ANIMALS", "LARGEST_LAKE",
                                "LARGEST_FOREST") if m != mod]
    plains = {"top": "PPPPPP", "right": "PP", "bottom": "PPPPPP", "left": "PP"}
    rules = {"level": "advanced", "board_side": "frame", "board": board_rules(2, 6, plains),
             "tiles": tiles(loop + row, players=3, rows=2, cols=6)}
    b = build(3, rules, [seat0, seat1, {}], modifier_deck=deck).score_breakdown()
    assert [x_[field] for x_ in b] == [6, 6, 0]
    assert [x_["modifier_points"] for x_ in b] == [4, 4, -4]
    assert b[0]["error_edges"] == 0


def test_modifier_all_equal_changes_nothing():
    s = modifier_state("MOST_LAKES", [{}, {}], [])
    assert [x["modifier_points"] for x in s.score_breakdown()] == [0, 0]


def test_beginner_has_no_modifier():
    s = build(2, {"tiles": tiles([{"edges": "WWWW", "animal": "whale"}], players=2)}, [{(0, 0): (0, 0, 0)}, {}])
    assert [x["modifier_points"] for x in s.score_breakdown()] == [0, 0]


def test_modifier_deck_turns_each_round():
    s = GAME.new(2, {"level": "advanced"}, seed=3)
    deck = s.to_dict()["modifier_deck"]
    assert s.score_breakdown()[0]["modifier"] == deck[0]
    d = s.to_dict()
    for seat in d["seats"]:
        seat.update(finished=True, hand=None, pending=None)
    s2 = GAME.run_clock(d)     # every hand finished: the clock runs on, the round ends
    assert s2.to_dict()["round"] == 1
    assert s2.score_breakdown()[0]["modifier"] == deck[1]


# ---- extra task cards (section 2.7) ----------------------------------------------------------

def task_state(held, cells, faces, seat_extra=None, rows=2, cols=2):
    rules = {"level": "master", "board": board_rules(rows, cols),
             "tiles": tiles(faces, players=2, rows=rows, cols=cols)}
    seats = [dict({"tasks": held}, **(seat_extra or {})), {}]
    return build(2, rules, [cells, {}], seats)


def test_species_task_needs_three_in_one_closed_area():
    zoo = {"edges": "WWWW", "segments": [{"terrain": "W", "edges": "NESW"}, {"terrain": "P", "edges": ""}],
           "animal": "buffalo"}
    plains = [{"edges": "PPPP", "animal": "buffalo"}] * 3
    frame = {"top": "PP", "right": "PP", "bottom": "PP", "left": "PP"}
    rules = {"level": "master", "board": board_rules(2, 2, frame), "board_side": "frame",
             "tiles": tiles(plains + [{"edges": "PPPP"}], players=2, rows=2, cols=2)}
    cells = {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0), (1, 0): (2, 0, 0), (1, 1): (3, 0, 0)}
    s = build(2, rules, [cells, {}], [{"tasks": ["BUFFALO3", "ELEPHANT3"]}, {}])
    assert breakdown(s)["task_points"] == 3 - 3
    # Three buffalo each in its own closed patch: not one area -> failed.
    s = task_state(["BUFFALO3"], {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0), (1, 0): (2, 0, 0)}, [zoo] * 3)
    assert breakdown(s)["task_points"] == -3


def test_all_species_task():
    names = ["snake", "scorpion", "camel", "lizard"]
    faces = [{"edges": "DDDD", "animal": n} for n in names]
    frame = {"top": "DD", "right": "DD", "bottom": "DD", "left": "DD"}
    rules = {"level": "master", "board": board_rules(2, 2, frame), "board_side": "frame",
             "tiles": tiles(faces, players=2, rows=2, cols=2)}
    cells = {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0), (1, 0): (2, 0, 0), (1, 1): (3, 0, 0)}
    s = build(2, rules, [cells, {}], [{"tasks": ["DESERT4", "FOREST4"]}, {}])
    assert breakdown(s)["task_points"] == 4 - 4


def test_perfect_in_time_and_first_tasks():
    full = {(r, c): (r * 2 + c, 0, 0) for r in range(2) for c in range(2)}
    s = task_state(["PERFECT", "IN_TIME"], full, [{"edges": "WWWW"}] * 4)
    assert breakdown(s)["task_points"] == 5 + 3
    s = task_state(["PERFECT", "IN_TIME"], full, [{"edges": "DWWW"}] + [{"edges": "WWWW"}] * 3)
    assert breakdown(s)["task_points"] == -5 + 3                 # a rim error (B8)
    s = task_state(["IN_TIME"], {(0, 0): (0, 0, 0)}, [{"edges": "WWWW"}])
    assert breakdown(s)["task_points"] == -3
    s = task_state(["FIRST"], {}, [], {"jump_order": 1, "chip": 4, "finished": True})
    assert s.to_dict()["seats"][0]["finished"] is True
    assert breakdown(s)["task_points"] == 3
    s = task_state(["FIRST"], {}, [], {"jump_order": 2, "chip": 3, "finished": True})
    assert breakdown(s)["task_points"] == -3


def test_master_deals_two_task_cards_per_player_each_round():
    for players in (2, 3, 4):
        d = GAME.new(players, {"level": "master"}, seed=players).to_dict()
        assert len(d["tasks_face_up"]) == 2 * players


# ---- solo (section 5.5) ----------------------------------------------------------------------

def solo(difficulty, volcano):
    face = {"edges": "WWWW", "volcano": "dormant"} if volcano else {"edges": "WWWW"}
    rules = {"solo_difficulty": difficulty, "board": board_rules(1, 2), "tiles": tiles([face], players=1, rows=1, cols=2)}
    return build(1, rules, [{(0, 0): (0, 0, 0)}], [{"finished": True}])


def test_tv17_solo_medium_penalty_threshold():
    s = solo("medium", True)
    assert s.is_terminal() and s.to_dict()["solo_penalty"] == 2
    assert s.win_shares() == [0.0] and s.outcomes()[0]["solo_win"] == 0
    s = solo("medium", False)
    assert s.to_dict()["solo_penalty"] == 1 and s.win_shares() == [1.0]
    assert s.scores() == [-1.0]


def test_solo_thresholds_per_difficulty():
    assert solo("easy", True).win_shares() == [1.0]          # 2 < 3
    assert solo("hard", False).win_shares() == [0.0]         # 1 is not < 1


def test_solo_counts_every_volcano_and_no_plus_points():
    face = {"edges": "WWWW", "volcano": "active", "animal": "fish"}
    rules = {"board": board_rules(1, 1), "tiles": tiles([face], players=1, rows=1, cols=1)}
    s = build(1, rules, [{(0, 0): (0, 0, 0)}])
    assert breakdown(s)["round_total"] == -1


def test_solo_setup_fills_the_marked_spaces_without_volcanoes():
    for seed in range(5):
        d = GAME.new(1, seed=seed).to_dict()
        rules = d["rules"]
        board = d["seats"][0]["board"]
        marked = {tuple(m) for m in rules["board"]["solo_marked_cells"]}
        placed = {(r, c) for r, row in enumerate(board) for c, x in enumerate(row) if x}
        assert placed == marked
        for r, c in marked:
            x = board[r][c]
            face = rules["tiles"][x["tile"]]["faces"][x["face"]]
            assert len(set(face["edges"])) >= 2 and not face.get("volcano")
        assert d["rules"]["rounds"] == 0 and _timer(GAME.new(1, seed=seed)) == 360
