package lab.agent;

import java.util.HashSet;
import java.util.Set;

/**
 * The agent's arguments, the text after {@code =} in {@code -javaagent:lab-agent.jar=...}:
 * comma-separated {@code key=value} pairs.
 * <ul>
 *   <li>{@code port=N}: required, 0..65535; 0 takes any free port (the agent prints the one it got);</li>
 *   <li>{@code host=ADDR}: where to listen, default {@value #DEFAULT_HOST} (the admin port changes
 *       state with a token, but it also shows what the app does: no wider than asked);</li>
 *   <li>{@code app=NAME}: the {@code "app"} of /stats, default {@value #DEFAULT_APP}.</li>
 * </ul>
 * Anything else (an unknown key, a key twice, a pair without {@code =}) is refused: a typo must not
 * start an agent that listens somewhere nobody looks.
 */
final class AgentArgs {

    static final String DEFAULT_HOST = "127.0.0.1";
    static final String DEFAULT_APP = "app";
    static final String USAGE = "usage: java -javaagent:lab-agent/target/lab-agent.jar=port=N[,host=ADDR][,app=NAME] ..."
            + " (port 0..65535, 0 = any free port; host default " + DEFAULT_HOST + "; app default " + DEFAULT_APP + ")";

    final int port;
    final String host;
    final String app;

    AgentArgs(int port, String host, String app) {
        this.port = port;
        this.host = host;
        this.app = app;
    }

    /**
     * Parses {@code args} (null when the agent was given none). Throws IllegalArgumentException
     * with what is wrong, in the words the agent prints after {@code ERROR: lab-agent: }.
     */
    static AgentArgs parse(String args) {
        Integer port = null;
        String host = DEFAULT_HOST;
        String app = DEFAULT_APP;
        Set<String> seen = new HashSet<>();
        for (String pair : args == null || args.isBlank() ? new String[0] : args.split(",", -1)) {
            int eq = pair.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("'" + pair + "' is not key=value");
            String key = pair.substring(0, eq).trim();
            String value = pair.substring(eq + 1).trim();
            if (!seen.add(key)) throw new IllegalArgumentException(key + " is given twice");
            switch (key) {
                case "port" -> port = port(value);
                case "host" -> host = nonEmpty(key, value);
                case "app" -> app = nonEmpty(key, value);
                default -> throw new IllegalArgumentException("unknown argument '" + key + "' (port, host and app are known)");
            }
        }
        if (port == null) throw new IllegalArgumentException("port is required (port=0 for any free port)");
        return new AgentArgs(port, host, app);
    }

    private static int port(String value) {
        int port;
        try {
            port = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port must be a number 0..65535, not '" + value + "'");
        }
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port must be 0..65535, not " + port);
        return port;
    }

    private static String nonEmpty(String key, String value) {
        if (value.isEmpty()) throw new IllegalArgumentException(key + " must not be empty");
        return value;
    }
}
