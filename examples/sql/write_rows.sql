-- Writes numbered rows to a Kinesis stream from SQL: a table USING kpl is the stream, its OPTIONS apply to
-- every INSERT INTO it, and spark.kpl.<name> config keys (here the Region) apply to every write.
--
--   spark-sql --packages io.github.sparkkpl:spark-kpl:0.2.0 \
--       --repositories file://$PWD/build/maven-repo --conf spark.kpl.Region=eu-west-1 \
--       -d stream=clicks -d rows=1000 -f examples/sql/write_rows.sql
--
-- The table holds no data: it names the stream and the options, in the session's catalog. The sink reads
-- the inserted rows' columns by name (data, partitionKey), not by position, so each selected column is named.
DROP TABLE IF EXISTS clicks;

CREATE TABLE clicks (data STRING, partitionKey STRING)
USING kpl
OPTIONS (streamName '${stream}');

INSERT INTO clicks
SELECT format_string('row-%d', id) AS data, format_string('key-%d', id % 10) AS partitionKey
FROM range(${rows});
