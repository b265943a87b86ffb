"""Position builder and action encoders for the Forbidden Desert tests: positions are set up
through to_dict/from_dict, actions named through the game's ActionSpace (core_cy/engine/actions.py).
Cells are (row, col); a passenger or companion is a seat, NOBODY by default."""
from core_cy.games.forbidden_desert.engine import EQUIPMENT, GAME, NOBODY

ACTIONS = GAME.actions   # the engine's action kinds by name
END_ACTIONS = ACTIONS.encode("end_actions")
DRAW = ACTIONS.encode("draw")
EXCAVATE = ACTIONS.encode("excavate")
PICKUP = ACTIONS.encode("pickup")
METEO_SKIP = ACTIONS.encode("meteo_skip")
METEO_PEEK = ACTIONS.encode("meteo_peek")
WC_DRAW = ACTIONS.encode("wc_draw")
TAKEOFF = ACTIONS.encode("takeoff")
PEEK_KEEP = ACTIONS.encode("peek_keep")


# ---- action encoders, one per kind with parameters -------------------------------------
def PEEK_BOTTOM(i):
    """Put the i-th seen storm card (0 = the top) on the bottom."""
    return ACTIONS.encode("peek_bottom", position=i)


def MOVE(r, c, passenger=NOBODY):
    return ACTIONS.encode("move", row=r, col=c, passenger=passenger)


def DIG(r, c):
    return ACTIONS.encode("dig", row=r, col=c)


def NAVIGATE(pawn, r, c, passenger=NOBODY):
    return ACTIONS.encode("navigate", pawn=pawn, row=r, col=c, passenger=passenger)


def GIVE(giver, receiver):
    return ACTIONS.encode("give", giver=giver, receiver=receiver)


def PASS_EQUIPMENT(kind, giver, receiver):
    return ACTIONS.encode("pass_equipment", equipment=EQUIPMENT.index(kind), giver=giver,
                          receiver=receiver)


def BLAST(holder, r, c):
    return ACTIONS.encode("blast", holder=holder, row=r, col=c)


def JET(holder, r, c, companion=NOBODY):
    return ACTIONS.encode("jet", holder=holder, row=r, col=c, companion=companion)


def SHIELD(holder):
    return ACTIONS.encode("shield", holder=holder)


def SCOPE(holder, r, c):
    return ACTIONS.encode("scope", holder=holder, row=r, col=c)


def RESERVE(holder):
    return ACTIONS.encode("reserve", holder=holder)


def THROTTLE(holder):
    return ACTIONS.encode("throttle", holder=holder)


def TRACKER(holder):
    return ACTIONS.encode("tracker", holder=holder)


# ---- positions ---------------------------------------------------------------------------


def base(players=4, roles=None, seed=0, **rules):
    """A fresh game's dict with fixed roles, no sand, seat 0 to act with 4 actions."""
    if roles is not None:
        rules["roles"] = list(roles)
    d = GAME.new(players, rules=rules, seed=seed).to_dict()
    clear(d)
    d["current_player"] = 0
    return d


def clear(d):
    for row in d["board"]:
        for e in row:
            if e:
                e["sand"] = 0
    d["sand_supply"] = d["rules"]["sand_markers"]


def entry(d, rc):
    return d["board"][rc[0]][rc[1]]


def find(d, kind, nth=0, **match):
    hits = [(r, c) for r in range(5) for c in range(5)
            if d["board"][r][c] and d["board"][r][c]["kind"] == kind
            and all(d["board"][r][c].get(k) == v for k, v in match.items())]
    return hits[nth]


def storm(d):
    return next((r, c) for r in range(5) for c in range(5) if d["board"][r][c] is None)


def swap(d, a, b):
    d["board"][a[0]][a[1]], d["board"][b[0]][b[1]] = d["board"][b[0]][b[1]], d["board"][a[0]][a[1]]


def put(d, rc, kind, nth=0, **match):
    """Moves a tile of `kind` to cell rc (swapping); returns its board entry."""
    swap(d, find(d, kind, nth, **match), rc)
    return entry(d, rc)


def storm_to(d, rc):
    swap(d, storm(d), rc)
    d["storm"] = list(rc)


def set_sand(d, rc, n):
    e = entry(d, rc)
    d["sand_supply"] -= n - e["sand"]
    e["sand"] = n


def pawn_at(d, seat, rc):
    d["pawns"][seat]["tile"] = entry(d, rc)["tile"]


def card_ids(d, kind, direction=None, strength=None):
    out = []
    for i, c in enumerate(d["rules"]["storm_deck"]):
        if c["kind"] == kind and (direction is None or c.get("direction") == direction) and (
                strength is None or c.get("strength") == strength):
            out.append(i)
    return out


def stack_storm(d, cards):
    """Puts the given storm card ids on top of the draw pile, first drawn first."""
    pile = [x for x in d["storm_draw_pile"] + d["storm_discard_pile"] if x not in cards]
    d["storm_draw_pile"] = pile + list(reversed(cards))
    d["storm_discard_pile"] = []


def wind(d, direction, strength, nth=0):
    return card_ids(d, "wind", direction, strength)[nth]


def give_card(d, kind, seat, nth=0):
    """Gives seat an equipment card of kind (taking it out of the pile)."""
    ids = [i for i, t in enumerate(_eq_types(d)) if t == kind]
    i = ids[nth]
    d["equipment_owner"][i] = seat
    d["equipment_pile"] = [x for x in d["equipment_pile"] if x != i]
    return i


def _eq_types(d):
    out = []
    for name in EQUIPMENT[:-1]:           # the Storm Tracker is include_storm_tracker
        out += [name] * d["rules"]["equipment"][name]
    if d["rules"]["include_storm_tracker"]:
        out.append("storm_tracker")
    return out


def load(d):
    return GAME.from_dict(d)


def cell_of_tile(d, t):
    return next((r, c) for r in range(5) for c in range(5)
                if d["board"][r][c] and d["board"][r][c]["tile"] == t)


def pawn_cell(state, seat):
    d = state.to_dict()
    return cell_of_tile(d, d["pawns"][seat]["tile"])


def run_storm(state):
    """Ends the action phase and draws every storm card of the phase."""
    state.apply(END_ACTIONS)
    while not state.is_terminal() and state.to_dict()["phase"] == "storm":
        state.apply(DRAW)
    return state
