package lab.app;

import java.util.List;

import lab.common.WorkContract;

/** {@code --work} on the coroutine fan-outs: the dispatcher's thread the coroutine goes on on, once the N calls are done. */
class WorkTest extends WorkContract {

    WorkTest() {
        super(App::endpoint, List.of(
                Cell.fanout("fanout-coroutines-blocking", "jetty", Where.NAMED).onThreadsNamed("fanout-"),
                Cell.fanout("fanout-coroutines-suspending", "tomcat", Where.NAMED).onThreadsNamed("fanout-"),
                Cell.fanout("fanout-flow-suspending", "jetty", Where.NAMED).onThreadsNamed("fanout-")));
    }
}
