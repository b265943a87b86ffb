"""Shards sized by time (services.runner._tasks): the tasks of a run tile exactly the games not
yet written, whole deals per shard, the parts' shards aligned; before a rate is known the
blocks start at one game and double, so every CPU plays from the first second whatever a
game costs; once it is known a task is about TASK_SECONDS of play.  Rows never depend on the
grouping (tests/services/test_runner.py plays them)."""
from hypothesis import given, settings
from hypothesis import strategies as hs

from services import runner
from services.runner import MAX_TIMED_SHARD, TASK_SECONDS, Part, _gaps, _tasks
from services.spec import Cell


def _part(arm: str, start: int, count: int, deal: int = 1) -> Part:
    return Part(Cell(arm, {}, 3), {"games_per_deal": deal}, 7, start, count)


def _all(parts, covered=None, state=None, cpus=2, shard_size=None, measured=None):
    """Every task of `parts`, with the rate measured (seconds per game) after the first."""
    state = {} if state is None else state
    tasks = []
    for i, task in _tasks("maori", parts, covered if covered is not None else {}, state, cpus,
                          shard_size, "job", "/nowhere", 0, None):
        tasks.append((i, task))
        if measured is not None:
            games = sum(n for _, n in task["shards"])
            state["task_games"] = state.get("task_games", 0) + games
            state["task_seconds"] = state.get("task_seconds", 0.0) + games * measured
    return tasks


@settings(max_examples=150, deadline=None)
@given(hs.lists(hs.tuples(hs.integers(0, 3), hs.integers(0, 40)), min_size=1, max_size=4),
       hs.integers(1, 4), hs.sampled_from([None, 1e-5, 0.01, 3.0]),
       hs.lists(hs.tuples(hs.integers(0, 60), hs.integers(1, 30)), max_size=4),
       hs.sampled_from([None, 100]))
def test_the_tasks_tile_exactly_the_games_not_written(spans, deal, measured, written,
                                                      shard_size):
    parts = [_part(f"a{k}", deal * start, deal * count, deal)
             for k, (start, count) in enumerate(spans)]
    covered = {}
    for start, games in written:  # shards found written in the first part's cell
        first = deal * start
        if not any(a < first + deal * games and first < b
                   for a, b in covered.get(("a0", 3), [])):
            covered.setdefault(("a0", 3), []).append((first, first + deal * games))
    before = {key: list(ranges) for key, ranges in covered.items()}
    tasks = _all(parts, covered, cpus=2, shard_size=None if shard_size is None
                 else shard_size * deal, measured=measured)
    for k, part in enumerate(parts):
        played = sorted(s for i, t in tasks if i == k for s in t["shards"])
        games = [g for s, n in played for g in range(s, s + n)]
        assert len(games) == len(set(games))  # no game twice
        wanted = {g for a, b in _gaps(before.get((part.cell.arm, 3), []), part.start,
                                      part.start + part.count) for g in range(a, b)}
        assert set(games) == wanted  # every game not written, and only those
        for start, count in played:
            assert start % deal == 0 and count % deal == 0  # whole deals
            assert 0 < count <= (MAX_TIMED_SHARD if shard_size is None else shard_size * deal)
    for i, task in tasks:
        assert task["seed"] == 7 and task["key"][:3] == ("job", f"a{i}", 3)


def test_blind_blocks_start_at_one_game_and_double_until_a_rate_is_known():
    parts = [_part("a", 0, 10_000), _part("b", 0, 10_000)]
    state = {}
    blocks = []
    for i, task in _tasks("maori", parts, {}, state, 8, None, "job", "/x", 0, None):
        if i == 0:
            blocks.append(task["shards"][0][1])
        if len(blocks) == 5:
            break
    assert blocks == [1, 2, 4, 8, 16]  # the two parts' tasks share each block


def test_a_known_rate_makes_tasks_of_about_task_seconds():
    per_game = 0.25  # a strong agent's game: a task of about 40 games
    state = {"task_games": 100, "task_seconds": 100 * per_game}
    tasks = _all([_part("a", 0, 100_000)], state=state, cpus=2)
    sizes = [sum(n for _, n in t["shards"]) for _, t in tasks]
    assert sizes[0] == int(TASK_SECONDS / per_game)
    # and never more than the games left shared among the CPUs: the end spreads over them
    tail = _all([_part("a", 0, 30)], state=dict(state), cpus=2)
    assert [sum(n for _, n in t["shards"]) for _, t in tail] == [15, 15]


def test_a_fast_game_fills_files_of_at_most_the_cap():
    state = {"task_games": 10**6, "task_seconds": 10.0}  # 100,000 games a second
    (only,) = _all([_part("a", 0, 400_000)], state=state, cpus=1)
    shards = only[1]["shards"]
    assert sum(n for _, n in shards) == 400_000 and max(n for _, n in shards) == MAX_TIMED_SHARD


def test_a_fixed_shard_size_keeps_its_grid():
    tasks = _all([_part("a", 0, 1000)], cpus=2, shard_size=300, measured=1e-4)
    shards = sorted(s for _, t in tasks for s in t["shards"])
    assert shards == [(0, 300), (300, 300), (600, 300), (900, 100)]


def test_the_ramp_is_the_runners_own():
    assert runner.TASK_SECONDS == TASK_SECONDS and MAX_TIMED_SHARD == 5000


def test_the_first_block_is_about_a_second_at_the_catalogues_cost():
    """Before a task is timed the first block plays about FIRST_BLOCK_SECONDS at the
    catalogue's estimated cost of the dearest part (so a cheap game does not start with
    files of one game, and a strong agent's first task is short), then doubles."""
    import core_cy

    def part(arm, agents):
        return Part(Cell(arm, {}, 3), {"agents": [agents] * 3, "games_per_deal": 1}, 7, 0,
                    10**6)

    cheap = core_cy.catalogue.game_cost("maori", ["random"] * 3, 3).seconds
    dear = core_cy.catalogue.game_cost("maori", ["mcts"] * 3, 3).seconds
    assert dear > 10 * cheap
    for parts, cost in (([part("a", "random")], cheap),
                        ([part("a", "random"), part("b", "mcts")], dear)):
        state: dict = {}
        blocks = []
        for i, task in _tasks("maori", parts, {}, state, 64, None, "job", "/x", 0, None):
            if i == 0:
                blocks.append(sum(n for _, n in task["shards"]))
            if len(blocks) == 3:
                break
        first = max(1, int(runner.FIRST_BLOCK_SECONDS / cost))
        assert blocks == [first, 2 * first, 4 * first]
    bad = [Part(Cell("a", {}, 3), {"agents": ["no_such_agent"] * 3}, 7, 0, 100)]
    assert runner._first_block("maori", bad) == 1  # no estimate: one game
