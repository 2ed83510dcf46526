package lab.app;

import java.util.List;

import lab.common.Endpoint;
import lab.common.Launcher;
import lab.common.config.LabConfig;
import lab.common.outbound.Remote;

/**
 * Servlet 3.1 non-blocking I/O: like 3.0 async, and in addition the request body is read with a
 * {@code ReadListener} and the answer written with a {@code WriteListener}, so no thread ever
 * blocks on a slow client either. With tiny bodies and fast clients it looks like 3.0 async;
 * it matters when uploads are big or clients slow.
 *
 * <pre>
 * HOW TO RUN
 *   java -jar remote-sleep/target/remote-sleep.jar --port 9000 &amp;
 *   java -jar nio-servlet/target/nio-servlet.jar --container jetty --threads 1 \
 *        --port 8080 --admin-port 8081 --remote http://127.0.0.1:9000
 *   wrk -t10 -c100 -d10s --timeout 30s http://127.0.0.1:8080/call
 * EXPECT about the measured ceiling (~90 req/s for wrk -d10s) and handlerThreads = 1 name.
 * </pre>
 */
public final class App {

    static final List<String> APPS = List.of("nio-servlet");

    public static void main(String[] args) throws Exception {
        Launcher.main(args, APPS, App::endpoint);
    }

    static Endpoint endpoint(LabConfig config, Remote remote) {
        return switch (config.app()) {
            case "nio-servlet" -> Endpoint.call(new CallServlet(remote));
            default -> throw new IllegalArgumentException("unknown app " + config.app());
        };
    }
}
