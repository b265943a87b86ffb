"""The agents every game shares, written once over the engine contract: random, greedy, a
game's engine policies, and information-set MCTS (core_cy/agents/agent.pyx), and
AgentGame, the face every game's class derives from (core_cy/agents/game.py)."""
from core_cy.agents.agent import (GENERIC_AGENTS, NO_POLICY_PARAMS, Param, PolicyParams,
                                  action_values, agent_catalogue, agent_params, agent_spec,
                                  canonical_agent, choose, decision_iterations,
                                  game_mcts_params, mcts_params, memory_bytes, parse_agent,
                                  parse_policy_params, policy_params_from_data, random_choice,
                                  search_priors, search_stats, search_visits)
from core_cy.agents.game import AgentGame

__all__ = ["AgentGame", "GENERIC_AGENTS", "NO_POLICY_PARAMS", "Param", "PolicyParams", "action_values",
           "agent_catalogue", "agent_params", "agent_spec", "canonical_agent", "choose",
           "decision_iterations", "game_mcts_params", "mcts_params", "memory_bytes",
           "parse_agent", "parse_policy_params", "policy_params_from_data", "random_choice",
           "search_priors", "search_stats", "search_visits"]
