package lab.app;

import java.util.List;

import lab.common.Endpoint;
import lab.common.Launcher;
import lab.common.SpringMvc;
import lab.common.config.LabConfig;
import lab.common.outbound.Remote;

/**
 * Servlet 3.0 async: the container thread calls {@code startAsync()}, starts a non-blocking
 * remote call and goes back to the pool; the client's callback completes the response later.
 * The request stays open but holds no thread, so one container thread serves as many requests
 * as there are connections. It only works because the <em>waiting</em> holds no thread either:
 * handing a blocking call to another pool would just move the thread.
 *
 * <pre>
 * HOW TO RUN
 *   java -jar remote-sleep/target/remote-sleep.jar --port 9000 &amp;
 *   java -jar async-servlet/target/async-servlet.jar --app async-servlet --container tomcat --threads 1 \
 *        --port 8080 --admin-port 8081 --remote http://127.0.0.1:9000
 *   wrk -t10 -c100 -d10s --timeout 30s http://127.0.0.1:8080/call
 * EXPECT about the measured ceiling (~90 req/s for wrk -d10s, see docs/traps.md #14) and
 * handlerThreads = 1 name in /stats.
 * </pre>
 */
public final class App {

    static final List<String> APPS = List.of("async-servlet", "async-mvc");

    public static void main(String[] args) throws Exception {
        Launcher.main(args, APPS, App::endpoint);
    }

    static Endpoint endpoint(LabConfig config, Remote remote) {
        return switch (config.app()) {
            case "async-servlet" -> Endpoint.call(new CallServlet(remote));
            case "async-mvc" -> SpringMvc.dispatcher(remote, CallController.class);
            default -> throw new IllegalArgumentException("unknown app " + config.app());
        };
    }
}
