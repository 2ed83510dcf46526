package lab.agent;

import static lab.agent.Http.member;
import static lab.agent.Http.number;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The agent's admin port without a container in the JVM: its routes and refusals, what /stats says
 * when it finds nothing to read, and that everything it starts is a daemon thread named lab-agent-*.
 */
@Timeout(60)
class AgentServerTest {

    private static final String TOKEN = TomcatAgentTest.TOKEN;

    /** No container: "unknown", each request figure absent and named with its reason; the JVM's figures read. */
    @Test
    void noContainerStillReadsTheJvm() throws Exception {
        try (LabAgent agent = TomcatAgentTest.agent()) {
            Map<String, Object> stats = Http.statsUntil(agent.port(), s -> "unknown".equals(s.get("container")), "no container");
            assertEquals(List.of("app", "container", "liveThreads", "peakThreads", "heapUsedBytes", "jvm", "unknown", "agent"),
                    List.copyOf(stats.keySet()), stats.toString());
            Map<String, Object> unknown = member(stats, "unknown");
            for (String figure : List.of("threads", "inFlight", "queued", "maxInFlight", "completed", "errors", "handlerThreads", "pool")) {
                assertEquals(Unseen.NO_CONTAINER, unknown.get(figure), figure + " in " + unknown);
            }
            assertTrue(number(stats, "liveThreads") > 0 && number(stats, "peakThreads") >= number(stats, "liveThreads"), stats.toString());
            assertTrue(number(stats, "heapUsedBytes") > 0);
            assertTrue(member(stats, "jvm").containsKey("compilerCpuMs"), stats.toString());
            Map<String, Object> sampler = member(stats, "agent");
            assertEquals(100L, number(sampler, "sampleMs"));
            assertTrue(number(sampler, "samples") >= 1, sampler.toString());
        }
    }

    /** The JVM's figures: the keys lab-common's /stats writes, in its order, from the one method both call. */
    @Test
    void theJvmFiguresKeepLabCommonsKeys() {
        String json = "{" + Jvm.figuresJson() + "}";
        assertEquals(List.of("liveThreads", "peakThreads", "heapUsedBytes", "jvm"), List.copyOf(MiniJson.object(json).keySet()));
        assertTrue(json.matches("\\{\"liveThreads\":\\d+,\"peakThreads\":\\d+,\"heapUsedBytes\":\\d+,\"jvm\":\\{\"cpuMs\":.*\\}\\}"), json);
    }

    @Test
    void routesAndRefusals() throws Exception {
        try (LabAgent agent = TomcatAgentTest.agent()) {
            int port = agent.port();
            answers(port, "POST", "/pool?threads=8", null, 401, "Authorization: Bearer");
            answers(port, "POST", "/pool?threads=8", "Bearer " + TOKEN, 409, AgentServer.FOREIGN_POOL);
            answers(port, "POST", "/profile/start", null, 401, "Authorization: Bearer");
            answers(port, "POST", "/profile/start", "Bearer " + TOKEN, 409, AgentServer.NO_PROFILE);
            answers(port, "POST", "/profile/stop?dir=/tmp/x", "Bearer " + TOKEN, 409, AgentServer.NO_PROFILE);
            answers(port, "GET", "/pool", "Bearer " + TOKEN, 405, "POST only");
            answers(port, "POST", "/stats", null, 405, "GET only");
            answers(port, "GET", "/stats/reset", null, 405, "POST only");
            answers(port, "GET", "/", null, 404, "GET /stats");
            answers(port, "GET", "/statsx", null, 404, "GET /stats");
            assertEquals("GET", Http.call(port, "POST", "/stats", null).headers().firstValue("Allow").orElse(""));
            answers(port, "POST", "/stats/reset", "Bearer " + TOKEN, 200, "\"container\"");
        }
    }

    private static void answers(int port, String method, String path, String auth, int status, String says) throws Exception {
        HttpResponse<String> answer = Http.call(port, method, path, auth);
        assertEquals(status, answer.statusCode(), method + " " + path + ": " + answer.body());
        assertTrue(answer.body().contains(says), method + " " + path + ": " + answer.body());
        MiniJson.parse(answer.body());
    }

    /** A request the JDK's server cannot parse gets a 4xx (or a closed connection), and the server lives on. */
    @Test
    void aMalformedRequestLeavesTheServerUp() throws Exception {
        try (LabAgent agent = TomcatAgentTest.agent()) {
            for (String garbage : new String[] {"GARBAGE\r\n\r\n", "GET /stats HTTP/1.1\r\nno colon here\r\n\r\n",
                "\u0000\u0001\u0002\r\n\r\n", "POST /stats/reset HTTP/1.1\r\nContent-Length: x\r\n\r\n"}) {
                try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), agent.port())) {
                    socket.setSoTimeout(10_000);
                    OutputStream out = socket.getOutputStream();
                    out.write(garbage.getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                    String reply = new String(readSome(socket.getInputStream()), StandardCharsets.ISO_8859_1);
                    assertTrue(reply.isEmpty() || reply.matches("(?s)HTTP/1\\.1 4\\d\\d .*"), "to " + garbage + ": " + reply);
                }
                assertEquals(200, Http.call(agent.port(), "GET", "/stats", null).statusCode());
            }
        }
    }

    private static byte[] readSome(InputStream in) throws IOException {
        byte[] buffer = new byte[256];
        int n = in.read(buffer);
        return n < 0 ? new byte[0] : java.util.Arrays.copyOf(buffer, n);
    }

    /** A port in use: start throws (premain then exits 1), and leaves nothing running. */
    @Test
    void aPortInUseIsRefused() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Set<String> before = new HashSet<>(Threads.names());
            assertThrows(IOException.class, () -> LabAgent.start(new AgentArgs(taken.getLocalPort(), "127.0.0.1", "x"),
                    AdminAccess.of(TOKEN, null), true));
            Thread.sleep(200);
            assertTrue(Threads.names().stream().filter(n -> n.startsWith("lab-agent-")).allMatch(before::contains),
                    "left running: " + Threads.names());
        }
    }

    /** Every thread the agent starts is a daemon named lab-agent-*, the JDK server's own included. */
    @Test
    void everyThreadItStartsIsALabAgentDaemon() throws Exception {
        Set<Thread> before = new HashSet<>(Threads.live());
        try (LabAgent agent = TomcatAgentTest.agent()) {
            Http.stats(agent.port());
            Http.stats(agent.port());     // both pool threads, likely
            List<Thread> started = Threads.live().stream().filter(t -> !before.contains(t) && !t.getName().startsWith("HttpClient")).toList();
            assertFalse(started.isEmpty());
            for (Thread thread : started) {
                assertTrue(thread.getName().startsWith("lab-agent-") && thread.isDaemon(), thread + " daemon=" + thread.isDaemon());
            }
            assertTrue(started.stream().anyMatch(t -> t.getName().equals("lab-agent-sampler")), started.toString());
            assertTrue(started.stream().anyMatch(t -> t.getName().equals("lab-agent-HTTP-Dispatcher")), started.toString());
        }
    }

    /** A reset starts the JVM's peak thread count again (Jvm.resetPeak, as lab-common's reset does). */
    @Test
    void resetResetsThePeakThreadCount() throws Exception {
        try (LabAgent agent = TomcatAgentTest.agent()) {
            List<Thread> extra = new java.util.ArrayList<>();
            for (int i = 0; i < 20; i++) {
                Thread t = new Thread(() -> sleep(300), "peak-" + i);
                t.start();
                extra.add(t);
            }
            for (Thread t : extra) t.join();
            long peak = ManagementFactory.getThreadMXBean().getPeakThreadCount();
            Map<String, Object> after = MiniJson.object(Http.call(agent.port(), "POST", "/stats/reset", "Bearer " + TOKEN).body());
            assertTrue(number(after, "peakThreads") < peak, "peak " + peak + " -> " + after.get("peakThreads"));
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
