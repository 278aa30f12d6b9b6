package sparkkpl.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.format_string;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Writes numbered rows to a Kinesis stream through the {@code kpl} data source, from Java: no code of
 * spark-kpl is needed to compile it, only Spark's API, and the sink comes with {@code --packages}.
 *
 * <pre>
 * spark-submit --packages io.github.sparkkpl:spark-kpl:0.2.0 \
 *     --repositories file://$PWD/build/maven-repo --conf spark.kpl.Region=eu-west-1 \
 *     --class sparkkpl.examples.WriteRows build/examples/spark-kpl-examples.jar clicks 1000
 * </pre>
 *
 * Any sink option or KPL property can be given as a {@code spark.kpl.<name>} config key, as here the
 * region, or on the write with {@code .option(name, value)}, which wins.
 */
public final class WriteRows {
    private WriteRows() {}

    public static void main(String[] args) {
        if (args.length != 2) {
            throw new IllegalArgumentException("Usage: WriteRows <stream> <rows>");
        }
        String stream = args[0];
        long rows = Long.parseLong(args[1]);
        SparkSession spark = SparkSession.builder().appName("spark-kpl-java-example").getOrCreate();
        // The sink reads the columns data (string or binary) and partitionKey.
        Dataset<Row> events = spark.range(rows).select(
            format_string("row-%d", col("id")).alias("data"),
            format_string("key-%d", col("id").mod(10)).alias("partitionKey"));
        events.write().format("kpl").option("streamName", stream).mode("append").save();
        System.out.println("wrote " + rows + " rows to " + stream);
        spark.stop();
    }
}
