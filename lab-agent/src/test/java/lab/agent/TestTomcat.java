package lab.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * An embedded Tomcat on a free port, as an app would run it, with what the agent must see:
 * {@code GET /block} holds its thread until {@link #release()}, {@code GET /async} starts a Servlet
 * async request that waits off its thread until then, {@code GET /fail} answers 503. Its beans go
 * into the platform MBeanServer (domain Tomcat), where the agent reads them.
 */
final class TestTomcat implements AutoCloseable {

    private final Tomcat tomcat = new Tomcat();
    private final Connector connector = new Connector("HTTP/1.1");
    private final CountDownLatch released = new CountDownLatch(1);
    private final Path baseDir;

    /** {@code maxThreads}, or 0 with {@code executor} (an external one, as Spring Boot sets) or null for useVirtualThreads. */
    TestTomcat(int maxThreads, Executor executor) throws IOException, LifecycleException {
        baseDir = Files.createTempDirectory("lab-agent-tomcat-");
        baseDir.toFile().deleteOnExit();   // if Tomcat is still emptying it when close() deletes (as lab-common's TomcatContainer)
        tomcat.setBaseDir(baseDir.toString());
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        if (maxThreads > 0) connector.setProperty("maxThreads", String.valueOf(maxThreads));
        else if (executor != null) connector.getProtocolHandler().setExecutor(executor);
        else connector.setProperty("useVirtualThreads", "true");
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "app", new Servlet(released)).setAsyncSupported(true);
        map(context);
        tomcat.start();
    }

    /** Deprecated in Tomcat 11 (its JSP flag goes in 12), yet how an embedded context maps a servlet (as lab-common's TomcatContainer). */
    @SuppressWarnings("deprecation")
    private static void map(Context context) {
        context.addServletMappingDecoded("/*", "app");
    }

    int port() {
        return connector.getLocalPort();
    }

    void release() {
        released.countDown();
    }

    @Override
    public void close() throws Exception {
        release();
        tomcat.stop();
        tomcat.destroy();   // unregisters its beans: the next test's agent sees none of them
        try (var files = Files.walk(baseDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static final class Servlet extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient CountDownLatch released;

        Servlet(CountDownLatch released) {
            this.released = released;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            switch (request.getRequestURI()) {
                case "/block" -> {
                    await(released);
                    response.getWriter().write("ok");
                }
                case "/async" -> {
                    AsyncContext async = request.startAsync();
                    async.setTimeout(0);
                    Thread waiter = new Thread(() -> {
                        await(released);
                        try {
                            async.getResponse().getWriter().write("ok");
                        } catch (IOException e) {
                            // the test sees the failed response
                        }
                        async.complete();
                    }, "test-async-waiter");
                    waiter.setDaemon(true);
                    waiter.start();
                }
                case "/fail" -> response.sendError(503);
                default -> response.getWriter().write("hello");
            }
        }

        private static void await(CountDownLatch latch) {
            try {
                latch.await(30, TimeUnit.SECONDS);   // bounded: a failed test frees its threads
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
