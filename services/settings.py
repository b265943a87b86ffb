"""The service's settings: one object, read from the environment (MEEPLELAB_<NAME>) once.

    MEEPLELAB_DB                 registry file (default ./meeplelab.db)
    MEEPLELAB_RESULTS            results folder or pyarrow.fs URI (default ./results)
    RAY_ADDRESS                  a Ray cluster to use (default: start a local Ray)
    MEEPLELAB_HOST / _PORT       where `meeplelab serve` listens (default 127.0.0.1:8000)
    MEEPLELAB_MAX_GAMES          most games one experiment may ask for (default 10^9)
    MEEPLELAB_MAX_CELLS          most cells (arms x player counts) of one experiment
    MEEPLELAB_MAX_BODY_BYTES     largest request body (default 1 MiB; larger gets 413)
    MEEPLELAB_TOKEN              a token (at least 16 characters, no '/' or space), or a
                                 file with one token per line (a value starting with
                                 file: / ./ ../ or ~; it must exist): anything else
                                 refuses to start.  Writes then need
                                 `Authorization: Bearer <token>`
    MEEPLELAB_ADMIN_TOKEN        operators' tokens (same forms): they may also cancel and
                                 delete experiments of other tokens (others get 403)
    MEEPLELAB_PROTECT_READS      reads need the token too (default false)
    MEEPLELAB_MAX_RUNNING        experiments running at once, the global cap (the rest
                                 queue in order; default: the machine's cores, at least 2)
    MEEPLELAB_MAX_RUNNING_PLANS  plans whose pilots play at once (each in a process; same)
    MEEPLELAB_MAX_RUNNING_BALANCE     balance searches playing at once (each in a process;
                                 same)
    MEEPLELAB_PLACES_PER_TOKEN   jobs of each kind one token runs at once (its others wait
                                 while other tokens' jobs take the free places; an admin
                                 token's have places beyond the cap)
    MEEPLELAB_MAX_RUNNING_PER_TOKEN   running or queued jobs of each kind (experiments,
                                 plans, balance searches) per token (429 beyond)
    MEEPLELAB_MAX_QUEUED         running or queued jobs of every kind and token (429 beyond)
    MEEPLELAB_JOB_CPU_SECONDS    CPU budget of one plan or balance search (its shard tasks'
                                 CPU-seconds: when spent the job fails saying so)
    MEEPLELAB_EXPERIMENT_CPU_SECONDS  CPU budget of one experiment (its shard tasks'
                                 CPU-seconds): it stops when spent, its shards written
                                 kept; a request's cpu_seconds may ask for less
    MEEPLELAB_CONFIRM_CPU_SECONDS     an experiment estimated to cost more CPU-seconds
                                 needs a confirmation (confirm_cost=true; run --yes)
    MEEPLELAB_PLAN_SECONDS       wall-time budget of a plan's pilot
    MEEPLELAB_MAX_BALANCE_GAMES  most games one balance search may ask for (search and
                                 confirmation, every player count)

The version is the installed package's (importlib.metadata), never written here.
"""
from __future__ import annotations

import hashlib
import ipaddress
import os
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core_cy.engine.game import PACKAGE_VERSION

VERSION = PACKAGE_VERSION
MIB = 1 << 20
PATH_PREFIXES = ("/", "./", "../", "~", "file:")  # a token setting written so is a file
MIN_TOKEN_CHARS = 16  # a token shorter than this is refused (openssl rand -hex 32 gives 64)


class Settings(BaseSettings):
    """Every setting of the service; `Settings()` reads the environment, keywords override."""

    # hide_input_in_errors: a refused setting's error names the setting and the reason, never
    # the value (pydantic would print a token as the input of a ValidationError)
    model_config = SettingsConfigDict(env_prefix="MEEPLELAB_", extra="ignore", frozen=True,
                                      hide_input_in_errors=True)

    db: str = Field("meeplelab.db", description="the registry's SQLite file")
    results: str = Field("results", description="results folder or pyarrow.fs URI")
    ray_address: str | None = Field(
        None, validation_alias=AliasChoices("RAY_ADDRESS", "MEEPLELAB_RAY_ADDRESS",
                                            "ray_address"),
        description="Ray cluster address (ray://host:10001); unset starts a local Ray")
    host: str = Field("127.0.0.1", description="interface `meeplelab serve` listens on")
    port: int = Field(8000, ge=1, le=65535)
    max_games: int = Field(10**9, ge=1, description="most games of one experiment")
    max_cells: int = Field(1000, ge=1, description="most arms x player counts of one experiment")
    max_body_bytes: int = Field(MIB, ge=1024, description="largest request body (413 beyond)")
    token: SecretStr | None = Field(None, description="a token, or a file of tokens (one a line)")
    admin_token: SecretStr | None = Field(
        None, description="an operator's token (or a file of them): it may also cancel and "
                          "delete experiments submitted with other tokens")
    protect_reads: bool = Field(False, description="reads need the token as well as writes")
    max_running: int | None = Field(None, ge=1, description="experiments running at the same "
                                    "time, every token's (unset: the machine's cores, at "
                                    "least 2)")
    max_running_plans: int | None = Field(None, ge=1, description="plans whose pilots play at "
                                          "once (unset: the machine's cores, at least 2)")
    max_running_balance: int | None = Field(None, ge=1, description="balance searches playing "
                                            "at once (unset: the machine's cores, at least 2)")
    places_per_token: int = Field(1, ge=1, description="jobs of each kind one token runs at "
                                  "once: its others wait while other tokens' jobs take the "
                                  "free places; an admin token's have places of their own "
                                  "beyond the cap; without tokens only the cap counts")
    max_running_per_token: int = Field(4, ge=1, description="unfinished jobs of each kind "
                                       "(experiments, plans, balance searches) per token")
    max_queued: int = Field(64, ge=1, description="unfinished jobs of every kind and token")
    job_cpu_seconds: int = Field(3600, ge=1, description="CPU budget of one plan or balance "
                                 "search, its shard tasks' CPU-seconds: the job fails when it "
                                 "is spent (a balance request's cpu_seconds may ask for less)")
    experiment_cpu_seconds: int = Field(
        86_400, ge=1, description="CPU budget of one experiment, the CPU-seconds its shard "
        "tasks use (across restarts): once spent it issues no more shards, cancels those in "
        "flight and ends failed saying so, its shards written kept and counted; a spec's "
        "cpu_seconds may ask for less")
    confirm_cpu_seconds: int = Field(
        3600, ge=1, description="an experiment whose estimated CPU cost (its games at the "
        "catalogue's cost a game of its agents: measured for a preset, else estimated) is above "
        "this many CPU-seconds is refused (422 stating the estimate) unless the request confirms "
        "it (POST /api/experiments?confirm_cost=true; `meeplelab run --yes`, or yes at its "
        "question)")
    plan_seconds: float = Field(20.0, gt=0, le=3600, description="wall-time budget of a "
                                "plan's pilot")
    max_balance_games: int = Field(2_000_000, ge=10, description="most games of one balance "
                                   "search (search and confirmation, every player count)")
    worker_nice: int = Field(
        10, ge=0, le=19,
        description="niceness of the processes that play shards: playing is batch work, so on "
                    "a machine that also serves the API the requests come first (0: off)")

    @classmethod
    def without_tokens(cls) -> "Settings":
        """The environment's settings for a command that serves nothing (run, replay,
        report, plan, balance): the token settings are the server's, so this command neither
        reads them nor refuses to work because one is malformed (`meeplelab serve` does)."""
        return cls(token=None, admin_token=None)

    @model_validator(mode="after")
    def _token_readable(self) -> "Settings":
        self.tokens  # a token setting naming a missing or empty file refuses to start
        self.admin_tokens
        return self

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        """The accepted tokens (admin tokens among them): the value itself, or the lines of
        the file it names.  A value written as a path (starting with '/', './', '../' or '~')
        must name a readable file with at least one token: ValueError otherwise, never the
        path taken as a token (a Secret mounted under another key would make the path
        itself the password)."""
        own = _read_tokens(self.token, "MEEPLELAB_TOKEN")
        return own + tuple(t for t in self.admin_tokens if t not in own)

    @cached_property
    def admin_tokens(self) -> tuple[str, ...]:
        """Tokens that may cancel and delete every experiment (operators)."""
        return _read_tokens(self.admin_token, "MEEPLELAB_ADMIN_TOKEN")

    @property
    def auth_enabled(self) -> bool:
        return bool(self.tokens)

    def spec_limits(self) -> dict:
        """The size limits as ExperimentSpec's validation context."""
        return {"max_games": self.max_games, "max_cells": self.max_cells}

    def lanes(self) -> dict[str, int]:
        """Places of each job kind: how many run at once (the global cap; unset: the
        machine's cores, at least 2)."""
        machine = max(2, os.cpu_count() or 1)
        return {"experiment": self.max_running or machine,
                "plan": self.max_running_plans or machine,
                "balance": self.max_running_balance or machine}

    def admin_owners(self) -> frozenset[str]:
        """The owner names (owner_of) of the admin tokens."""
        return frozenset(owner_of(t) for t in self.admin_tokens)


def _read_tokens(setting: SecretStr | None, name: str) -> tuple[str, ...]:
    if setting is None:
        return ()
    value = setting.get_secret_value().strip()
    if not value:
        return ()
    if not value.startswith(PATH_PREFIXES):
        return (_checked_token(value, name),)
    path = _token_path(value, name)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{name} names the file {value}, which cannot be read "
                         f"({type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}):"
                         " refusing to start without the tokens it should hold") from None
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)]
    tokens = tuple(_checked_token(line, f"{name} (line {n} of {value})")
                   for n, line in lines if line and not line.startswith("#"))
    if not tokens:
        raise ValueError(f"{name} names the file {value}, which holds no token: refusing "
                         "to start")
    return tokens


def _token_path(value: str, name: str) -> Path:
    """The file a token setting names: a path, or a file: URI (file:relative/path,
    file:/abs/path, file:///abs/path; file://localhost/abs/path)."""
    if not value.startswith("file:"):
        return Path(value).expanduser()
    rest = value[len("file:"):]
    if rest.startswith("//"):
        host, _, path = rest[2:].partition("/")
        if host not in ("", "localhost"):
            raise ValueError(f"{name} names the file {value} on another host ({host!r}): "
                             "refusing to start (a file: setting names a local file)")
        rest = "/" + path
    if not rest:
        raise ValueError(f"{name} is 'file:' without a path: refusing to start")
    return Path(unquote(rest)).expanduser()


def _checked_token(token: str, name: str) -> str:
    """A token as written in a setting or a token file, or ValueError (the token itself is
    never part of the message): at least MIN_TOKEN_CHARS characters, no whitespace, and no
    '/' (a relative path written without ./ or file: would otherwise be the password)."""
    if "/" in token:
        raise ValueError(f"{name} holds a value with '/' that does not start with file:, /, "
                         "./, ../ or ~: refusing to start.  A file of tokens is written "
                         "file:PATH or ./PATH; a token has no '/' (openssl rand -hex 32)")
    if any(c.isspace() for c in token):
        raise ValueError(f"{name} holds a token with a space in it: refusing to start "
                         "(one token a line; openssl rand -hex 32)")
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"{name} holds a token of {len(token)} character"
                         f"{'' if len(token) == 1 else 's'}: refusing to "
                         f"start (a token has at least {MIN_TOKEN_CHARS}; openssl rand -hex "
                         "32 gives 64)")
    return token


def owner_of(token: str | None) -> str:
    """A stable, non-secret name for a token (what the registry stores for quotas)."""
    if not token:
        return ""
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:12]


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
