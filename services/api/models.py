"""Response models of the API (what every route answers with, in the schema and for real)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.registry import FINISHED, STATUSES

Status = Literal[STATUSES]


class AgentInfo(BaseModel):
    """An agent of a game: what it does and its parameters (written name(key=value, ...))."""

    description: str
    parameters: dict[str, Any] = Field(description="JSON schema of the agent's parameters")


class GameInfo(BaseModel):
    """A game of the catalogue: its rule options as a JSON schema, players, agents, outcomes."""

    model_config = ConfigDict(extra="allow")
    name: str
    title: str
    min_players: int
    max_players: int
    cooperative: bool
    engine_version: str
    build: str = Field(description='which build of the engines is loaded: "release", or '
                       '"checked" (bounds checks on, the test suite\'s)')
    rules: dict[str, Any] = Field(description="JSON schema of the rule options")
    agents: dict[str, AgentInfo] = Field(description="agent name -> what it does and its "
                                         "parameters")
    end_reasons: list[str]
    game_outcomes: list[str]
    seat_outcomes: list[str]
    outcome_labels: dict[str, list[str]]
    presets: dict[str, Any] = Field(description="the form's agent presets: {players: the usual "
                                    "player count, preset: the default one, presets: {fast | "
                                    "strong | strongest: {agent, note, games_per_cpu_second}}} "
                                    "(core_cy/games/<game>/presets.json)")


class ProgressView(BaseModel):
    done: int = Field(description="games finished")
    total: int | None = Field(description="games planned (with stop_when: at most)")
    games_per_second: float | None
    eta_seconds: float | None

    @classmethod
    def of(cls, record: dict) -> "ProgressView":
        """The progress of a job's registry record."""
        return cls(done=record["games_done"], total=record["games_total"],
                   games_per_second=record["games_per_second"],
                   eta_seconds=record["eta_seconds"])


class ExperimentView(BaseModel):
    """An experiment as the API shows it."""

    id: str
    name: str
    game: str
    status: Status
    spec: dict[str, Any] = Field(description="the spec as submitted")
    progress: ProgressView
    created_at: float
    started_at: float | None
    finished_at: float | None
    error: str | None
    cancel_requested: bool
    cpu_seconds: float | None = Field(default=None, description="CPU-seconds its shard "
                                      "tasks have used so far (its CPU budget counts them)")
    finished: bool = Field(default=False, description="whether its status is a final one "
                           "(done, failed, cancelled): it changes no more")

    @classmethod
    def of(cls, record: dict) -> "ExperimentView":
        return cls(id=record["id"], name=record["name"], game=record["game"],
                   status=record["status"], spec=record["spec"],
                   progress=ProgressView.of(record),
                   created_at=record["created_at"], started_at=record["started_at"],
                   finished_at=record["finished_at"], error=record["error"],
                   cancel_requested=record["cancel_requested"],
                   cpu_seconds=record["cpu_seconds"],
                   finished=record["status"] in FINISHED)


class Submitted(BaseModel):
    id: str
    status: Status
    url: str = Field(description="where to follow the experiment")
    estimated_cpu_seconds: float | None = Field(
        default=None, description="an experiment: the CPU-seconds its games are expected to "
        "cost (core_cy.catalogue.game_cost per cell)")
    cost: str | None = Field(default=None, description="an experiment: that estimate in words, "
                             "where it comes from (measured or an estimate), and whether its "
                             "CPU budget would stop it first")
    warnings: list[str] = Field(default_factory=list, description="what the service "
                                "accepted but a designer should know: a stop_when.spread "
                                "no plan handed out for this experiment "
                                "(ExperimentSpec.spread_warning)")


Row = dict[str, Any]  # a row of a results table (pipelines' columns)


class Figure(BaseModel):
    """One figure of an experiment, drawn server-side (dashboards/experiment_figures.py): the
    page, the report and `meeplelab report --svg` show the same SVG."""

    key: str = Field(description="its name, also GET .../figures/{key}.svg")
    players: int | None = Field(description="the player count it is about")
    section: Literal["players", "ladder"] = Field(description="where the page shows it: a "
                                                  "player count's section or the ladder's")
    title: str
    svg: str = Field(description="a standalone SVG document (no script, nothing fetched)")
