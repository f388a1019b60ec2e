import pytest

from cerveau_tui.config import ConfigError, load_settings, save_user_setting


def test_defaults_load_without_files(tmp_path):
    s = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
    assert s.max_tokens is None and s.sandbox == "workspace-write" and s.sources == []


def test_layers_override_in_order(tmp_path):
    user = tmp_path / "user.toml"
    user.write_text("max_tokens = 100\ntheme = 'x'\n")
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / ".cerveau/config.toml").write_text(
        "max_tokens = 200\n[limits]\nmax_iterations = 9\n"
    )
    s = load_settings(
        tmp_path, flags={"max_tokens": 400}, environ={"CERVEAU_MAX_TOKENS": "300"}, user_config=user
    )
    assert s.max_tokens == 400 and s.theme == "x" and s.limits.max_iterations == 9
    s2 = load_settings(tmp_path, environ={"CERVEAU_MAX_TOKENS": "300"}, user_config=user)
    assert s2.max_tokens == 300


def test_nested_environment_variables(tmp_path):
    s = load_settings(
        tmp_path, environ={"CERVEAU_LIMITS__PROGRESS_STALL_LIMIT": "5"}, user_config=tmp_path / "n"
    )
    assert s.limits.progress_stall_limit == 5


def test_a_bad_value_names_its_source_and_field(tmp_path):
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / ".cerveau/config.toml").write_text("sandbox = 'wide-open'\n")
    with pytest.raises(ConfigError, match=r"config.toml.*\n  sandbox"):
        load_settings(tmp_path, environ={}, user_config=tmp_path / "n")


def test_an_unknown_key_in_a_config_file_is_an_error_not_ignored(tmp_path):
    user = tmp_path / "user.toml"
    user.write_text("max_tokenz = 5\n")
    with pytest.raises(ConfigError, match="max_tokenz"):
        load_settings(tmp_path, environ={}, user_config=user)


def test_a_stray_cerveau_variable_is_a_warning_not_a_refusal_to_start(tmp_path):
    env = {
        "CERVEAU_MAX_TOKENZ": "5",
        "CERVEAU_LIMITS__NO_SUCH": "1",
        "CERVEAU_SANDBOX": "read-only",
    }
    s = load_settings(tmp_path, environ=env, user_config=tmp_path / "n")
    assert s.sandbox == "read-only"
    assert s.warnings == [
        "ignored CERVEAU_LIMITS__NO_SUCH: no such setting",
        "ignored CERVEAU_MAX_TOKENZ: no such setting",
    ]


def test_a_bad_value_of_a_real_setting_in_the_environment_is_still_an_error(tmp_path):
    with pytest.raises(ConfigError, match="limits.max_iterations"):
        load_settings(
            tmp_path, environ={"CERVEAU_LIMITS__MAX_ITERATIONS": "many"}, user_config=tmp_path / "n"
        )


def test_broken_toml_is_reported_with_its_path(tmp_path):
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / ".cerveau/config.toml").write_text("max_tokens = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(tmp_path, environ={}, user_config=tmp_path / "n")


def test_done_criteria_from_the_workspace_config(tmp_path):
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / ".cerveau/config.toml").write_text(
        '[done]\nprotected = ["tests/**"]\n[[done.criteria]]\nname = "tests"\ncommand = "python3 -m pytest -q"\n'
    )
    # Criteria are commands: applied once the person trusts the file (test_config_only_tightens).
    s = load_settings(tmp_path, environ={}, user_config=tmp_path / "n", trust_workspace=True)
    assert s.done.protected == ["tests/**"] and s.done.criteria[0].name == "tests"


def test_save_user_setting_keeps_other_keys(tmp_path):
    user = tmp_path / "c.toml"
    user.write_text("max_tokens = 64\n")
    save_user_setting("theme", "cerveau-light", user)
    s = load_settings(tmp_path, environ={}, user_config=user)
    assert s.theme == "cerveau-light" and s.max_tokens == 64
