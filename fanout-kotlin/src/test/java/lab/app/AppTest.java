package lab.app;

import java.util.List;

import lab.common.FanoutContract;

/**
 * The fan-out contract for the coroutine models (10 calls of 200 ms, 1 container thread; all at once
 * is <= 1.0 s, 0.70 s seen on a loaded CI box, still far from the >= 1.8 s of 10 in turn): with
 * blocking calls the dispatcher's K threads decide the time, with suspending calls they do not.
 */
class AppTest extends FanoutContract {

    AppTest() {
        super(App.APPS, App::endpoint, List.of(
                new Case("fanout-coroutines-blocking", 10, 16, 0, 1.0),
                new Case("fanout-coroutines-blocking", 1, 16, 1.8, 10),
                new Case("fanout-coroutines-suspending", 1, 16, 0, 1.0),
                new Case("fanout-flow-blocking", 10, 5, 0.35, 1.2),
                new Case("fanout-flow-suspending", 1, 5, 0.35, 1.2)));
    }
}
