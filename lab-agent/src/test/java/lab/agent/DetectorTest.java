package lab.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The thread names that tell a container without beans (Tomcat under Spring Boot, Jetty, Reactor
 * Netty) and the carriers of virtual threads, as those libraries and the JDK name them; and the
 * folding of a virtual thread's name.
 */
class DetectorTest {

    @Test
    void tomcatsThreads() {
        matches(Detector.TOMCAT_THREAD, "http-nio-8080-exec-1", "http-nio-8080-Acceptor", "http-nio-8080-Poller",
                "http-nio-127.0.0.1-18080-exec-12", "https-jsse-nio-8443-exec-3", "https-openssl-nio-8443-Acceptor",
                "http-nio2-8080-Acceptor-0", "ajp-nio-8009-Poller", "http-nio-auto-1-exec-4");
        matchesNone(Detector.TOMCAT_THREAD, "http-nio-8080-virt-1", "tomcat-handler-3", "Catalina-utility-1", "HttpClient-1-Worker-0",
                "http-nio-8080-BlockPoller");
    }

    @Test
    void jettysAndNettysThreads() {
        matches(Detector.JETTY_THREAD, "qtp1234567-42", "qtp1-1");
        matchesNone(Detector.JETTY_THREAD, "jetty-12", "HttpClient@5e9f23b4-31", "qtp-1", "qtp12");
        matches(NettyReader.LOOP, "reactor-http-nio-1", "reactor-http-epoll-12", "reactor-http-kqueue-2", "reactor-http-io_uring-3");
        matchesNone(NettyReader.LOOP, "reactor-http-nio-select-1", "netty-1", "rn-client-nio-1", "reactor-tcp-nio-1");
    }

    @Test
    void carriersAndTheirFolding() {
        matches(Threads.CARRIER_NAME, "ForkJoinPool-1-worker-1", "ForkJoinPool-3-worker-12");
        matchesNone(Threads.CARRIER_NAME, "ForkJoinPool.commonPool-worker-1", "ForkJoinPool-1-worker-");
        assertEquals("tomcat-handler-*", TomcatReader.fold("tomcat-handler-17"));
        assertEquals("http-nio-8080-virt-*", TomcatReader.fold("http-nio-8080-virt-3"));
        assertEquals("*", TomcatReader.fold("42"));
        assertEquals("virtual", TomcatReader.fold(""));   // an unnamed virtual thread, as lab-common names it
        assertEquals("no-number", TomcatReader.fold("no-number"));
    }

    private static void matches(Pattern pattern, String... names) {
        for (String name : names) assertTrue(pattern.matcher(name).matches(), name + " ~ " + pattern);
    }

    private static void matchesNone(Pattern pattern, String... names) {
        for (String name : List.of(names)) assertFalse(pattern.matcher(name).matches(), name + " !~ " + pattern);
    }
}
