package lab.app;

import lab.common.DbContract;

/** The shared contract for --backend postgres (issue 16): the model on PostgreSQL for this module's apps. */
class DbTest extends DbContract {

    DbTest() {
        super(App.APPS, App::endpoint, false);
    }
}
