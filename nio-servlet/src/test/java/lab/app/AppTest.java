package lab.app;

import lab.common.AppContract;

/** The shared contract (answers, errors, and the model with one thread) for this module's apps. */
class AppTest extends AppContract {

    AppTest() {
        super(App.APPS, App::endpoint, false);
    }
}
