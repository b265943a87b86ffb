"""One error model for every error the API returns, and the documented statuses per route.

Every error body is `{"detail": ...}`: a sentence, or for 422 a list of items naming the
field of each problem (all of them at once).
"""
from __future__ import annotations

from typing import Any

from fastapi import HTTPException
from pydantic import BaseModel, Field


class ErrorItem(BaseModel):
    """One problem with the input."""

    field: str = Field(description="dotted name of the field, e.g. arms.pro.mode")
    loc: list[str | int] = Field(description="the field's path, starting with its source "
                                 "(body, query, path)")
    msg: str = Field(description="what is wrong and what is allowed")
    type: str = Field(description="the kind of error (pydantic's error type, or limit)")


class ErrorBody(BaseModel):
    """The body of every error answer."""

    detail: str | list[ErrorItem]


_RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before trying again",
                                "schema": {"type": "integer"}}}
_WWW_AUTHENTICATE = {"WWW-Authenticate": {"description": "the scheme to use: Bearer",
                                          "schema": {"type": "string"}}}

DESCRIPTIONS: dict[int, tuple[str, dict]] = {
    400: ("the body could not be read as JSON", {}),
    401: ("a missing or unknown bearer token (when the service has tokens)", _WWW_AUTHENTICATE),
    403: ("the token may not do this: the experiment was submitted with another token "
          "(an admin token may act on every experiment), or a cross-site request", {}),
    404: ("no experiment with this id", {}),
    409: ("the experiment is not in a state that allows this (no results yet, already "
          "finished, or still running)", {}),
    413: ("the request body is larger than the service accepts", {}),
    415: ("the body is not JSON: send Content-Type: application/json", {}),
    422: ("invalid input: every problem, each naming its field (limits included)", {}),
    429: ("too many unfinished experiments for this token; retry after Retry-After seconds",
          _RETRY_AFTER),
    503: ("the registry cannot take writes now (e.g. its disk is full); retry after "
          "Retry-After seconds", _RETRY_AFTER),
}


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route: the error model under each status it may return."""
    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        text, headers = DESCRIPTIONS[code]
        out[code] = {"model": ErrorBody, "description": text}
        if headers:
            out[code]["headers"] = headers
    return out


def field_name(loc) -> str:
    """A location as a dotted field name, without the leading 'body' of a body field."""
    parts = [str(p) for p in loc]
    if parts and parts[0] == "body":
        parts = parts[1:]
    return ".".join(parts) or "body"


def message(error: dict) -> str:
    """An error's message without pydantic's "Value error, " prefix (a ValueError raised by
    a validator already says what is wrong)."""
    msg = error.get("msg", "")
    prefix = "Value error, "
    return msg[len(prefix):] if msg.startswith(prefix) else msg


def error_items(errors, source: str | None = None) -> list[dict]:
    """Pydantic errors as JSON-safe ErrorItems (`source` prefixes locations: body, query)."""
    items = []
    for e in errors:
        loc = list(e.get("loc", ()))
        if source and (not loc or loc[0] != source):
            loc = [source] + loc
        items.append({"field": field_name(loc), "loc": loc, "msg": message(e),
                      "type": e.get("type", "")})
    return items


def unprocessable(field: str, message: str, source: str = "query",
                  kind: str = "value_error") -> HTTPException:
    # kind "cross_field": the value is checked against the experiment's own data
    """A 422 about one field."""
    return HTTPException(422, [{"field": field, "loc": [source, *field.split(".")],
                                "msg": message, "type": kind}])
