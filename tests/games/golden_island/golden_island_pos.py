"""Position builder and action encoders for The Golden Island rule tests.

Tests start from a dealt game's state dict (GoldenIslandGame.to_dict) and move components
between their places with the helpers below, so that every position stays complete (cards,
permits, pirates and island cards each in exactly one place); `build` turns the dict into a
state through game.from_dict, which checks exactly that.

Default card ids (core_cy/games/golden_island/data/cards.json): 0 landing/1, 1 landing/2,
2 landing/2 symbol, 3 landing/3, 4 landing/3, 5 landing/4 symbol, 6 thief/3,
7 thief/lighthouse symbol, 8 master thief/5, 9 fortune teller/2 symbol,
10 fortune teller/4, 11 pirate/1 symbol, 12 pirate/4, 13 veteran/3, 14 veteran/5 symbol,
15 imitator/lighthouse.  Nest ring: 0 lighthouse, 1 island cards, 2 black house, 3 permits,
4 gamble, 5 white, 6 island cards, 7 purple, 8 permits, 9 gamble, 10 natural, 11 island cards.
"""
from __future__ import annotations

import copy

import core_cy

GAME = core_cy.load("golden_island")
COLOURS = ("black", "white", "purple", "natural")
NODES = ("H",) + tuple(f"T{i}" for i in range(1, 13)) + ("VL", "VU")
ISLANDS = NODES[1:13]

LANDING_1, LANDING_2, LANDING_2S, LANDING_3, LANDING_3B, LANDING_4S = range(6)
THIEF_3, THIEF_LH, MASTER_5, FORTUNE_2S, FORTUNE_4, PIRATE_1S, PIRATE_4 = range(6, 13)
VETERAN_3, VETERAN_5S, IMITATOR = 13, 14, 15
SYMBOL_CARDS = (LANDING_2S, LANDING_4S, THIEF_LH, FORTUNE_2S, PIRATE_1S, VETERAN_5S)

ACTIONS = GAME.actions
COPY_SLOT = 5          # the "slot" of the Imitator's copied ability
PASS = ACTIONS.encode("pass")


def SWAP(*slots):
    """R4: discard the hand cards in these slots (none: keep the hand)."""
    return ACTIONS.encode("swap", discard_mask=sum(1 << k for k in slots))


def MOVE(slot, captain, ship, way=0):
    """Play the hand card in slot for movement, ending with the captain on nest space
    `captain` and the ship on node `ship` (a name such as "T5"); `way` 1: the captain goes
    counter-clockwise (only with nest_actions = every_space; else always 0)."""
    return ACTIONS.encode("move", slot=slot, way=way, captain=captain, ship=NODES.index(ship))


def move_ends(actions, slot=None):
    """(captain, ship name) of the move actions among `actions` (of one hand slot)."""
    out = set()
    for a in ACTIONS.select(actions, "move"):
        x = ACTIONS.decode(a)[1]
        if slot is None or x["slot"] == slot:
            out.add((x["captain"], NODES[x["ship"]]))
    return out


def GAMBLE_PIRATE(colour):
    return ACTIONS.encode("gamble_pirate", colour=COLOURS.index(colour))


def ABILITY(slot, effect):
    """An ability action: the card in `slot` (COPY_SLOT: the copied ability) with `effect`
    from STEAL, PEEK, TAKE, LAND, VOLCANO or IMITATE."""
    kind, params = effect
    return ACTIONS.encode(kind, slot=slot, **params)


def COMBO(*colours):
    """The pirate combo index: one colour, or a pair."""
    return GAME.combos.index(tuple(sorted(colours, key=COLOURS.index)))


def STEAL(victim, cards=1):
    return "steal", {"victim": victim, "cards": cards}


def STEAL_SPLIT(victim, second):
    """Master thief with master_thief_victims = two: one card from each of two rivals."""
    return "steal_split", {"victim": victim, "second": second}


def PEEK(island):
    return "peek", {"island": int(island[1:]) - 1}


def TAKE(*colours):
    return "take", {"combo": COMBO(*colours)}


def LAND(value, *colours):
    return "land", {"combo": COMBO(*colours), "permit": value}


def VOLCANO(colour, relic="R1"):
    return "volcano", {"colour": COLOURS.index(colour), "relic": int(relic[1:]) - 1}


def IMITATE(seat):
    return "imitate", {"target": seat}


def base(players=4, seed=1, rules=None):
    """A freshly dealt game as a dict."""
    return GAME.new(players, rules=rules, seed=seed).to_dict()


# Fields that hold a set, and the order to_dict writes them in (from_dict takes them only so).
SETS = {"permits_held": None, "permits_pool": None, "island_cards": ISLANDS,
        "remembered_islands": ISLANDS, "known_chests": ISLANDS}


def in_order(d):
    """d with its rules in full (a test may name only the options it changes) and every
    set-valued field of a seat in to_dict's order (moved in any order)."""
    d["rules"] = GAME.new(d["players"], rules=d["rules"]).to_dict()["rules"]
    for s in d["seats"]:
        for key, names in SETS.items():
            s[key] = sorted(s[key], key=None if names is None else names.index)
    return d


def build(d):
    return GAME.from_dict(in_order(d))


def island(d, name):
    return d["islands"][int(name[1:]) - 1]


def set_hand(d, seat, cards):
    """The seat's hand becomes `cards` (taken from its deck or discard); the old hand
    goes to the top of the deck."""
    s = d["seats"][seat]
    old = s["hand"]
    s["hand"] = []
    s["deck"] = [c for c in s["deck"] + old if c not in cards]
    s["discard"] = [c for c in s["discard"] if c not in cards]
    s["hand"] = sorted(cards)


def set_deck_top(d, seat, card):
    """Puts `card` (from the deck or discard) on top of the seat's deck."""
    s = d["seats"][seat]
    assert card not in s["hand"]
    s["deck"] = [c for c in s["deck"] if c != card] + [card]
    s["discard"] = [c for c in s["discard"] if c != card]


def set_discard(d, seat, cards):
    """The seat's discard pile becomes `cards` (bottom first), taken from its deck."""
    s = d["seats"][seat]
    assert not set(cards) & set(s["hand"])
    s["deck"] = [c for c in s["deck"] + s["discard"] if c not in cards]
    s["discard"] = list(cards)


def give_pirates(d, seat, *colours):
    """Moves pirates of these colours from their houses to the seat."""
    for c in colours:
        assert d["houses"][c] > 0
        d["houses"][c] -= 1
        d["seats"][seat]["pirates"][c] += 1


def put_pirates(d, node, *colours):
    """Moves pirates from their houses onto an island or volcano."""
    for c in colours:
        d["houses"][c] -= 1
        where = d["volcanoes"][node] if node in ("VL", "VU") else island(d, node)["pirates"]
        where[c] += 1


def set_permits(d, seat, held=None, pool=None, placed=()):
    """The seat's permits: `held` in hand, `pool` in the nest, `placed` as (island, value)
    pairs on top of the islands' stacks; the rest of 1..6 goes to the pool (held and pool
    default to what is left) and the 7 stays at the volcano unless named."""
    s = d["seats"][seat]
    for isl in d["islands"]:
        isl["permits"] = [p for p in isl["permits"] if p[0] != seat]
    used = set(held or []) | {v for _, v in placed}
    for name, v in placed:
        island(d, name)["permits"].append([seat, v])
    s["permits_held"] = sorted(held or [])
    s["permits_pool"] = sorted(pool if pool is not None else
                               [v for v in range(1, 7) if v not in used])
    s["seven_at_volcano"] = 7 not in used and 7 not in s["permits_pool"]


def give_island_cards(d, seat, *names, remember=()):
    """Moves island cards (from the deck or other seats) into the seat's hand."""
    for name in names:
        assert name != d["golden_island"]
        d["island_deck"] = [c for c in d["island_deck"] if c != name]
        for s in d["seats"]:
            s["island_cards"] = [c for c in s["island_cards"] if c != name]
        d["seats"][seat]["island_cards"].append(name)
        d["seats"][seat]["remembered_islands"] = sorted(
            set(d["seats"][seat]["remembered_islands"]) | {name})
    d["seats"][seat]["remembered_islands"] = sorted(
        set(d["seats"][seat]["remembered_islands"]) | set(remember))


def empty_island_deck(d, to_seat):
    """Deals the whole island deck to a seat."""
    give_island_cards(d, to_seat, *list(d["island_deck"]))


def clone(d):
    return copy.deepcopy(d)
