"""Credentials in configured strings never reach the model, nor a file it can read.

The failure that motivated it (issue 32, part 7): `--server http://alice:s3cret@host:8080` and a
`services` URL with a password went into the system prompt (the live-stack paragraph names every
configured service with its URL), and a URL's query can carry a token as well as its userinfo
(`?token=abc`, `?api_key=`, a presigned `X-Amz-Signature`). The model needs where a service
runs, never how to log in to it; and the session log lies in the workspace, where any command
can `cat` it, so what the log holds the model can read.

One mechanism, two forms:
- `redact_url(url)`: for the model and every file it can read. The userinfo is DROPPED (a user
  name alone can be a token: `https://TOKEN@github.com`), and the value of every query or
  fragment parameter named like a credential is `***`.
- `redact_url(url, person=True)`: for the person's own screens (the TUI header, `cerveau doctor`):
  they see that a credential is configured and whose, never its value (`alice:***@host`).
- `mask_secrets(text)`: free text that may quote a URL, an `Authorization:` header or a
  `NAME_TOKEN=value` assignment (an error message, a progress line).
- `secret_env_names(names)`: which environment variable names look like credentials (doctor
  warns when the person's `env_allow` passes one into the sandbox).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

MASK = "***"

#: A URL parameter whose value is a credential. Over-matching (`monkey=1` masked) costs nothing.
_SECRET_PARAM = re.compile(
    r"token|secret|passw|pwd|key|auth|credential|signature|(^|[_-])sig($|[_-])|session|cookie",
    re.IGNORECASE,
)

#: An environment variable (or `NAME=value` assignment) whose value is a credential: GITHUB_TOKEN,
#: AWS_SECRET_ACCESS_KEY, OPENAI_API_KEY, PGPASSWORD, NPM_AUTH. Stricter than the parameter
#: pattern, since doctor warns on it: PWD (the current directory) and KEYBOARD_* are not ones.
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|(^|_)(KEY|APIKEY|AUTH|CREDENTIALS?|COOKIE|PASS)(_|$)", re.IGNORECASE
)

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*)((?:basic|bearer|token|digest)\s+)?[^\s,;\"']+"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_ASSIGNMENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_.-]*)([\"']?\s*[=:]\s*)([\"']?)([^\s\"',;&]+)")


def _mask_params(text: str) -> str:
    """`a=1&token=abc` -> `a=1&token=***`, each pair as written (nothing re-encoded)."""
    if not text:
        return text
    out = []
    for pair in text.split("&"):
        name, eq, _value = pair.partition("=")
        out.append(f"{name}={MASK}" if eq and _SECRET_PARAM.search(name) else pair)
    return "&".join(out)


def redact_url(url: str, *, person: bool = False) -> str:
    """`url` without its credentials (see the module docstring for the two forms). A string that
    does not parse as a URL loses anything up to an `@` after `//` all the same."""
    try:
        parts = urlsplit(url)
    except ValueError:  # a bracketed host that is not an address, say: still no userinfo
        return re.sub(r"//[^/?#]*@", "//" if not person else f"//{MASK}@", url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if not person:
            netloc = host
        elif ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}"
        else:  # a lone user name may be the token itself
            netloc = f"{MASK}@{host}"
    query, fragment = _mask_params(parts.query), parts.fragment
    if "=" in fragment:  # OAuth's implicit flow puts `access_token=` here
        fragment = _mask_params(fragment)
    if (netloc, query, fragment) == (parts.netloc, parts.query, parts.fragment):
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query, fragment=fragment))


def _assignment(m: re.Match[str]) -> str:
    name, sep, quote, _value = m.groups()
    if not _SECRET_NAME.search(name):
        return m.group(0)
    return f"{name}{sep}{quote}{MASK}"


def mask_secrets(text: str) -> str:
    """`text` with every credential it may quote masked: URLs (model form), `Authorization:`
    headers, bearer tokens, and `NAME=value` / `"NAME": "value"` where NAME is a credential's."""
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    text = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{MASK}", text)
    return _ASSIGNMENT.sub(_assignment, text)


def secret_env_names(names: Iterable[str]) -> list[str]:
    """The names among `names` that look like a credential's variable."""
    return [n for n in names if _SECRET_NAME.search(n)]
