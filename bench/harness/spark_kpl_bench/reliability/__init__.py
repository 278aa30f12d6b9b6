"""The reliability catalogue (scripts/reliability.py): fault scenarios as data, the runner that
runs each for real against the project's endpoint, and the report that becomes docs/reliability.md."""
