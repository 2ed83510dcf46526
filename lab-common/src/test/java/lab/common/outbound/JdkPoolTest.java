package lab.common.outbound;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The JDK client's idle pool and keep-alive (docs/traps.md #42): set on purpose unless a -D set them,
 * and printed as they are. The JDK reads both once per JVM, so this test only sets and reads the
 * properties (restoring them): what they do to a run shows in a cost run's client connections.
 */
class JdkPoolTest {

    private String pool;
    private String keepAlive;

    @BeforeEach
    void save() {
        pool = System.getProperty(JdkOutbound.POOL_PROPERTY);
        keepAlive = System.getProperty(JdkOutbound.KEEP_ALIVE_PROPERTY);
        System.clearProperty(JdkOutbound.POOL_PROPERTY);
        System.clearProperty(JdkOutbound.KEEP_ALIVE_PROPERTY);
    }

    @AfterEach
    void restore() {
        set(JdkOutbound.POOL_PROPERTY, pool);
        set(JdkOutbound.KEEP_ALIVE_PROPERTY, keepAlive);
    }

    @Test
    void unsetTheLabSetsBoth() {
        assertEquals(" idlePool=unbounded (the JDK's default) keepAlive=the JDK's default", JdkOutbound.describePool());
        JdkOutbound.pinPool();
        assertEquals("256", System.getProperty(JdkOutbound.POOL_PROPERTY));
        assertEquals("20", System.getProperty(JdkOutbound.KEEP_ALIVE_PROPERTY));
        assertEquals(" idlePool=256 (beyond it the oldest idle connection is closed) keepAlive=20s", JdkOutbound.describePool());
    }

    @Test
    void aUsersOwnWinsAndIsPrintedAsTheirs() {
        System.setProperty(JdkOutbound.POOL_PROPERTY, "0");
        System.setProperty(JdkOutbound.KEEP_ALIVE_PROPERTY, "1200");
        JdkOutbound.pinPool();
        assertEquals("0", System.getProperty(JdkOutbound.POOL_PROPERTY));
        assertEquals(" idlePool=unbounded (jdk.httpclient.connectionPoolSize=0: docs/traps.md #42) keepAlive=1200s",
                JdkOutbound.describePool());
        System.setProperty(JdkOutbound.POOL_PROPERTY, "64");
        assertTrue(JdkOutbound.describePool().startsWith(" idlePool=64 (-Djdk.httpclient.connectionPoolSize)"),
                JdkOutbound.describePool());
    }

    private static void set(String key, String value) {
        if (value == null) System.clearProperty(key);
        else System.setProperty(key, value);
    }
}
