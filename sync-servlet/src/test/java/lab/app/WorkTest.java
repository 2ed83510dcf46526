package lab.app;

import java.util.List;

import lab.common.WorkContract;

/**
 * {@code --work} on thread per request: the request thread that waited for the remote runs it,
 * on platform threads, on a virtual thread (v1), and after a JDBC query.
 */
class WorkTest extends WorkContract {

    WorkTest() {
        super(App::endpoint, List.of(
                Cell.call("sync-servlet", "tomcat", Where.HANDLER),
                Cell.call("sync-mvc", "jetty", Where.HANDLER),
                Cell.call("sync-servlet", "jetty", Where.HANDLER).onVirtualThreads(),
                Cell.call("sync-mvc", "tomcat", Where.HANDLER).onPostgres("jdbc")));
    }
}
