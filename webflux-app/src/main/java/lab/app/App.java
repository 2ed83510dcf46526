package lab.app;

import java.util.List;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ServletHttpHandlerAdapter;
import org.springframework.http.server.reactive.TomcatHttpHandlerAdapter;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;

import lab.common.Endpoint;
import lab.common.Launcher;
import lab.common.config.LabConfig;
import lab.common.outbound.Remote;

/**
 * Spring WebFlux, non-blocking end to end: the controller returns a {@code Mono} from a
 * WebClient call, and Spring's Servlet 3.1 adapter bridges it to the container with
 * {@code startAsync()} and Read/WriteListeners. On its native runtime ({@code --container netty})
 * there is no servlet layer: Reactor Netty's N event loops run the handler directly.
 *
 * <pre>
 * HOW TO RUN
 *   java -jar remote-sleep/target/remote-sleep.jar --port 9000 &amp;
 *   java -jar webflux-app/target/webflux-app.jar --container tomcat --threads 1 \
 *        --port 8080 --admin-port 8081 --remote http://127.0.0.1:9000
 *   wrk -t10 -c100 -d10s --timeout 30s http://127.0.0.1:8080/call
 * EXPECT about the measured ceiling (~90 req/s for wrk -d10s) and handlerThreads = 1 name;
 * the same with --container netty --threads 1 (handlerThreads = netty-nio-1).
 * </pre>
 */
public final class App {

    static final List<String> APPS = List.of("webflux");

    public static void main(String[] args) throws Exception {
        Launcher.main(args, APPS, App::endpoint);
    }

    @Configuration
    @EnableWebFlux
    static class WebConfig {
    }

    static Endpoint endpoint(LabConfig config, Remote remote) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.register(WebConfig.class, CallController.class);
        context.registerBean(Remote.class, () -> remote);
        context.refresh();
        HttpHandler handler = WebHttpHandlerBuilder.applicationContext(context).build();
        // Tomcat's adapter reads and writes Tomcat's buffers directly; both are the Servlet 3.1
        // path. Netty runs the handler itself, on its event loops (ReactorHttpHandlerAdapter).
        return switch (config.container()) {
            case "tomcat" -> Endpoint.everything(new TomcatHttpHandlerAdapter(handler));
            case "jetty" -> Endpoint.everything(new ServletHttpHandlerAdapter(handler));
            case LabConfig.NETTY -> Endpoint.reactive(handler);
            default -> throw new IllegalArgumentException("unknown container " + config.container());
        };
    }
}
