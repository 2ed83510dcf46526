package lab.app;

import java.util.List;

import lab.common.WorkContract;

/**
 * {@code --work} on the Java fan-outs, once the N calls are done: the request thread where it
 * waited for them (sequential, a pool, virtual threads per call), the last call's completion
 * thread where nothing waited (sendAsync, WebClient), the pool's thread that ended the last call
 * where nobody waits (fire-and-forget).
 */
class WorkTest extends WorkContract {

    WorkTest() {
        super(App::endpoint, List.of(
                Cell.fanout("fanout-sequential", "jetty", Where.HANDLER),
                Cell.fanout("fanout-pool", "tomcat", Where.HANDLER),
                Cell.fanout("fanout-virtual", "jetty", Where.HANDLER),
                Cell.fanout("fanout-async", "tomcat", Where.CLIENT),
                Cell.fanout("fanout-webflux", "jetty", Where.CLIENT),
                Cell.fanout("fanout-fire-and-forget", "jetty", Where.NAMED).onThreadsNamed("fanout-")));
    }
}
