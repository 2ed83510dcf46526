package lab.app;

import org.junit.jupiter.api.Test;

import lab.common.CatalogContract;

/** catalog.tsv (what the bench sweeps) lists exactly this module's apps, on the right containers. */
class CatalogTest {

    @Test
    void catalogMatchesThisModule() throws Exception {
        CatalogContract.check("nio-servlet", App.APPS);
    }
}
