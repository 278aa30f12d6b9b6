package sparkkpl.config;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Map;

/**
 * Fills a group of a write's values (a record of {@link WriteOptions} or {@link ProducerSpec.Options}) by
 * the names of its components: each is the value of the option of that name, or one the sink derived. So an
 * option reaches the tasks by its declaration and a component of its name, nothing else.
 */
final class OptionGroups {
    private OptionGroups() {}

    /**
     * @param derived values the sink works out itself, by component name; they win over options
     * @throws IllegalStateException for a component named after no option nor derived value, or of another
     *     type than its option's kind: a mistake in the sink, met by the first write
     */
    static <R extends Record> R read(Class<R> group, GivenOptions given, Map<String, Object> derived) {
        RecordComponent[] components = group.getRecordComponents();
        Object[] values = new Object[components.length];
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < components.length; i++) {
            String name = components[i].getName();
            types[i] = components[i].getType();
            values[i] = derived.containsKey(name) ? derived.get(name) : given.get(SinkOption.byName(name)
                .orElseThrow(() -> new IllegalStateException(group.getSimpleName() + "." + name + " names no option")));
        }
        try {
            Constructor<R> constructor = group.getDeclaredConstructor(types);
            return constructor.newInstance(values);
        } catch (IllegalArgumentException | ReflectiveOperationException e) {
            Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
            throw new IllegalStateException("Cannot fill " + group.getSimpleName() + " from its options", cause);
        }
    }
}
