from tests.cli.conftest import run_cli  # noqa: F401  (the `run_cli` fixture)
