"""Serving on the live stack's ports, and the prompt section naming them."""

from __future__ import annotations

import pytest

from cerveau_tui.loop.guards.ports import live_stack_section, reserved_ports, serve_port_conflict

RESERVED = {8080: "LLM server (llama.cpp)", 7700: "Cerveau API", 8000: "embedder"}


@pytest.mark.parametrize(
    "command",
    [
        "python -m http.server 8080",
        "python3 -m http.server --bind 127.0.0.1 8080",
        "cd site && python3 -m http.server 8080 &",
        "uvicorn app:app --port 8080",
        "uvicorn app:app --host 0.0.0.0 --port=8080",
        "flask run -p 8080",
        "PORT=8080 npm start",
        "FLASK_RUN_PORT=8080 flask run",
        "nc -l 8080",
        "nc -lk -p 8080",
        "php -S localhost:8080",
        "python3 manage.py runserver 0.0.0.0:8080",
        "python3 manage.py runserver 8080",
        "gunicorn -b :8080 app:app",
        "socat TCP-LISTEN:8080,fork -",
        "docker run -p 8080:80 nginx",
        "npx http-server -p 8080",
        "python3 app.py --port 8080",
        "streamlit run app.py --server.port 8080",
    ],
)
def test_serving_on_a_reserved_port_is_caught(command: str) -> None:
    assert serve_port_conflict(command, RESERVED) == 8080


def test_http_server_without_a_port_serves_on_8000() -> None:
    assert serve_port_conflict("python3 -m http.server", RESERVED) == 8000


@pytest.mark.parametrize(
    "command",
    [
        "curl http://localhost:8080/health",
        "lsof -i :8080",
        "ss -ltn | grep :8080",
        "nc localhost 8080",
        "python -m http.server 8888",
        "mkdir -p 8080",
        "echo 8080",
        "grep -rn 8080 .",
        "pytest -p no:cacheprovider",
        "python3 client.py --url http://127.0.0.1:8080",
    ],
)
def test_talking_to_or_checking_a_port_is_not_serving(command: str) -> None:
    assert serve_port_conflict(command, RESERVED) is None


def test_nothing_reserved_nothing_refused() -> None:
    assert serve_port_conflict("python -m http.server 8080", {}) is None


def test_live_stack_section_names_the_services_and_free_ports() -> None:
    text = live_stack_section(
        [("LLM server (llama.cpp)", "http://127.0.0.1:8080"), ("embedder", "http://127.0.0.1:8000")]
    )
    assert text.startswith(
        "Local stack ALREADY RUNNING on this machine (never serve anything on these ports)"
    )
    assert "LLM server (llama.cpp) on http://127.0.0.1:8080" in text
    # 8000 is taken here, so it is not offered as a free port.
    assert "such as 3000, 8888 or 5000" in text


def test_live_stack_section_is_empty_when_nothing_is_known() -> None:
    assert live_stack_section([]) == ""


def test_live_stack_section_is_short() -> None:
    text = live_stack_section([("LLM server (llama.cpp)", "http://127.0.0.1:8080")])
    assert len(text) < 300


def test_reserved_ports_from_urls() -> None:
    assert reserved_ports(
        [("a", "http://127.0.0.1:8081"), ("b", "localhost:7700"), ("c", "https://x")]
    ) == {
        8081: "a",
        7700: "b",
        443: "c",
    }
