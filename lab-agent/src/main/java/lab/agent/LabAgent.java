package lab.agent;

import java.io.IOException;
import java.lang.instrument.Instrumentation;

/**
 * The lab's Java agent: any JVM app (a user's Spring Boot jar too) measured as the lab measures its
 * own, read from outside the app's code. Run it beside the app:
 * <pre>
 *   java -javaagent:lab-agent/target/lab-agent.jar=port=8081,app=my-service -jar my-service.jar
 *   curl 127.0.0.1:8081/stats
 * </pre>
 * It serves {@code GET /stats} on its own port ({@link AgentServer}) with the keys lab-common's apps
 * write ({@link AgentStats}), read from the container's JMX beans ({@link Detector}: Tomcat, Jetty,
 * Reactor Netty), the JVM's MXBeans and /proc ({@link Jvm}); {@code POST /stats/reset} takes the run's
 * token from {@code LAB_ADMIN_TOKEN} ({@link AdminAccess}).
 *
 * <p>Arguments ({@link AgentArgs}): {@code port=N} (required; 0 = any free port), {@code host=ADDR}
 * (default 127.0.0.1), {@code app=NAME} (default "app"). A bad argument prints
 * {@code ERROR: lab-agent: <what is wrong>} and the usage to stderr and exits 2; a port it cannot
 * listen on prints {@code ERROR: lab-agent: cannot listen on host:port: <reason>} and exits 1, before
 * the app starts: a JVM the bench cannot observe must not run. Else one line on stdout:
 * {@code lab-agent: listen=http://127.0.0.1:8081/stats app=my-service token=from LAB_ADMIN_TOKEN sample=100ms}
 * (never the token itself).
 *
 * <p>Everything it starts is a daemon thread named {@code lab-agent-*} (the sampler, the server's):
 * it never keeps the app's JVM alive. Loaded at start ({@code premain}) or into a running JVM
 * ({@code agentmain}, by the Attach API), it does the same, as Prometheus' jmx_exporter agent does.
 */
public final class LabAgent implements AutoCloseable {

    private final AgentArgs args;
    private final AdminAccess access;
    private final AgentStats stats;
    private final AgentServer server;

    private LabAgent(AgentArgs args, AdminAccess access, AgentStats stats, AgentServer server) {
        this.args = args;
        this.access = access;
        this.stats = stats;
        this.server = server;
    }

    public static void premain(String args, Instrumentation instrumentation) {
        agentmain(args, instrumentation);
    }

    public static void agentmain(String args, Instrumentation instrumentation) {
        AgentArgs parsed;
        try {
            parsed = AgentArgs.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ERROR: lab-agent: " + e.getMessage());
            System.err.println(AgentArgs.USAGE);
            System.exit(2);
            return;
        }
        LabAgent agent;
        try {
            agent = start(parsed, AdminAccess.fromEnvironment(), true);
        } catch (IOException | RuntimeException e) {
            String reason = e.getMessage() != null ? e.getMessage() : e.toString();
            System.err.println("ERROR: lab-agent: cannot listen on " + parsed.host + ":" + parsed.port + ": " + reason);
            System.exit(1);
            return;
        }
        System.out.println(agent.describe());
    }

    /**
     * Starts the agent in this JVM: its sampler ({@code periodic}; tests may sample by hand) and its
     * server on args' host and port. An IOException where it cannot listen (nothing is left running).
     */
    static LabAgent start(AgentArgs args, AdminAccess access, boolean periodic) throws IOException {
        AgentStats stats = new AgentStats(args.app, periodic);
        try {
            return new LabAgent(args, access, stats, new AgentServer(args.host, args.port, stats, access));
        } catch (IOException | RuntimeException e) {
            stats.close();
            throw e;
        }
    }

    /** The line it prints when it listens: where, for which app, whose token (never the token). */
    String describe() {
        String host = args.host.contains(":") ? "[" + args.host + "]" : args.host;
        return "lab-agent: listen=http://" + host + ":" + port() + "/stats app=" + args.app + " token=" + access.tokenOrigin()
                + " sample=" + Sampler.PERIOD_MS + "ms";
    }

    int port() {
        return server.port();
    }

    AgentStats stats() {
        return stats;
    }

    @Override
    public void close() {
        server.close();
        stats.close();
    }
}
