"""The service layer: specs, the runner, the registry, the CLI and the API.  It uses both
lower layers, so it tells the statistics (pipelines) the facts of each game from the engines'
catalogue: pipelines never imports an engine."""
import pipelines


def _game_facts(name: str) -> "pipelines.GameFacts | None":
    import core_cy

    try:
        game = core_cy.load(name)
    except ValueError:  # a game no longer in the catalogue: competitive, no safeties
        return None
    return pipelines.GameFacts(cooperative=bool(game.cooperative),
                               safety_end_reasons=tuple(game.safety_end_reasons))


pipelines.register_game_facts(_game_facts)
