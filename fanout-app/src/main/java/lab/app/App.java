package lab.app;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

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
 * One request, many remote calls: {@code GET /fanout?n=N&ms=M} calls the remote N times and
 * answers how many succeeded and how long it took inside the app. What the N calls wait on is
 * the model, and it decides the wall time:
 *
 * <ul>
 *   <li>{@code fanout-sequential}: the request thread makes them one after another: N x M.</li>
 *   <li>{@code fanout-pool}: blocking calls on K platform threads ({@code --fanout-pool K}):
 *       ceil(N/K) x M. K = 1 is sequential again.</li>
 *   <li>{@code fanout-common-pool}: the same on {@code ForkJoinPool.commonPool()} with the JVM's own
 *       parallelism (cores - 1), the pool a bare {@code supplyAsync} picks. The trap row.</li>
 *   <li>{@code fanout-virtual}: blocking code, one virtual thread per call: ~M (JDK 21+).</li>
 *   <li>{@code fanout-async}: N {@code sendAsync} at once, no thread waits: ~M.</li>
 *   <li>{@code fanout-webflux}: {@code Flux.flatMap} at most C at once ({@code --fanout-concurrency C}):
 *       ceil(N/C) x M.</li>
 *   <li>{@code fanout-fire-and-forget}: {@code runAsync} and answer without waiting: "fast", because
 *       the timer stopped before the work ran. The next answer says when the work really ended.</li>
 * </ul>
 *
 * <pre>
 * HOW TO RUN
 *   java -jar remote-sleep/target/remote-sleep.jar --port 9000 &amp;
 *   java -jar fanout-app/target/fanout-app.jar --app fanout-pool --fanout-pool 10 --container tomcat \
 *        --threads 1 --port 8080 --admin-port 8081 --remote http://127.0.0.1:9000
 *   curl 'http://127.0.0.1:8080/fanout?n=10&amp;ms=1000'
 * EXPECT "ok=10 failed=0 wall_ms=10xx" with --fanout-pool 10, ~10000 with --fanout-pool 1.
 * </pre>
 */
public final class App {

    static final List<String> APPS = List.of("fanout-sequential", "fanout-pool", "fanout-common-pool",
            "fanout-virtual", "fanout-async", "fanout-webflux", "fanout-fire-and-forget");

    public static void main(String[] args) throws Exception {
        String app = appOf(args);
        if ("fanout-common-pool".equals(app)) {
            // Launcher.main raises the common pool to >= 2 threads (trap 9), which would hide this
            // row's point. Writing down the JVM's own default keeps the guard away. The price, on
            // JDK 17 with parallelism 1: CompletableFuture's default async pool (where the JDK
            // client completes) is a new thread per task; peakThreads in /stats shows it.
            System.setProperty("java.util.concurrent.ForkJoinPool.common.parallelism", String.valueOf(jvmDefaultParallelism()));
        }
        if ("fanout-virtual".equals(app) && Runtime.version().feature() < 21) {
            System.err.println("ERROR: virtual threads need JDK 21+ (running " + Runtime.version().feature() + ")");
            System.err.println(LabConfig.USAGE + "\n       apps in this jar: " + String.join(", ", APPS));
            System.exit(2);
        }
        Launcher.main(args, APPS, App::endpoint);
    }

    static Endpoint endpoint(LabConfig config, Remote remote) {
        int k = config.fanoutPool();
        return switch (config.app()) {
            case "fanout-sequential" -> blocking(config, remote, Runnable::run,
                    "the request thread makes the N calls one after another (N x M)");
            case "fanout-pool" -> blocking(config, remote, pool(k),
                    "pool=" + k + " platform threads (fanout-N), unbounded queue; the request thread waits for all (ceil(N/K) x M)");
            case "fanout-common-pool" -> blocking(config, remote, ForkJoinPool.commonPool(),
                    "ForkJoinPool.commonPool() parallelism=" + ForkJoinPool.getCommonPoolParallelism()
                            + " (the JVM's own default here: cores - 1 = " + jvmDefaultParallelism() + ")");
            case "fanout-virtual" -> blocking(config, remote, virtualThreadPerTask(),
                    "one virtual thread per call (fanout-virtual-N) " + carriers());
            case "fanout-async" -> new Endpoint(new AsyncFanoutServlet(remote, config.app()), "/fanout", "/fanout",
                    "fanout: N sendAsync at once, no thread waits (~M)");
            case "fanout-webflux" -> webflux(config, remote);
            case "fanout-fire-and-forget" -> new Endpoint(new FireAndForgetServlet(remote, config.app(), pool(k)), "/fanout", "/fanout",
                    "fanout: N runAsync on pool=" + k + " platform threads (fanout-N), NOT waited for: wall_ms times the hand-off only");
            default -> throw new IllegalArgumentException("unknown app " + config.app());
        };
    }

    private static Endpoint blocking(LabConfig config, Remote remote, Executor executor, String limits) {
        return new Endpoint(new BlockingFanoutServlet(remote, config.app(), executor), "/fanout", "/fanout", "fanout: " + limits);
    }

    @Configuration
    @EnableWebFlux
    static class WebConfig {
    }

    private static Endpoint webflux(LabConfig config, Remote remote) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.register(WebConfig.class, FanoutController.class);
        context.registerBean(Remote.class, () -> remote);
        context.registerBean(LabConfig.class, () -> config);
        context.refresh();
        HttpHandler handler = WebHttpHandlerBuilder.applicationContext(context).build();
        return new Endpoint(config.container().equals("tomcat") ? new TomcatHttpHandlerAdapter(handler) : new ServletHttpHandlerAdapter(handler),
                "/*", "/fanout", "fanout: Flux.flatMap concurrency=" + config.fanoutConcurrency()
                        + " (Reactor's own default: 256) over WebClient on the shared client (ceil(N/C) x M)");
    }

    /** K named platform threads, daemon so a forgotten pool never keeps a JVM alive. */
    static ExecutorService pool(int threads) {
        AtomicInteger n = new AtomicInteger();
        return Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "fanout-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** What ForkJoinPool picks when nobody sets its parallelism: one less than the cores, at least 1. */
    static int jvmDefaultParallelism() {
        return Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
    }

    /**
     * {@code Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("fanout-virtual-", 1).factory())}
     * by reflection: the build is {@code --release 17}.
     */
    static ExecutorService virtualThreadPerTask() {
        try {
            Class<?> builder = Class.forName("java.lang.Thread$Builder");
            Object named = builder.getMethod("name", String.class, long.class)
                    .invoke(Thread.class.getMethod("ofVirtual").invoke(null), "fanout-virtual-", 1L);
            ThreadFactory factory = (ThreadFactory) builder.getMethod("factory").invoke(named);
            return (ExecutorService) Executors.class.getMethod("newThreadPerTaskExecutor", ThreadFactory.class).invoke(null, factory);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("virtual threads need JDK 21+ (running " + Runtime.version().feature() + ")", e);
        }
    }

    /** The carrier threads are the real N of virtual threads (trap 17). */
    private static String carriers() {
        String parallelism = System.getProperty("jdk.virtualThreadScheduler.parallelism",
                String.valueOf(Runtime.getRuntime().availableProcessors()));
        String max = System.getProperty("jdk.virtualThreadScheduler.maxPoolSize",
                String.valueOf(Math.max(Integer.parseInt(parallelism), 256)));
        return "carriers: parallelism=" + parallelism + " maxPoolSize=" + max + " (~M)";
    }

    private static String appOf(String[] args) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--app")) return args[i + 1];
        }
        return null;
    }
}
