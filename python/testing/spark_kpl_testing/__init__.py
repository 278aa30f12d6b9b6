"""spark-kpl's test harness: local Kinesis endpoints, Spark clusters and servers on 127.0.0.1, and the
helpers the tests, scripts and benchmarks share. A package of its own, never in the user's wheel.

Everything here keeps traffic on 127.0.0.1 (:mod:`.net`). The AWS SDK and the KPL daemon ask the EC2
metadata address for a region and credentials unless told not to, so every process started through this
package gets :data:`.env.LOOPBACK_AWS_ENV`. Every wait goes through :mod:`.polling`, every look at a
process through :mod:`.processes`, and every server stops what it started (:mod:`.lifecycle`).
"""
