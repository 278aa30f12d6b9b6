// Writes numbered rows to a Kinesis stream from Scala, run by spark-shell (no compiler, no build): the
// stream and the region are spark.kpl.<name> config keys, which apply to every write of the session.
//
//   spark-shell --packages io.github.sparkkpl:spark-kpl:0.2.0 \
//       --repositories file://$PWD/build/maven-repo --conf spark.kpl.Region=eu-west-1 \
//       --conf spark.kpl.streamName=clicks -i examples/scala/write_rows.scala
//
// Spark 4.0's spark-shell ignores -i (SPARK-52587, fixed in 4.1); there, give the file on standard input
// instead: `< examples/scala/write_rows.scala` in place of `-i examples/scala/write_rows.scala`.
//
// On the write, .option(name, value) sets an option for that write alone and wins over the config key.
import org.apache.spark.sql.functions.{col, format_string}

val rows = 1000
// The sink reads the columns data (string or binary) and partitionKey.
val events = spark.range(rows).select(
  format_string("row-%d", col("id")).alias("data"),
  format_string("key-%d", col("id") % 10).alias("partitionKey"))
events.write.format("kpl").mode("append").save()
println(s"wrote $rows rows to ${spark.conf.get("spark.kpl.streamName")}")
// spark-shell -i stays in the shell once the file has run; a script ends here.
spark.stop()
System.exit(0)
