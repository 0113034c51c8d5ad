"""[tool.dagguard]: discovery, validation, and errors that name the key and the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagguard.config import ConfigError, Settings, discover_settings, load_file


def write_pyproject(folder: Path, body: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_nearest_pyproject_with_a_dagguard_table_is_used(tmp_path):
    write_pyproject(tmp_path, '[tool.dagguard]\nselect = ["DG1"]\nmax-catchup-runs = 50\nairflow-version = "2"\n')
    dags = tmp_path / "dags" / "team"
    dags.mkdir(parents=True)
    write_pyproject(tmp_path / "dags", '[project]\nname = "unrelated"\n')
    settings = discover_settings([dags])
    assert settings.select == ("DG1",)
    assert settings.max_catchup_runs == 50
    assert settings.airflow_version == "2"
    assert settings.config_path == (tmp_path / "pyproject.toml").resolve()


def test_no_config_gives_defaults(tmp_path):
    settings = discover_settings([tmp_path])
    assert settings == Settings()
    assert settings.airflow_version == "3" and settings.max_catchup_runs == 500


@pytest.mark.parametrize(("body", "names"), [
    ("selct = ['DG1']", "'selct'"),
    ("select = 'DG1'", "select"),
    ("select = ['E501']", "select"),
    ("max-catchup-runs = -3", "max-catchup-runs"),
    ("max-catchup-runs = 'many'", "max-catchup-runs"),
    ("airflow-version = '1'", "airflow-version"),
    ("create-cron-data-intervals = 'yes'", "create-cron-data-intervals"),
    ("per-file-ignores = ['x']", "per-file-ignores"),
    ("exclude = 'dags'", "exclude"),
    ("packages = ['acme_pipelines']", "packages"),
    ("packages = { acme_pipelines = 1 }", "packages.acme_pipelines"),
    ("packages = { 'acme-pipelines' = '.' }", "packages.acme-pipelines"),
    ("packages = { acme_pipelines = 'no/such/folder' }", "packages.acme_pipelines: the folder 'no/such/folder'"),
])
def test_bad_keys_and_values_name_the_key_and_the_file(tmp_path, body, names):
    path = write_pyproject(tmp_path, f"[tool.dagguard]\n{body}\n")
    with pytest.raises(ConfigError) as error:
        discover_settings([tmp_path])
    assert names in str(error.value)
    assert str(path.resolve()) in str(error.value)


def test_invalid_toml_is_a_config_error(tmp_path):
    path = write_pyproject(tmp_path, "[tool.dagguard\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_file(path)


def test_explicit_config_file_may_hold_a_bare_table(tmp_path):
    path = tmp_path / "dagguard.toml"
    path.write_text('ignore = ["DG103"]\nper-file-ignores = { "legacy/*" = ["DG1"] }\n')
    settings = discover_settings([tmp_path], config=path)
    assert settings.ignore == ("DG103",)
    assert settings.per_file_ignores == (("legacy/*", ("DG1",)),)


def test_missing_explicit_config_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        discover_settings([tmp_path], config=tmp_path / "nope.toml")


def test_a_config_that_is_a_folder_or_has_a_non_table_tool_is_a_config_error(tmp_path):
    """Regression: both ended in a traceback (IsADirectoryError, AttributeError)."""
    with pytest.raises(ConfigError, match="is a folder, not a config file"):
        load_file(tmp_path)
    odd = tmp_path / "pyproject.toml"
    odd.write_text('tool = "dagguard"\n')
    with pytest.raises(ConfigError, match=r"`tool` must be a table \(\[tool.dagguard\]\), not str"):
        load_file(odd)
    assert discover_settings([tmp_path]) == Settings()  # found upwards: not a dagguard config


@pytest.mark.parametrize(("key", "body"), [
    ("select", "select = ['DG9']"),
    ("ignore", "ignore = ['XYZ999']"),
    ("extend-select", "extend-select = ['DG1000']"),
    ("extend-ignore", "extend-ignore = ['D']"),
    ("per-file-ignores", "per-file-ignores = { 'legacy/*' = ['DG4'] }"),
])
def test_an_unknown_rule_selector_in_the_config_names_it_the_key_and_the_file(tmp_path, key, body):
    """Regression: `select = ["DG9"]` passed, and the run then checked nothing."""
    path = write_pyproject(tmp_path, f"[tool.dagguard]\n{body}\n")
    with pytest.raises(ConfigError) as error:
        discover_settings([tmp_path])
    message = str(error.value)
    assert key in message and str(path.resolve()) in message and "unknown rule selector" in message


def test_all_and_every_prefix_of_a_code_are_selectors(tmp_path):
    write_pyproject(tmp_path, "[tool.dagguard]\nselect = ['ALL']\nextend-select = ['DG1', 'dg10', 'DG101']\n"
                              "extend-ignore = ['DG3']\n")
    settings = discover_settings([tmp_path])
    assert settings.select == ("ALL",) and settings.extend_select == ("DG1", "DG10", "DG101")
    assert settings.extend_ignore == ("DG3",)


def test_fix_values_are_validated(tmp_path):
    import pytest as _pytest

    from dagguard.config import ConfigError, parse_table

    settings = parse_table({"fix-max-active-runs": 2, "fix-max-active-tasks": 8}, tmp_path / "pyproject.toml")
    assert (settings.fix_max_active_runs, settings.fix_max_active_tasks) == (2, 8)
    for bad in (0, "1", True):
        with _pytest.raises(ConfigError, match="fix-max-active-runs must be a positive integer"):
            parse_table({"fix-max-active-runs": bad}, tmp_path / "pyproject.toml")
