package lab.agent;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * One /stats answer being read: the figures a container reader could read, each as its JSON value,
 * and, for each it could not, why. It writes them in /stats' one order ({@link #toJson}), whatever
 * order they were read in, so every container's answer has the shape lab-common's has: a figure that
 * is there is where the bench looks for it, and one that is not is absent and named in
 * {@code "unknown"} (never a guess standing in for it, never a made-up default).
 */
final class Reading {

    /** The request figures, in /stats' order: between {@code "container"} and the JVM's own figures. */
    static final List<String> REQUEST_FIGURES = List.of("threads", "inFlight", "queued", "maxInFlight", "completed", "errors",
            "handlerThreads", "carrierThreads");

    private final Map<String, String> figures = new HashMap<>();
    private final Map<String, String> pool = new LinkedHashMap<>();
    private final Map<String, String> unknown = new LinkedHashMap<>();

    void put(String key, long value) {
        figures.put(key, Long.toString(value));
    }

    /** {@code "threads"}: a platform pool's size is a number, {@code "v1"} a string (as lab-common writes it). */
    void threads(String threads) {
        figures.put("threads", threads.startsWith("v") ? Json.str(threads) : threads);
    }

    void names(String key, Collection<String> names) {
        figures.put(key, array(names));
    }

    /** A member of {@code "pool"}, in the order given. */
    void pool(String key, long value) {
        pool.put(key, Long.toString(value));
    }

    void pool(String key, String value) {
        pool.put(key, Json.str(value));
    }

    /** {@code key} could not be read, and why (a pool member as {@code "pool.<key>"}). */
    void unknown(String key, String why) {
        unknown.putIfAbsent(key, why);
    }

    /** Every key of {@code keys} unknown for the one same reason. */
    void unknown(List<String> keys, String why) {
        for (String key : keys) unknown(key, why);
    }

    boolean has(String key) {
        return figures.containsKey(key);
    }

    /**
     * The /stats object: app, container, the request figures read, the JVM's figures
     * ({@link Jvm#figuresJson()}), {@code pool} if any member of it was read, {@code unknown} if any
     * figure was not, and {@code agent} (what the agent itself did).
     */
    String toJson(String app, String container, String agentJson) {
        StringBuilder json = new StringBuilder("{\"app\":").append(Json.str(app))
                .append(",\"container\":").append(Json.str(container));
        for (String key : REQUEST_FIGURES) {
            String value = figures.get(key);
            if (value != null) json.append(",\"").append(key).append("\":").append(value);
        }
        json.append(',').append(Jvm.figuresJson());
        if (!pool.isEmpty()) json.append(",\"pool\":").append(object(pool));
        if (!unknown.isEmpty()) {
            Map<String, String> reasons = new LinkedHashMap<>();
            unknown.forEach((key, why) -> reasons.put(key, Json.str(why)));
            json.append(",\"unknown\":").append(object(reasons));
        }
        return json.append(",\"agent\":").append(agentJson).append('}').toString();
    }

    private static String object(Map<String, String> members) {
        return members.entrySet().stream().map(e -> Json.str(e.getKey()) + ":" + e.getValue())
                .collect(Collectors.joining(",", "{", "}"));
    }

    /** A JSON array of the names, sorted (as lab-common sorts its thread names). */
    static String array(Collection<String> names) {
        return new TreeSet<>(names).stream().map(Json::str).collect(Collectors.joining(",", "[", "]"));
    }
}
