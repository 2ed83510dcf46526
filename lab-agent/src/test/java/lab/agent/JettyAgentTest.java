package lab.agent;

import static lab.agent.Http.member;
import static lab.agent.Http.number;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.jmx.MBeanContainer;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Jetty 12.1, as most apps run it (no MBeanContainer: found by its {@code qtp<n>-<m>} threads, every
 * request figure unknown, the JVM's read), and with its pool's bean published (pool figures read).
 */
@Timeout(60)
class JettyAgentTest {

    @Test
    void withoutBeansOnlyTheThreadsTellIt() throws Exception {
        try (Jetty jetty = new Jetty(false); LabAgent agent = TomcatAgentTest.agent()) {
            Map<String, Object> stats = Http.statsUntil(agent.port(), s -> "jetty".equals(s.get("container")), "jetty");
            Map<String, Object> unknown = member(stats, "unknown");
            for (String figure : List.of("threads", "inFlight", "queued", "maxInFlight", "completed", "errors", "handlerThreads", "pool")) {
                assertEquals(Unseen.NO_JETTY_BEAN, unknown.get(figure), figure + " in " + unknown);
                assertFalse(stats.containsKey(figure), figure + " is unknown, and absent: " + stats);
            }
            assertTrue(number(stats, "liveThreads") > 0 && stats.containsKey("jvm"), stats.toString());
        }
    }

    @Test
    void withItsPoolsBeanThePoolIsRead() throws Exception {
        try (Jetty jetty = new Jetty(true); LabAgent agent = TomcatAgentTest.agent()) {
            List<CompletableFuture<HttpResponse<String>>> calls = Http.concurrently(jetty.port(), "/", 3);
            Map<String, Object> stats = Http.statsUntil(agent.port(), s -> s.get("pool") instanceof Map<?, ?> pool
                    && pool.get("busy") instanceof Long busy && busy >= 3, "3 busy threads");
            assertEquals("jetty", stats.get("container"));
            assertEquals(8L, number(stats, "threads"), stats.toString());
            assertEquals(0L, number(stats, "queued"), stats.toString());
            Map<String, Object> pool = member(stats, "pool");
            assertEquals("platform", pool.get("executor"));
            assertEquals(8L, number(pool, "max"));
            assertTrue(pool.get("source").toString().startsWith("org.eclipse.jetty.util.thread:type=queuedthreadpool,"), pool.toString());
            assertEquals(JettyReader.NO_REQUESTS, member(stats, "unknown").get("inFlight"), stats.toString());
            jetty.release.countDown();
            for (CompletableFuture<HttpResponse<String>> call : calls) assertEquals(200, call.get(30, TimeUnit.SECONDS).statusCode());
        }
    }

    /** A Jetty server on a free port whose handler holds its pool thread until released. */
    private static final class Jetty implements AutoCloseable {
        final Server server = new Server(new QueuedThreadPool(8));
        final ServerConnector connector = new ServerConnector(server);
        final CountDownLatch release = new CountDownLatch(1);
        final MBeanContainer beans;

        Jetty(boolean withBeans) throws Exception {
            connector.setHost("127.0.0.1");
            connector.setPort(0);
            server.addConnector(connector);
            beans = withBeans ? new MBeanContainer(ManagementFactory.getPlatformMBeanServer()) : null;
            if (beans != null) server.addBean(beans);
            server.setHandler(new Handler.Abstract() {
                @Override
                public boolean handle(Request request, Response response, Callback callback) throws Exception {
                    release.await(30, TimeUnit.SECONDS);
                    response.setStatus(200);
                    Content.Sink.write(response, true, "ok", callback);
                    return true;
                }
            });
            server.start();
        }

        int port() {
            return connector.getLocalPort();
        }

        @Override
        public void close() throws Exception {
            release.countDown();
            server.stop();
            if (beans != null) beans.destroy();   // unregisters them: the next test's agent sees none
            server.destroy();
        }
    }
}
