"""Every seat at once: the values of a per-seat option (a starting bonus) that make every seat
fair together (a spec's `balance.seat: "all"`).

    meeplelab balance SPEC          # balance.option a per-seat option, balance.seat "all"

- run_all_seats: per player count, the first seat at 0 (the book) and the other k - 1 seats'
  values searched together by pipelines.fair_vector.search: every vector of a look played
  on common deals, a multinomial logit of the seats' figures fitted around the answer, looks
  on the small grid around the estimate until every seat's interval (the seats' intervals
  hold together at 95%) is within +-precision or max_games are played; then the integer vector
  nearest the answer confirmed on fresh deals (the spec's seed + 1), every seat judged at
  +-delta with intervals that hold together.
The games are shard tasks of the one runner (services.runner.Player), as the one-seat
search's (services/balance.py, whose parts and units this module uses): kept in the job's
results folder (arm '<option>=[v1,...,vk]'), resumable, the same answer on any cluster.  The
answer leads with what to do: "Give seat 2 one extra polyp, seat 3 ...: every seat fair
within +-1 points, shown on N fresh games", or says plainly what is not decided.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pipelines import fair_vector as fvec
from pipelines.figures import _margin_text as margin_text
from pipelines.figures import half_the_time
from services import balance as sb

if TYPE_CHECKING:
    from services.runner import Player

FIRST = 0                 # the first seat's value: the book (every option's 0)
WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _arm(option: str, vector, fresh: bool = False, rung: str | None = None) -> str:
    """The results folder's arm of one vector (`fresh`: its confirmation's deals; `rung`:
    the agent of a question asked per strength, '<arm>@<agent>')."""
    from services.spec import ladder_arm

    text = f"{option}=[{','.join(str(int(v)) for v in vector)}]" + (
        ",confirmation" if fresh else "")
    return text if rung is None else ladder_arm(text, rung)


def _seat_amount(value: int, unit: str) -> str:
    """'one extra polyp', 'three extra polyps', 'two polyps fewer', 'nothing'."""
    if value == 0:
        return "nothing"
    n = abs(value)
    word = WORDS[n] if n < len(WORDS) else f"{n:,}"
    one = unit[:-1] if unit.endswith("s") and n == 1 else unit
    return f"{word} extra {one}" if value > 0 else f"{word} {one} fewer"


def give_text(vector: list, unit: str) -> str:
    """'give seat 2 one extra polyp, seat 3 two extra polyps and seat 4 three extra polyps
    (seat 1 as the book has it)'; every value 0: 'leave every seat as the book has it'."""
    if not any(vector):
        return "leave every seat as the book has it"
    parts = [f"seat {s + 1} {_seat_amount(v, unit)}" for s, v in enumerate(vector) if s > 0]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    first = "as the book has it" if vector[0] == 0 else _seat_amount(vector[0], unit)
    return f"give {listed} (seat 1 {first})"


def _seats_text(seats: list, who: list[int]) -> str:
    named = [r for r in seats if r["seat"] in who]
    return " and ".join(f"seat {r['seat'] + 1} ({100 * r['mean']:+.1f} points)" for r in named)


def lead_sentence(ans: fvec.Answer, conf: dict | None, option: str, delta: float) -> str:
    """What to do, in one sentence, reconciled with the confirmation on fresh deals."""
    unit = sb._unit(option)
    rng = f"{ans.lo:g}..{ans.hi:g}"
    if ans.status == "not_identified":
        return (f"Not decided: the seats' shares are not shown to move with {option} in {rng} "
                "enough to solve for every seat at once, so no values can be named")
    if ans.status == "outside_range":
        beyond = [f"seat {s + 2}'s lies {'below' if high < ans.lo else 'above'} it"
                  for s, (low, high) in enumerate(zip(ans.low, ans.high))
                  if high < ans.lo or low > ans.hi]
        return (f"No values of {option} in {rng} make every seat fair: "
                f"{' and '.join(beyond)} (with seat 1 at {ans.first}); the nearest values "
                f"in the range would {give_text(ans.vector, unit)}")
    give = give_text(ans.vector, unit)
    if conf is None:
        return (f"{give[0].upper() + give[1:]}: the search's nearest integer values, not "
                "confirmed on fresh games (confirm_games is 0)")
    n, seed = conf["games"], conf["seed"]
    margin = margin_text(delta)
    if conf["verdict"] == "fair":
        return (f"{give[0].upper() + give[1:]}: every seat fair within {margin}, shown on "
                f"{n:,} fresh games (seed {seed})")
    if conf["verdict"] == "unfair":
        return (f"Not decided: the search points to these values ({give}), but on {n:,} "
                f"fresh games (seed {seed}) {_seats_text(conf['seats'], conf['beyond'])} "
                f"{'is' if len(conf['beyond']) == 1 else 'are'} shown more than {margin} "
                "from fair; more games on the search and on fresh deals would tell which is "
                "wrong")
    return (f"Probably {give}: the search's nearest integer values, not yet shown fair "
            f"within {margin} on {n:,} fresh games (seed {seed})")


def answer_sentence(ans: fvec.Answer, option: str, precision: float,
                    more: float | None, agent: str) -> str:
    """The search's answer: every free seat's fair value with its simultaneous interval and
    the integer vectors still possible."""
    if ans.status == "not_identified":
        return (f"{option} for every seat at once, {ans.players} players, under {agent}: no "
                "fair values can be solved for from the games played")
    unit = sb._unit(option)

    def bound(x):   # a bound beyond the range: the interval reaches that end
        return (f"below {ans.lo:g}" if x < ans.lo else f"above {ans.hi:g}" if x > ans.hi
                else f"{x:.2f}")
    seats = ", ".join(f"seat {s + 2} {v:.2f} [{bound(lo)}, {bound(hi)}]" for s, (v, lo, hi)
                      in enumerate(zip(ans.estimate, ans.low, ans.high)))
    k = ans.players
    text = (f"{option} for every seat at once, {k} players, under {agent}: {seats} {unit} "
            f"with seat 1 at {ans.first} (95% for all {k - 1} intervals together: each at "
            f"{100 * (1 - ans.seat_alpha):.1f}%; searched {ans.lo:g}..{ans.hi:g})")
    if ans.possible_count:
        named = "; ".join(str(v) for v in ans.possible)
        text += (f"; the integer vectors still possible together: {named}"
                 + (f" and {ans.possible_count - len(ans.possible)} more"
                    if ans.possible_count > len(ans.possible) else ""))
    if ans.half_width > precision:
        text += f"; not decided to ±{precision:g}" + (
            f": {half_the_time(more, would='narrow it that far')}" if more else "")
    return text


def confirmation_sentence(conf: dict, option: str, vector: list, players: int,
                          delta: float) -> str:
    seats = ", ".join(f"seat {r['seat'] + 1} {100 * r['mean']:+.1f} [{100 * r['low']:+.1f}, "
                      f"{100 * r['high']:+.1f}]" for r in conf["seats"])
    verdict = {"fair": f"every seat fair within {margin_text(delta)}",
               "unfair": "not fair: " + _seats_text(conf["seats"], conf["beyond"])
               + f" shown beyond {margin_text(delta)}",
               "not decided": f"not decided at {margin_text(delta)}"
               + (f" ({_seats_text(conf['seats'], conf['off'])} shown off fair, not beyond "
                  f"{margin_text(delta)})" if conf["off"] else "")}[conf["verdict"]]
    return (f"{option} = {vector}, {players} players: each seat's win share less the others' "
            f"mean, {seats} points (95% together) over {conf['games']:,} fresh games (seed "
            f"{conf['seed']}): {verdict}")


def _seat_spans(a: dict) -> list[tuple[float, float]]:
    """A rung's interval of every free seat (an answer's dict, fvec.Answer.as_dict); an
    unsolved answer: every value possible."""
    if a["status"] == "not_identified" or not a["low"]:
        return [(-math.inf, math.inf)] * (a["players"] - 1)
    return [(-math.inf if lo is None else lo, math.inf if hi is None else hi)
            for lo, hi in zip(a["low"], a["high"])]


def strength_verdict(rungs: list[tuple[str, dict]], precision: float) -> dict:
    """Whether the values that make every seat fair move with strength, from the rungs'
    answers [(agent, answer dict)]: 'moves' when two rungs' intervals are disjoint on some
    seat, 'holds' when every rung names every seat's value within +-precision and their
    intervals overlap on every seat, else 'undecided'; {verdict, sentence}."""
    spans = [_seat_spans(a) for _, a in rungs]
    listed = "; ".join(
        f"{agent}: " + (", ".join(f"seat {s + 2} {lo:.2f}..{hi:.2f}" for s, (lo, hi)
                                  in enumerate(sp)) if a["status"] != "not_identified"
                        else "not solved")
        for (agent, a), sp in zip(rungs, spans))
    what = "the compensation of every seat"
    apart = sb.rungs_apart([agent for agent, _ in rungs], spans)
    if apart:
        one, two, coords = apart
        seats = " and ".join(f"seat {s + 2}" for s in coords)
        return {"verdict": "moves", "sentence": (
            f"{what} moves with strength: {seats}'s fair values under {one} and {two} "
            f"do not overlap ({listed})")}
    narrow = [a["status"] == "found" and all((hi - lo) / 2 <= precision for lo, hi in sp)
              for (_, a), sp in zip(rungs, spans)]
    if all(narrow):
        return {"verdict": "holds", "sentence": (
            f"{what} holds across strengths: every rung names every seat's fair value to "
            f"+-{precision:g} and their intervals overlap on every seat ({listed})")}
    wide = [agent for (agent, _), ok in zip(rungs, narrow) if not ok]
    return sb.not_decided_sentence(what, "the intervals overlap on every seat", wide,
                                   precision, listed)


def run_all_seats(spec, player: Player) -> dict:
    """Every player count's search and confirmation (see the module), and asked per
    strength (balance.agents), every rung's, then per player count whether the values move
    with strength (strength_verdict)."""
    rungs = spec.balance_rungs()
    questions = [(n, rung) for n in spec.player_counts() for rung in rungs]
    cells = [_cell(spec, player, players, rung, len(rungs) > 1, len(questions) - 1 - k)
             for k, (players, rung) in enumerate(questions)]
    result = {"kind": "all_seats", "game": spec.game, "option": spec.balance.option,
              "cells": cells}
    if len(rungs) > 1:
        result["strength"] = [
            {"players": n, **strength_verdict([(c["agent"], c["answer"]) for c in cells
                                               if c["players"] == n], spec.balance.precision)}
            for n in spec.player_counts()]
    return result


def _cell(spec, player: Player, players: int, rung: str | None, named: bool,
          later: int) -> dict:
    """One answer: the search of one player count under one rung's agents (rung None: the
    spec's agents; `named`: the rung names its arms), its confirmation and its sentences;
    `later`: the answers still to search after it (for the progress's estimate)."""
    b = spec.balance
    agents = spec.agent_list(players) if rung is None else [rung] * players
    per = spec.games_per_deal(players)
    arm_rung = rung if named else None
    under = f" under {rung}" if named else ""
    truncated = [0]

    def play(vectors, start, count):
        full = [[FIRST] + [int(x) for x in v] for v in vectors]
        parts = [sb._part(spec, _arm(b.option, v, rung=arm_rung), players,
                          spec.searched_rules(players, v), agents, spec.seed, start, count)
                 for v in full]
        outs = sb._play(player, spec, parts)
        truncated[0] += sum(out["truncated"] for out in outs)
        return np.stack([fvec.figures(out["seat_win_share"]) for out in outs], axis=1)

    def on_look(ans, c, waves, planned):
        used = sum(y.shape[0] * y.shape[1] for _, y in waves)
        here = (planned - used + b.confirm_games) * per
        player.expect(here + later * (planned + b.confirm_games) * per,
                      f"{players} players{under}: every seat's {b.option}, look {len(waves)}, "
                      f"around {ans.vector}, {used:,} games so far")

    player.expect(None, f"{players} players{under}: every seat's {b.option}, the first look")
    started = player.cpu_seconds
    ans, c, waves = fvec.search(play, players, b.range[0], b.range[1], b.precision,
                                b.wave_games, b.max_games, base=FIRST, on_look=on_look)
    conf = None
    if b.confirm_games and ans.status != "not_identified":
        player.expect(b.confirm_games * per, f"{players} players{under}: confirming "
                      f"{b.option} = {ans.vector} on fresh deals")
        seed = spec.seed + sb.CONFIRM_SEED_OFFSET
        [out] = sb._play(player, spec, [sb._part(
            spec, _arm(b.option, ans.vector, fresh=True, rung=arm_rung), players,
            spec.searched_rules(players, ans.vector), agents, seed, 0, b.confirm_games)])
        truncated[0] += out["truncated"]
        conf = {**fvec.confirmation(out["seat_win_share"], b.delta), "seed": seed}
        conf["sentence"] = confirmation_sentence(conf, b.option, ans.vector, players, b.delta)
    more = fvec.games_to_precision(ans, c, b.precision)
    who = ", ".join(sorted(set(agents)))
    sentence = answer_sentence(ans, b.option, b.precision, more, who)
    if truncated[0]:
        sentence += (f"; {truncated[0]:,} games ended at a simulator safety were left out "
                     "(not counted)")
    return {"players": players, "seat": None, "agent": who,
            "rung": rung, "answer": ans.as_dict(),
            "recommendation": {"verdict": conf["verdict"] if conf else ans.status,
                               "vector": ans.vector,
                               "sentence": lead_sentence(ans, conf, b.option, b.delta)},
            "sentence": sentence,
            "games": int(sum(y.shape[0] * y.shape[1] for _, y in waves)),
            "truncated": truncated[0],
            "looks": [{"vectors": [[FIRST] + [int(x) for x in v] for v in vs],
                       "games_per_vector": int(y.shape[0])} for vs, y in waves],
            "cpu_seconds": player.cpu_seconds - started,
            "confirmations": [conf] if conf else []}
