package lab.app

import lab.common.Endpoint
import lab.common.Launcher
import lab.common.config.LabConfig
import lab.common.outbound.Remote

/**
 * One request, many remote calls, the way the Kotlin write-ups made them: coroutines on a
 * dispatcher of K threads (`--fanout-pool K`), two ways to fan out, two ways to call.
 *
 * - `fanout-coroutines-blocking`: `async { blocking call }` x N, `awaitAll()`. Each call holds a
 *   dispatcher thread for M ms: ceil(N/K) x M. This is why K mattered in the write-ups
 *   (10 threads: 1 s, 1 thread: 10 s).
 * - `fanout-coroutines-suspending`: the same with `sendAsync(...).await()`: the call suspends and
 *   gives its thread back, so K stops mattering: ~M even on 1 thread.
 * - `fanout-flow-blocking` / `fanout-flow-suspending`: `flatMapMerge(C)` (`--fanout-concurrency C`,
 *   Flow's default is 16): at most C calls at once, so ceil(N/C) x M when suspending, and
 *   ceil(N/min(C, K)) x M when blocking.
 *
 * A plain servlet (Servlet 3.0 async), not a Spring `suspend` controller: the coroutine starts on
 * the K-thread dispatcher and completes the `AsyncContext` itself, so the dispatcher is the only
 * pool in play and there is no Reactor bridge deciding where the coroutine resumes; the other
 * fan-out apps are servlets too, with the same method names.
 *
 * ```
 * HOW TO RUN
 *   java -jar remote-sleep/target/remote-sleep.jar --port 9000 &
 *   java -jar fanout-kotlin/target/fanout-kotlin.jar --app fanout-coroutines-blocking --fanout-pool 1 \
 *        --container tomcat --threads 1 --port 8080 --admin-port 8081 --remote http://127.0.0.1:9000
 *   curl 'http://127.0.0.1:8080/fanout?n=10&ms=1000'
 * EXPECT wall_ms ~10000 (1 thread, blocking); with --app fanout-coroutines-suspending ~1000.
 * ```
 */
object App {

    @JvmField
    val APPS: List<String> = listOf(
        "fanout-coroutines-blocking", "fanout-coroutines-suspending", "fanout-flow-blocking", "fanout-flow-suspending")

    @JvmStatic
    fun main(args: Array<String>) {
        Launcher.main(args, APPS, Endpoint.Factory(::endpoint))
    }

    @JvmStatic
    fun endpoint(config: LabConfig, remote: Remote): Endpoint {
        val k = config.fanoutPool()
        val c = config.fanoutConcurrency()
        val limits = when (config.app()) {
            "fanout-coroutines-blocking" -> "async/awaitAll, blocking calls: each holds a dispatcher thread (ceil(N/K) x M)"
            "fanout-coroutines-suspending" -> "async/awaitAll, suspending calls (sendAsync().await()): no thread waits (~M)"
            "fanout-flow-blocking" -> "flatMapMerge concurrency=$c, blocking calls (ceil(N/min(C,K)) x M)"
            "fanout-flow-suspending" -> "flatMapMerge concurrency=$c, suspending calls (ceil(N/C) x M)"
            else -> throw IllegalArgumentException("unknown app ${config.app()}")
        }
        return Endpoint(FanoutServlet(remote, config.app(), k, c), "/fanout", "/fanout",
            "fanout: coroutines on a dispatcher of K=$k threads (fanout-N); $limits")
    }
}
