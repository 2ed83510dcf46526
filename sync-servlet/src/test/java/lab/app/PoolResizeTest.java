package lab.app;

import lab.common.PoolResizeContract;

/** {@code POST /pool}: a container feature, not a model one, so only this thread-per-request module runs it. */
class PoolResizeTest extends PoolResizeContract {

    PoolResizeTest() {
        super(App::endpoint, "sync-servlet");
    }
}
