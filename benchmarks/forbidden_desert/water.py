"""Forbidden Desert: where a team's water comes from and where it goes (issue 10: the team
agents lose about two thirds of their 4-player Novice games to thirst).

    python -m benchmarks.forbidden_desert.water [--agents deep_search,team_search] [--games 200]
        [--players 4] [--difficulty novice] [--seed 1]

Plays each game through the Python face one decision at a time (agents.choose, as the twin
tests do: a planner then searches at every decision instead of following its cached line,
which plays about as well) and puts every change of a canteen down to its cause: a well
excavated (with how many pawns stood on it), the Water Carrier's draw, the Secret Water
Reserve, and each Sun Beats Down (water drunk, and pawns it spared in shade: an excavated
tunnel or a Solar Shield).  Water passed between pawns moves water, it adds none.  Per game
means; the games are new(players, seed + i), so two agents meet the same setups.  Then the
thirst losses before the team holds the fourth part, by where they happened: with or without
a Water Carrier, the wells already excavated, the water-drop tiles still to dig.
"""
import argparse
import collections
import time


from core_cy import agents  # noqa: E402
from core_cy.games.forbidden_desert.engine import GAME  # noqa: E402
from benchmarks import share_interval


def waters(d):
    return [p["water"] for p in d["pawns"]]


def tile_kind(d, tile):
    for row in d["board"]:
        for e in row:
            if e and e["tile"] == tile:
                return e["kind"]
    return None


def top_storm_card(d):
    """The kind of the storm card the next draw reveals, or None when the pile must be
    reshuffled first (its order is not known yet)."""
    pile = d["storm_draw_pile"]
    return d["rules"]["storm_deck"][pile[-1]]["kind"] if pile else None


def cell_of(d, tile):
    for r, row in enumerate(d["board"]):
        for c, e in enumerate(row):
            if e and e["tile"] == tile:
                return r, c
    return None


def account(tally, d0, d1, action):
    """Adds what one decision did to the canteens to tally."""
    kind, params = GAME.actions.decode(action)
    before, after = waters(d0), waters(d1)
    gained = sum(max(0, b - a) for a, b in zip(before, after))
    if kind == "give":
        giver, receiver = d0["pawns"][params["giver"]], d0["pawns"][params["receiver"]]
        same = giver["tile"] == receiver["tile"]
        tally["water shared on a tile" if same else "water the Carrier gave next door"] += 1
    elif kind == "excavate":
        acting = d0["pawns"][d0["current_player"]]["tile"]
        if tile_kind(d1, acting) == "well":
            tally["wells excavated"] += 1
            tally["pawns on a well excavated"] += sum(p["tile"] == acting for p in d0["pawns"])
            tally["water from wells"] += gained
    elif kind == "wc_draw":
        tally["Water Carrier draws"] += 1
        tally["water from Water Carrier draws"] += gained
    elif kind == "reserve":
        tally["water from the Secret Water Reserve"] += gained
    elif kind == "draw" and top_storm_card(d0) == "sun_beats_down":
        drank = [b < a for a, b in zip(before, after)]
        tally["Sun Beats Down cards"] += 1
        tally["water drunk"] += sum(drank)
        tally["pawns spared by shade"] += len(drank) - sum(drank)


def dead_pawn_setting(d):
    """At a thirst loss (the final state d): the dead pawn's grid steps to the Water Carrier
    (None without one), the Carrier's water, and whether he stood on an excavated well."""
    dead = min(range(len(d["pawns"])), key=lambda q: d["pawns"][q]["water"])
    carrier = [p for p in d["pawns"] if p["adventurer"] == "water_carrier"]
    if not carrier or carrier[0] is d["pawns"][dead]:
        return None, None, None
    (r0, c0), (r1, c1) = cell_of(d, d["pawns"][dead]["tile"]), cell_of(d, carrier[0]["tile"])
    t = carrier[0]["tile"]
    on_well = any(e and e["tile"] == t and e["kind"] == "well" and e["excavated"]
                  for row in d["board"] for e in row)
    return abs(r0 - r1) + abs(c0 - c1), carrier[0]["water"], on_well


def thirst_setting(d):
    """Where a thirst loss before the fourth part happened, from the last turn's start d: a
    Water Carrier in the team or not, wells excavated, water-drop tiles left to dig, and the
    team's water then."""
    wells = drops = 0
    for row in d["board"]:
        for e in row:
            if e and e["kind"] in ("well", "mirage"):
                if not e["excavated"]:
                    drops += 1
                elif e["kind"] == "well":
                    wells += 1
    carrier = any(p["adventurer"] == "water_carrier" for p in d["pawns"])
    return (("Water Carrier" if carrier else "no Water Carrier") + f", {wells} wells excavated, "
            f"{drops} water-drop tiles left"), sum(waters(d))


def play(agent, args):
    tally = collections.Counter()
    ends = collections.Counter()
    early = collections.Counter()        # thirst losses before the fourth part, by setting
    early_water = collections.Counter()
    dead_steps = collections.Counter()    # thirst before the fourth part: steps to the Carrier
    carrier_water = []
    cpu = time.process_time()
    for i in range(args.games):
        state = GAME.new(args.players, rules={"difficulty": args.difficulty}, seed=args.seed + i)
        step = 0
        d0 = state.to_dict()
        turn_start = d0
        while not state.is_terminal():
            a = agents.choose(state, agent, seed=step)
            state.apply(a)
            d1 = state.to_dict()
            account(tally, d0, d1, a)
            d0 = d1
            if d1["phase"] == "actions" and d1["actions_left"] == 4:
                turn_start = d1
            step += 1
        ends[state.end_reason] += 1
        held = sum(p["state"] == "held" for p in d0["parts"])
        if state.end_reason == "thirst" and held < 4:
            setting, water = thirst_setting(turn_start)
            early[setting] += 1
            early_water[setting] += water
            steps, wcw, on_well = dead_pawn_setting(d0)
            if steps is not None:
                dead_steps[min(steps, 4)] += 1
                carrier_water.append(wcw)
                tally["Carrier on an excavated well at a thirst loss"] += on_well
        if state.end_reason == "thirst":
            tally["team water at a thirst loss"] += sum(max(0, w) for w in waters(d0))
            tally["thirst losses"] += 1
    cpu = time.process_time() - cpu
    wins = ends.get("win", 0)
    lo, hi = share_interval(wins / args.games, args.games)
    print(f"{agent}, {args.players} players, {args.difficulty}: win {wins / args.games:.1%} "
          f"[{lo:.1%}, {hi:.1%}] over {args.games} games ({args.games / cpu:.1f} games per "
          f"CPU-second through the Python face); ends {dict(ends)}")
    per_well = tally["pawns on a well excavated"] / max(1, tally["wells excavated"])
    print(f"  {'pawns on a well when it is excavated':38s} {per_well:6.2f} per well")
    for name in ("wells excavated", "water from wells",
                 "Water Carrier draws", "water from Water Carrier draws",
                 "water from the Secret Water Reserve", "Sun Beats Down cards", "water drunk",
                 "pawns spared by shade", "water shared on a tile",
                 "water the Carrier gave next door"):
        print(f"  {name:38s} {tally[name] / args.games:6.2f} per game")
    print(f"  {'team water left at a thirst loss':38s} "
          f"{tally['team water at a thirst loss'] / max(1, tally['thirst losses']):6.2f} per loss")
    print(f"  thirst losses before the fourth part: {sum(early.values())}, by setting (the "
          "team's mean water at the start of the last turn):")
    for setting, n in early.most_common():
        print(f"    {setting:58s} {n:5d}  ({early_water[setting] / n:.1f} water)")
    if carrier_water:
        print(f"  ... of them with a Water Carrier (not the dead pawn): {len(carrier_water)}; "
              f"grid steps from the dead pawn to him {dict(sorted(dead_steps.items()))} (4: 4 or "
              f"more); his water then {sum(carrier_water) / len(carrier_water):.2f}; on an "
              f"excavated well {tally['Carrier on an excavated well at a thirst loss']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default="deep_search,team_search")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--difficulty", default="novice")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for agent in args.agents.split(","):
        play(agent, args)


if __name__ == "__main__":
    main()
