package lab.app;

import java.util.List;

import lab.common.WorkContract;

/** {@code --work} on Servlet 3.1: the container thread {@code start()} hands the answer to runs it. */
class WorkTest extends WorkContract {

    WorkTest() {
        super(App::endpoint, List.of(
                Cell.call("nio-servlet", "tomcat", Where.HANDLER),
                Cell.call("nio-servlet", "jetty", Where.HANDLER)));
    }
}
