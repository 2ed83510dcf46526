package lab.app;

import java.util.List;

import lab.common.FanoutContract;

/**
 * The fan-out contract for the coroutine models (10 calls of 200 ms, 1 container thread; the
 * rounds each model takes, measured against one call as FanoutContract says): with blocking calls
 * the dispatcher's K threads decide the time, with suspending calls they do not.
 */
class AppTest extends FanoutContract {

    AppTest() {
        super(App.APPS, App::endpoint, List.of(
                new Case("fanout-coroutines-blocking", 10, 16, 1),
                new Case("fanout-coroutines-blocking", 1, 16, 10),
                new Case("fanout-coroutines-suspending", 1, 16, 1),
                new Case("fanout-flow-blocking", 10, 5, 2),
                new Case("fanout-flow-suspending", 1, 5, 2)));
    }
}
