"""Local test infrastructure: an embedded Kinesis emulator and a standalone Spark cluster on loopback.

Everything here keeps traffic on 127.0.0.1. The AWS SDK and the KPL daemon ask the EC2 metadata
address for a region and credentials unless told not to, so every process started through this
package gets :data:`LOOPBACK_AWS_ENV`.
"""
