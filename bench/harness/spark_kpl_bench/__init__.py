"""What only the benchmarks (bench/) and the measuring scripts (scripts/soak.py, scripts/reliability.py)
run: the throughput study, the soak, the reliability catalogue and the host they ran on. Beside the
benchmarks so that the test harness (spark_kpl_testing, which this builds on) holds what the tests use.
"""
