"""What accounts cost a request, in process over the real API (a scripted engine, SQLite):
a sign-in (argon2id verify of the password, a new session row), a wrong password (the same
work: the answer must not tell which names exist), an unknown name (a dummy hash verified),
and ``GET /users/me`` identified by a page session, by the anonymous cookie and by an API key
(the per-request lookup each needs).

Example::

    .venv/bin/python benchmarks/bench_accounts.py --n 30
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "api"))

from _common import machine_line, pct, print_table, timed
from fakes import FakeEngine
from fastapi.testclient import TestClient

from ragchat.api import create_app
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import ApiSettings, AuthSettings, Settings

PASSWORD = "correct horse battery staple"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=30, help="requests per row")
    args = parser.parse_args()
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            api=ApiSettings(rate_limit_per_minute=0, new_users_per_ip_per_minute=0),
            auth=AuthSettings(sign_in_attempts_per_minute=1_000_000),
        )
        app = create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder())
        with TestClient(app) as page:
            assert page.post(
                "/auth/sign-up", json={"username": "ada", "password": PASSWORD}
            ).is_success
            key = page.post("/users/me/api-keys", json={"name": "bench"}).json()["secret"]
            anonymous = TestClient(app)
            anonymous.get("/users/me")
            keyed = TestClient(app, headers={"Authorization": f"Bearer {key}"})

            def sign_in(name: str, password: str, ok: bool) -> float:
                browser = TestClient(app)
                seconds, r = timed(
                    browser.post,
                    "/auth/sign-in",
                    json={"username": name, "password": password},
                )
                assert r.is_success == ok, r.text
                return seconds

            rows = []
            for label, name, password, ok in (
                ("sign-in", "ada", PASSWORD, True),
                ("wrong password", "ada", "not the password", False),
                ("unknown name", "nobody", "not the password", False),
            ):
                times = [sign_in(name, password, ok) for _ in range(args.n)]
                rows.append((label, pct(times, 50) * 1000, pct(times, 95) * 1000))
            for label, client in (
                ("GET /users/me, page session", page),
                ("GET /users/me, anonymous cookie", anonymous),
                ("GET /users/me, API key", keyed),
            ):
                times = [timed(client.get, "/users/me")[0] for _ in range(args.n * 10)]
                rows.append((label, pct(times, 50) * 1000, pct(times, 95) * 1000))
    print_table(["request", "p50 ms", "p95 ms"], rows, digits=1)


if __name__ == "__main__":
    main()
