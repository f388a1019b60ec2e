"""redact.py: what of a configured URL or a quoted credential the model may see (nothing of the
credential) and what the person's own screens show (whose, never its value)."""

from __future__ import annotations

from cerveau_tui.redact import mask_secrets, redact_url, secret_env_names


def test_the_models_form_drops_the_userinfo() -> None:
    assert redact_url("http://alice:s3cret@127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"


def test_the_models_form_drops_a_lone_user_name_which_may_be_a_token() -> None:
    assert redact_url("https://ghp_abcdef@github.com/o/r") == "https://github.com/o/r"


def test_a_query_parameter_named_like_a_credential_is_masked() -> None:
    url = "http://127.0.0.1:5432/db?sslmode=off&token=abc&api_key=k&X-Amz-Signature=s"
    assert redact_url(url) == (
        "http://127.0.0.1:5432/db?sslmode=off&token=***&api_key=***&X-Amz-Signature=***"
    )


def test_a_token_in_the_fragment_is_masked() -> None:
    assert (
        redact_url("http://h/cb#access_token=zz&state=1") == "http://h/cb#access_token=***&state=1"
    )


def test_a_url_without_credentials_is_returned_as_written() -> None:
    for url in ("http://127.0.0.1:8080", "http://h/p?a=1&b=%20", "", "not a url"):
        assert redact_url(url) == url


def test_the_persons_form_keeps_the_user_and_masks_the_password() -> None:
    url = "http://alice:s3cret@127.0.0.1:8080/?token=abc"
    assert redact_url(url, person=True) == "http://alice:***@127.0.0.1:8080/?token=***"


def test_the_persons_form_masks_a_lone_user_name() -> None:
    assert redact_url("https://ghp_abc@github.com", person=True) == "https://***@github.com"


def test_a_url_that_does_not_parse_still_loses_its_userinfo() -> None:
    assert "s3cret" not in redact_url("http://alice:s3cret@[not-an-address]/")


def test_free_text_quoting_a_url_an_auth_header_and_an_assignment_is_masked() -> None:
    text = (
        "GET http://a:pw1@h/x?key=k1 failed; Authorization: Bearer tok2tok2tok2; "
        'GITHUB_TOKEN=ghp3 {"NPM_TOKEN": "npm4"} password: pw5'
    )
    masked = mask_secrets(text)
    for secret in ("pw1", "k1", "tok2tok2tok2", "ghp3", "npm4", "pw5"):
        assert secret not in masked, secret
    assert "http://h/x?key=***" in masked and "GITHUB_TOKEN=***" in masked


def test_free_text_without_credentials_is_unchanged() -> None:
    text = "PWD=/work ran `pytest -k key_error` on http://127.0.0.1:8080"
    assert mask_secrets(text) == text


def test_credential_like_environment_names_are_found_and_others_are_not() -> None:
    names = ["PATH", "PWD", "KEYBOARD", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD",
             "OPENAI_API_KEY", "LANG"]  # fmt: skip
    assert secret_env_names(names) == [
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "PGPASSWORD",
        "OPENAI_API_KEY",
    ]


def test_the_definition_of_done_in_the_prompt_does_not_quote_a_criterions_credential() -> None:
    from cerveau_tui.done.criteria import Criterion, DoneSet
    from cerveau_tui.done.messages import gate_section

    command = 'curl -fsS -H "Authorization: Bearer tok-9f8e7d6c5b" http://ops:pw-4a3b@127.0.0.1:8/h'
    text = gate_section(DoneSet(criteria=(Criterion("health", command),)))
    assert "tok-9f8e7d6c5b" not in text and "pw-4a3b" not in text
    assert "curl -fsS" in text and "http://127.0.0.1:8/h" in text
