"""Secrets at rest: Fernet/MultiFernet over keys from the environment or an owner-only key file.

Every key in SECRET_KEYS can decrypt; the first one encrypts (rotation: put the new key first,
run `gpu-advisor secrets rotate`, then drop the old one). Without SECRET_KEYS a key file is used,
generated on first use with mode 0600 (the embedded default needs nothing set up).
"""

from __future__ import annotations

import logging
import os
import stat
from base64 import urlsafe_b64decode
from binascii import Error as DecodeError
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

# cryptography is imported where it is used: settings are validated without it (start time).

log = logging.getLogger(__name__)

PREFIX = "fernet:"  # marks an encrypted value; a value without it was stored before encryption (migration 0006)


class SecretKeyError(RuntimeError):
    """The keys cannot be used: unreadable or unsafe key file, or they cannot decrypt what is stored."""


class SecretBox:
    """Encrypt with the newest key, decrypt with any of them."""

    def __init__(self, keys: Sequence[str], *, source: str) -> None:
        from cryptography.fernet import Fernet, MultiFernet

        if not keys:
            raise SecretKeyError("no secret key given")
        self._fernet = MultiFernet([Fernet(k.encode("ascii")) for k in keys])
        self.source = source  # where the keys came from, for error messages (never the keys)

    def encrypt(self, text: str) -> str:
        return PREFIX + self._fernet.encrypt(text.encode("utf-8")).decode("ascii")

    def decrypt(self, stored: str) -> str:
        """The clear text; a value from before encryption (no prefix) is returned as it is."""
        from cryptography.fernet import InvalidToken

        if not stored.startswith(PREFIX):
            return stored
        try:
            return self._fernet.decrypt(stored[len(PREFIX) :].encode("ascii")).decode("utf-8")
        except InvalidToken:
            raise SecretKeyError(
                f"the secret keys from {self.source} cannot decrypt a value stored in the database: the key was "
                "changed or lost. Put the key the data was written with after the new one in SECRET_KEYS "
                "(comma-separated, newest first) and run `gpu-advisor secrets rotate`."
            ) from None

    def rotate(self, stored: str) -> str:
        """`stored` re-encrypted with the newest key (plain legacy values get encrypted)."""
        if not stored.startswith(PREFIX):
            return self.encrypt(stored)
        token = self._fernet.rotate(stored[len(PREFIX) :].encode("ascii"))
        return PREFIX + token.decode("ascii")

    def encrypt_optional(self, text: str | None) -> str | None:
        return None if text is None else self.encrypt(text)

    def decrypt_optional(self, stored: str | None) -> str | None:
        return None if stored is None else self.decrypt(stored)


def new_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode("ascii")


def read_key_file(path: Path, *, create: bool) -> list[str]:
    """The keys in `path` (one per line), creating it owner-only when missing and `create`."""
    if not path.exists():
        if not create:
            raise SecretKeyError(f"secret key file {path} does not exist; set SECRET_KEYS or SECRET_KEY_FILE")
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Written whole under a private name, then linked into place: a process starting at the same
        # moment either sees no file or a complete one, and only one key ever wins.
        draft = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(new_key() + "\n")
        try:
            os.link(draft, path)
            log.info("generated a secret key file at %s (mode 0600)", path)
        except FileExistsError:  # another process made it meanwhile: use theirs
            pass
        finally:
            draft.unlink()
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise SecretKeyError(f"secret key file {path} is readable by others (mode {mode:04o}); run: chmod 600 {path}")
    keys = [line.strip() for line in path.read_text(encoding="ascii").splitlines() if line.strip()]
    if not keys:
        raise SecretKeyError(f"secret key file {path} holds no key")
    return keys


@lru_cache(maxsize=8)
def _box(keys: tuple[str, ...], key_file: str) -> SecretBox:
    if keys:
        return SecretBox(keys, source="SECRET_KEYS")
    try:
        return SecretBox(read_key_file(Path(key_file), create=True), source=f"the key file {key_file}")
    except ValueError as exc:  # a malformed key in the file
        raise SecretKeyError(f"secret key file {key_file} holds a malformed key ({type(exc).__name__})") from None


def load_box(keys: Sequence[str], key_file: str) -> SecretBox:
    """The box for these settings (SECRET_KEYS, else SECRET_KEY_FILE), built once per process."""
    return _box(tuple(keys), key_file)


def default_secret_key_file(database_url: str, env: Mapping[str, str]) -> str:
    """Beside a SQLite database file; else in the user's data directory."""
    if database_url.startswith("sqlite:///"):
        return str(Path(database_url[len("sqlite:///") :]).with_name("secret.key"))
    base = Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return str(base / "gpu-advisor" / "secret.key")


def parse_secret_keys(text: str, problems: list[str]) -> tuple[str, ...]:
    """Comma-separated Fernet keys; a malformed one is named by position, never printed."""
    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    for n, key in enumerate(keys, 1):
        try:
            ok = len(urlsafe_b64decode(key.encode("ascii"))) == 32
        except (DecodeError, ValueError):  # not base64, or not ASCII
            ok = False
        if not ok:
            problems.append(f"SECRET_KEYS: key {n} of {len(keys)} is not a Fernet key (32 url-safe base64 bytes; "
                            "make one with `gpu-advisor secrets new-key`)")
    return keys


def box_for_database(database_url: str, env: Mapping[str, str] | None = None) -> SecretBox:
    """The box the settings would give for `database_url` (SECRET_KEYS, else the default key file)."""
    env = os.environ if env is None else env
    problems: list[str] = []
    keys = parse_secret_keys(env.get("SECRET_KEYS", ""), problems)
    if problems:
        raise SecretKeyError("; ".join(problems))
    return load_box(keys, env.get("SECRET_KEY_FILE") or default_secret_key_file(database_url, env))
