"""Hooks for the schemathesis run of tests/schemathesis.rs (loaded through
SCHEMATHESIS_HOOKS=schemathesis_hooks with this directory on PYTHONPATH).

- Two of every three generated game names become the games the test made
  (g1 public, g2 token-only), so requests reach the handlers and the rules,
  not only the 404 of a game that does not exist.
- `application/jsonl` (an import) is serialised as JSON Lines.
- Every error answer must be the one JSON error body the README promises:
  {"error": {"code", "message"}} with application/json.
"""

import json
import zlib

import schemathesis
from schemathesis.core.parameters import ParameterLocation

GAMES = ("g1", "g2")


@schemathesis.hook
def map_case(ctx, case):
    # A name drawn to be invalid (negative data) stays invalid.
    params = case.path_parameters
    if params and "game" in params and not case.meta.is_negative_at(ParameterLocation.PATH):
        drawn = str(params["game"]).encode("utf-8", "surrogatepass")
        pick = zlib.crc32(drawn) % 3
        if pick < len(GAMES):
            params["game"] = GAMES[pick]
    return case


@schemathesis.serializer("application/jsonl")
def jsonl(ctx, value):
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, list):
        return "".join(json.dumps(v) + "\n" for v in value).encode("utf-8", "surrogatepass")
    return (json.dumps(value) + "\n").encode("utf-8", "surrogatepass")


@schemathesis.check
def errors_are_json(ctx, response, case):
    if response.status_code < 400:
        return None
    kind = response.headers.get("content-type", [""])
    kind = kind[0] if isinstance(kind, list) else kind
    if not kind.startswith("application/json"):
        raise AssertionError(
            f"{response.status_code} answered with Content-Type {kind!r}, not the JSON error body: {response.text[:200]!r}"
        )
    try:
        body = json.loads(response.text)
    except ValueError as e:
        raise AssertionError(f"{response.status_code} answered with a body that is not JSON ({e}): {response.text[:200]!r}")
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str) or not isinstance(error.get("message"), str):
        raise AssertionError(f"{response.status_code} answered without {{error: {{code, message}}}}: {response.text[:200]!r}")
    return None
