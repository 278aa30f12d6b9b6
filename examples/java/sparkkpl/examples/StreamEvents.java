package sparkkpl.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.to_json;

import java.util.concurrent.TimeoutException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryException;
import org.apache.spark.sql.streaming.Trigger;

/**
 * Streams the JSON lines files of a folder to a Kinesis stream from Java, with Structured Streaming: each
 * event is one record, its user the partition key.
 *
 * <pre>
 * spark-submit --packages io.github.sparkkpl:spark-kpl:0.2.0 \
 *     --repositories file://$PWD/build/maven-repo --conf spark.kpl.Region=eu-west-1 \
 *     --conf spark.kpl.streamName=clicks --conf spark.sql.streaming.checkpointLocation=checkpoints \
 *     --class sparkkpl.examples.StreamEvents build/examples/spark-kpl-examples.jar events
 * </pre>
 *
 * The events are lines such as {@code {"user": "u-1", "action": "click-7"}}. The query sends what the
 * folder holds and stops ({@code Trigger.AvailableNow()}); run again, it sends only the files added since,
 * as its checkpoint remembers what was sent. For a query that runs on, use
 * {@code Trigger.ProcessingTime("10 seconds")}. The checkpoint is the query's name under
 * {@code spark.sql.streaming.checkpointLocation}.
 *
 * <p>The stream and the checkpoint come as config keys rather than {@code writeStream().option(...)}, so
 * that one jar runs on Spark 3.5 and 4.x: Spark 4 changed that method's signature, and a call compiled
 * against Spark 4 fails on 3.5 with {@code NoSuchMethodError}. Compiled against your own Spark,
 * {@code .option(name, value)} works as well.
 */
public final class StreamEvents {
    private StreamEvents() {}

    public static void main(String[] args) throws TimeoutException, StreamingQueryException {
        if (args.length != 1) {
            throw new IllegalArgumentException("Usage: StreamEvents <events folder>");
        }
        String events = args[0];
        SparkSession spark = SparkSession.builder().appName("spark-kpl-java-streaming-example").getOrCreate();
        Dataset<Row> records = spark.readStream().schema("user STRING, action STRING").json(events).select(
            to_json(struct(col("user"), col("action"))).alias("data"), col("user").alias("partitionKey"));
        StreamingQuery query = records.writeStream().format("kpl").queryName("events-to-kinesis")
            .trigger(Trigger.AvailableNow()).start();
        query.awaitTermination();
        System.out.println("streamed " + events + " to " + spark.conf().get("spark.kpl.streamName"));
        spark.stop();
    }
}
