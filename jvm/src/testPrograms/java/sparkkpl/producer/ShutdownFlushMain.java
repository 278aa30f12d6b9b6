package sparkkpl.producer;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import sparkkpl.config.WriteConfig;
import sparkkpl.kinesis.KinesisRecord;

/**
 * Adds records through the JVM's shared producer and returns from main without waiting for them,
 * as an executor does when it exits normally mid-write (scale-in, decommission). The shutdown
 * hook's bounded flush must deliver them. Driven by tests/sink/daemon/test_producer_lifecycle.py.
 *
 * <p>Arguments: stream, record count, then KPL options as name=value.
 */
public final class ShutdownFlushMain {
    private ShutdownFlushMain() {}

    public static void main(String[] args) throws Exception {
        String stream = args[0];
        int count = Integer.parseInt(args[1]);
        Map<String, String> options = MainOptions.from(args, 2);
        SharedProducer producer = ProducerRegistry.acquire(WriteConfig.read(Map.of(), options).options().producer());
        TaskAcks acks = new TaskAcks();
        TaskFeed feed = new TaskFeed(producer, acks, new TaskQueueStats(), 60_000, (record, row, error) -> {
            throw error;
        }, RecordGrouping.ONE_BY_ONE, 100);
        for (int i = 0; i < count; i++) {
            byte[] data = ("exit-" + i).getBytes(StandardCharsets.UTF_8);
            feed.add(new KinesisRecord(stream, "key-" + i, null, data), i + 1);
        }
        feed.send();
        System.out.println("added " + count + ", acknowledged so far " + acks.succeeded());
    }
}
