package lab.common.outbound;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

import lab.common.config.LabConfig;
import lab.common.db.JdbcOutbound;
import lab.common.db.R2dbcOutbound;

/**
 * One outbound HTTP client ({@code --client}) — or, with {@code --backend postgres}, one database
 * driver and its pool ({@link JdbcOutbound}, {@link R2dbcOutbound}) — behind {@link Remote}: its blocking and async APIs
 * for the servlet models, its limits for the {@code lab:} line, and its shutdown by a deadline.
 * Spring's adapters on it (for MVC and WebFlux) are in {@link Clients}, so that nothing here
 * needs Spring (nio-servlet has none). The apps only ever see Remote, so a model class does not
 * change with the client.
 */
public interface Outbound {

    /**
     * The pool size and pending-acquire queue when {@code --client-max-connections} is absent (0):
     * more than the lab's largest load (the sweep's 10,000 connections make at most 10,000 calls at
     * once), so the pool never caps a result unless asked to. Reactor Netty's named pool would
     * otherwise default to 16 connections and 32 pending, {@code WebClient.create()}'s shared one to
     * 500, Jetty's client to 64 per destination and 1,024 queued.
     */
    int UNCAPPED = 10_000;

    /** {@code --client-max-connections N}, or {@link #UNCAPPED} when absent. */
    static int poolSize(LabConfig config) {
        return config.clientMaxConnections() > 0 ? config.clientMaxConnections() : UNCAPPED;
    }

    /** How the pool size is printed: a cap is a deliberate choice, and says so. */
    static String describePool(LabConfig config) {
        return config.clientMaxConnections() > 0
                ? config.clientMaxConnections() + " (capped on purpose: --client-max-connections)"
                : UNCAPPED + " (no cap: more than any load the lab runs)";
    }

    /** Blocking: the calling thread waits for the remote's body (200), or throws. */
    String call(Integer ms) throws IOException, InterruptedException;

    /** Non-blocking: completes on one of the client's own threads ({@code clientThreads} in /stats). */
    CompletableFuture<String> callAsync(Integer ms);

    /** Every limit of the client, for the {@code lab:} line. */
    String describe();

    /**
     * On {@code --container netty}: the {@code LoopResources} this outbound already runs on, which
     * the server must run on too (shared); null otherwise. Typed Object: see {@link Remote#nettyServerLoops}.
     */
    default Object serverLoops() {
        return null;
    }

    /** See {@link Remote#close(long)}. */
    Remote.Closed close(long deadlineNanos);
}
