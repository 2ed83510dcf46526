package lab.app;

import lab.common.SlowClientContract;

/** The slow-client contract (which threads a slow upload or download holds) for this module's apps. */
class SlowClientTest extends SlowClientContract {

    SlowClientTest() {
        super(App.APPS, App::endpoint, Bodies.NON_BLOCKING);
    }
}
