package lab.agent;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import javax.management.Attribute;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * The platform MBeanServer as the agent reads it: the beans the containers register there (Tomcat's
 * {@code ThreadPool}, {@code RequestProcessor}s...; Jetty's pool when the app adds an MBeanContainer),
 * looked up by pattern ({@link #query}), the answer kept only while the server holds as many beans
 * as when it was asked, and 1 s at most: a container registers a processor bean per connection it
 * serves and unregisters them as it likes, and an app may stop and start its server, but asking the
 * MBeanServer to match a pattern against every bean of a domain (~200 us for Tomcat's with 100
 * processors) every 100 ms would be most of the sampler's cost, and its bean count is one read.
 *
 * <p>In-process, an attribute is the live object the bean returns (Tomcat's Connector bean answers
 * {@code executor} with the connector's executor itself), read only through its public API.
 * A bean that vanished between the query and the read reads as absent (null), never as an error:
 * the reader then says what it could not read.
 */
final class Beans {

    /** How long a query's answer is kept at most, even while the bean count does not change. */
    static final long KEEP_NANOS = 1_000_000_000L;

    private record Answer(int beanCount, long at, List<ObjectName> names) {
    }

    private final MBeanServer server;
    private final Map<String, Answer> answers = new ConcurrentHashMap<>();

    Beans() {
        this(ManagementFactory.getPlatformMBeanServer());
    }

    Beans(MBeanServer server) {
        this.server = server;
    }

    /**
     * The beans whose names match {@code pattern} (e.g. {@code *:type=ThreadPool,*}), sorted by name.
     * A bean registered and another unregistered since the last ask (the count unchanged) are seen
     * within 1 s; a vanished one reads as absent meanwhile.
     */
    List<ObjectName> query(String pattern) {
        int count = server.getMBeanCount();
        long now = System.nanoTime();
        Answer answer = answers.get(pattern);
        if (answer != null && answer.beanCount == count && now - answer.at < KEEP_NANOS) return answer.names;
        try {
            List<ObjectName> names = List.copyOf(new TreeSet<>(server.queryNames(new ObjectName(pattern), null)));
            answers.put(pattern, new Answer(count, now, names));
            return names;
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException(pattern, e);
        }
    }

    /** One attribute, or null where the bean or the attribute is not there (or its getter threw). */
    Object get(ObjectName bean, String attribute) {
        try {
            return server.getAttribute(bean, attribute);
        } catch (JMException | RuntimeException e) {
            return null;
        }
    }

    /** A numeric attribute as a long, or null where it is absent or not a number. */
    Long number(ObjectName bean, String attribute) {
        return get(bean, attribute) instanceof Number n ? n.longValue() : null;
    }

    /**
     * Several attributes of one bean in one call (the sampler reads three of every request processor
     * every 100 ms: one call each would be three lookups); those it could not read are missing.
     */
    Map<String, Object> get(ObjectName bean, String... attributes) {
        Map<String, Object> values = new HashMap<>();
        try {
            for (Object each : server.getAttributes(bean, attributes)) {
                Attribute attribute = (Attribute) each;
                values.put(attribute.getName(), attribute.getValue());
            }
        } catch (JMException | RuntimeException e) {
            // the bean went away between the query and this read: nothing of it
        }
        return values;
    }
}
