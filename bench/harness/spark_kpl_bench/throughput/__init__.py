"""The throughput benchmark (bench/throughput.py) in phases: its arguments, the plan of producers and
workloads, the run of each producer's child process, the report; and what the studies beside it share."""
