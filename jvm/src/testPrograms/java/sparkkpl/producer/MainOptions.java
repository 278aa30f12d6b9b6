package sparkkpl.producer;

import java.util.HashMap;
import java.util.Map;

/** The name=value options the test mains take after their positional arguments. */
final class MainOptions {
    private MainOptions() {}

    static Map<String, String> from(String[] args, int first) {
        Map<String, String> options = new HashMap<>();
        for (int i = first; i < args.length; i++) {
            String[] option = args[i].split("=", 2);
            options.put(option[0], option[1]);
        }
        return options;
    }
}
