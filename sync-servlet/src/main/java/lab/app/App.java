package lab.app;

import java.util.List;

import lab.common.Endpoint;
import lab.common.Launcher;
import lab.common.SpringMvc;
import lab.common.config.LabConfig;
import lab.common.outbound.Remote;

/**
 * Thread per request: the container thread that takes the request waits for the remote too.
 * With a 1 s remote, in-flight requests can never exceed the pool, so {@code --threads 1} serves
 * about 1 request per second whatever the load, and {@code --threads 200} reaches the
 * 100-connection ceiling only because 200 threads are parked doing nothing.
 *
 * <pre>
 * HOW TO RUN
 *   java -jar remote-sleep/target/remote-sleep.jar --port 9000 &amp;
 *   java -jar sync-servlet/target/sync-servlet.jar --app sync-servlet --container tomcat --threads 1 \
 *        --port 8080 --admin-port 8081 --remote http://127.0.0.1:9000
 *   wrk -t10 -c100 -d10s --timeout 30s http://127.0.0.1:8080/call
 * EXPECT about 1 req/s (10 requests in 10 s) and handlerThreads = 1 name in /stats.
 * </pre>
 */
public final class App {

    static final List<String> APPS = List.of("sync-servlet", "sync-mvc");

    public static void main(String[] args) throws Exception {
        Launcher.main(args, APPS, App::endpoint);
    }

    static Endpoint endpoint(LabConfig config, Remote remote) {
        return switch (config.app()) {
            case "sync-servlet" -> Endpoint.call(new CallServlet(remote));
            case "sync-mvc" -> SpringMvc.dispatcher(remote, CallController.class);
            default -> throw new IllegalArgumentException("unknown app " + config.app());
        };
    }
}
