package lab.app;

import java.util.List;

import lab.common.WorkContract;

/**
 * {@code --work} on Servlet 3.0 async and MVC's futures: the thread that completes the remote call
 * (client-N, or r2dbc-pg-nio-N after an R2DBC query) runs it, not the container's.
 */
class WorkTest extends WorkContract {

    WorkTest() {
        super(App::endpoint, List.of(
                Cell.call("async-servlet", "jetty", Where.CLIENT),
                Cell.call("async-mvc", "tomcat", Where.CLIENT),
                Cell.call("async-servlet", "tomcat", Where.CLIENT).onPostgres("r2dbc")));
    }
}
