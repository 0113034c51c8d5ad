"""The policy's settings: dagguard.toml found from the DAG file up to the DAGs folder, the
AIRFLOW__DAGGUARD__ variables on top, validated with the linter's own checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagguard.config import ConfigError
from dagguard.policy.settings import find_config, load_settings


def _dags(tmp_path: Path) -> Path:
    (tmp_path / "dags" / "team" / "sub").mkdir(parents=True)
    return tmp_path / "dags"


def test_no_file_and_no_variable_gives_the_defaults(tmp_path):
    dags = _dags(tmp_path)
    settings = load_settings(dags / "x.py", dags, {})
    assert settings.mode == "enforce" and settings.severity == () and settings.config_path is None
    assert settings.lint.max_catchup_runs == 500 and settings.lint.select == ("DG",)


def test_the_nearest_dagguard_toml_up_to_the_dags_folder_is_used(tmp_path):
    dags = _dags(tmp_path)
    (dags / "dagguard.toml").write_text('mode = "warn"\n')
    (dags / "team" / "dagguard.toml").write_text('ignore = ["DG102"]\n')
    (tmp_path / "dagguard.toml").write_text('mode = "warn"\n')   # above the DAGs folder: never read
    assert find_config(dags / "team" / "sub" / "x.py", dags) == (dags / "team" / "dagguard.toml").resolve()
    assert find_config(dags / "x.py", dags) == (dags / "dagguard.toml").resolve()
    (dags / "dagguard.toml").unlink()
    assert find_config(dags / "x.py", dags) is None
    settings = load_settings(dags / "team" / "sub" / "x.py", dags, {})
    assert settings.lint.ignore == ("DG102",) and settings.mode == "enforce"


def test_outside_the_dags_folder_only_the_files_own_folder_counts(tmp_path):
    dags = _dags(tmp_path)
    elsewhere = tmp_path / "bundle" / "deep"
    elsewhere.mkdir(parents=True)
    (tmp_path / "bundle" / "dagguard.toml").write_text('mode = "warn"\n')
    assert find_config(elsewhere / "x.py", dags) is None
    (elsewhere / "dagguard.toml").write_text('mode = "warn"\n')
    assert find_config(elsewhere / "x.py", dags) == (elsewhere / "dagguard.toml").resolve()


def test_a_pyproject_style_table_in_dagguard_toml_is_read_too(tmp_path):
    dags = _dags(tmp_path)
    (dags / "dagguard.toml").write_text('[tool.dagguard]\nmax-catchup-runs = 50\nmode = "warn"\n')
    settings = load_settings(dags / "x.py", dags, {})
    assert settings.lint.max_catchup_runs == 50 and settings.mode == "warn"


@pytest.mark.parametrize(("variable", "text", "attribute", "expected"), [
    ("AIRFLOW__DAGGUARD__IGNORE", "DG102, dg103", "ignore", ("DG102", "DG103")),
    ("AIRFLOW__DAGGUARD__SELECT", '["DG1"]', "select", ("DG1",)),
    ("AIRFLOW__DAGGUARD__MAX_CATCHUP_RUNS", "50", "max_catchup_runs", 50),
    ("AIRFLOW__DAGGUARD__EXTEND_IGNORE", "DG206", "extend_ignore", ("DG206",)),
], ids=["comma-list", "toml-list", "integer", "underscores-are-dashes"])
def test_environment_values(tmp_path, variable, text, attribute, expected):
    dags = _dags(tmp_path)
    assert getattr(load_settings(dags / "x.py", dags, {variable: text}).lint, attribute) == expected


def test_the_environment_wins_over_the_file(tmp_path):
    dags = _dags(tmp_path)
    (dags / "dagguard.toml").write_text('mode = "warn"\nmax-catchup-runs = 50\n')
    settings = load_settings(dags / "x.py", dags, {"AIRFLOW__DAGGUARD__MODE": "enforce"})
    assert settings.mode == "enforce" and settings.lint.max_catchup_runs == 50


def test_enabled_and_other_airflow_sections_are_not_settings(tmp_path):
    dags = _dags(tmp_path)
    settings = load_settings(dags / "x.py", dags, {"AIRFLOW__DAGGUARD__ENABLED": "True",
                                                   "AIRFLOW__CORE__DAGS_FOLDER": str(dags)})
    assert settings.mode == "enforce"


def test_severity_overrides_the_most_specific_selector_wins(tmp_path):
    dags = _dags(tmp_path)
    (dags / "dagguard.toml").write_text('severity = { DG1 = "error", DG103 = "warning" }\n')
    settings = load_settings(dags / "x.py", dags, {})
    assert settings.severity_of("DG102", "warning") == "error"
    assert settings.severity_of("DG103", "warning") == "warning"
    assert settings.severity_of("DG206", "error") == "error"


@pytest.mark.parametrize(("text", "message"), [
    ('selct = ["DG1"]', "unknown key 'selct' in [tool.dagguard] (known keys: "),
    ('mode = "loud"', '[tool.dagguard] mode must be "enforce" or "warn", got \'loud\''),
    ('severity = { DG102 = "fatal" }', '[tool.dagguard] severity.DG102 must be "error" or "warning", got \'fatal\''),
    ('severity = { DG9 = "error" }', "[tool.dagguard] severity.DG9: unknown rule selector 'DG9'"),
    ('ignore = ["DG9"]', "[tool.dagguard] ignore: unknown rule selector 'DG9'"),
    ("max-catchup-runs = 0", "[tool.dagguard] max-catchup-runs must be a positive integer, got 0"),
    ("mode = ", "not valid TOML"),
], ids=["unknown-key", "mode", "severity-level", "severity-code", "selector", "value", "toml"])
def test_a_bad_setting_in_the_file_names_the_key_and_the_file(tmp_path, text, message):
    dags = _dags(tmp_path)
    (dags / "dagguard.toml").write_text(text + "\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(dags / "x.py", dags, {})
    assert str(raised.value).startswith(f"{(dags / 'dagguard.toml').resolve()}: ")
    assert message in str(raised.value)


def test_the_known_keys_listed_include_the_policys_own(tmp_path):
    dags = _dags(tmp_path)
    with pytest.raises(ConfigError, match=r"known keys: .*max-catchup-runs, mode, .*severity"):
        load_settings(dags / "x.py", dags, {"AIRFLOW__DAGGUARD__SELCT": "DG1"})


def test_a_bad_environment_value_names_the_variable(tmp_path):
    dags = _dags(tmp_path)
    (dags / "dagguard.toml").write_text("max-catchup-runs = 50\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(dags / "x.py", dags, {"AIRFLOW__DAGGUARD__SELECT": "DG9"})
    assert str(raised.value) == ("AIRFLOW__DAGGUARD__SELECT: [tool.dagguard] select: unknown rule selector 'DG9' "
                                 "(codes run DG000-DG303; `dagguard rules` lists them)")


def test_an_edited_file_is_read_again(tmp_path):
    dags = _dags(tmp_path)
    config = dags / "dagguard.toml"
    config.write_text('mode = "warn"\n')
    assert load_settings(dags / "x.py", dags, {}).mode == "warn"
    config.write_text('mode = "enforce"\nignore = ["DG1"]\n')
    assert load_settings(dags / "x.py", dags, {}).mode == "enforce"


def test_the_search_stops_at_the_dag_bundles_root():
    from types import SimpleNamespace

    from dagguard.policy.apply import _dags_root

    dag = SimpleNamespace(fileloc="/srv/bundles/team_repo/dags/orders/a.py", relative_fileloc="dags/orders/a.py")
    assert _dags_root(dag) == Path("/srv/bundles/team_repo")
