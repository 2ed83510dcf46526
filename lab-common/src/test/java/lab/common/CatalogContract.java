package lab.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import lab.common.config.DbConfig;
import lab.common.config.LabConfig;

/**
 * {@code catalog.tsv} (the repository root: one row per app, read by the bench's Python and, through
 * the copy in lab-common's jar, by {@link lab.common.config.Catalog}) must say what the Java says, or the
 * bench would sweep cells that do not exist or skip ones that do: a module's catalog rows are exactly its
 * {@code App.APPS}, each row's containers are the servlet containers ({@link LabConfig#CONTAINERS}) and
 * perhaps {@code netty}, and the copy the apps read is this file (a build older than the file would drift).
 * The README's module table must name the same apps: docs that drift are worse than none. Each app module
 * calls {@link #check} from a tiny CatalogTest.
 */
public final class CatalogContract {

    /** Surefire runs a module's tests in its basedir, so the root is one up. */
    static final Path CATALOG = Path.of("..", "catalog.tsv");

    /** One row, by the header's column names. */
    record Row(int line, Map<String, String> fields) {
        String get(String column) {
            return fields.get(column);
        }

        List<String> containers() {
            return Arrays.stream(get("containers").split(",", -1)).map(String::trim).toList();
        }
    }

    private CatalogContract() {
    }

    /**
     * @param module the Maven module (its directory name) whose apps these are
     * @param apps   that module's {@code App.APPS}
     */
    public static void check(String module, List<String> apps) throws IOException {
        String readme = Files.readString(CATALOG.resolveSibling("README.md"));
        for (String app : apps) {
            assertTrue(readme.contains("| `" + module + "` | `" + app + "` |"), "README.md has no row for " + module + " / " + app);
        }
        List<Row> rows = read(CATALOG);
        Map<String, Row> byApp = new LinkedHashMap<>();
        for (Row row : rows) {
            Row earlier = byApp.put(row.get("app"), row);
            if (earlier != null) fail(where(row) + "app " + row.get("app") + " again (first on line " + earlier.line() + ")");
            // A row whose module is no module here would escape every module's check.
            assertTrue(Files.isRegularFile(CATALOG.resolveSibling(row.get("module")).resolve("pom.xml")),
                    where(row) + "module " + row.get("module") + " is not a module of this repository");
        }

        Set<String> listed = new TreeSet<>();
        rows.stream().filter(row -> row.get("module").equals(module)).forEach(row -> listed.add(row.get("app")));
        assertEquals(new TreeSet<>(apps), listed, CATALOG.toAbsolutePath().normalize()
                + ": the apps whose module is " + module + " must be that module's App.APPS");

        for (String app : apps) {
            Row row = byApp.get(app);
            List<String> containers = row.containers();
            for (String container : containers) {
                assertTrue(LabConfig.CONTAINERS.contains(container) || container.equals(LabConfig.NETTY),
                        where(row) + app + " lists an unknown container '" + container + "'");
            }
            assertTrue(containers.containsAll(LabConfig.CONTAINERS),
                    where(row) + app + " must run on every servlet container " + LabConfig.CONTAINERS + ", lists " + containers);
        }
        try (var copy = lab.common.config.Catalog.class.getResourceAsStream("catalog.tsv")) {
            assertNotNull(copy, "no catalog.tsv in lab-common's jar");
            assertEquals(Files.readString(CATALOG), new String(copy.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8),
                    "lab-common's copy of catalog.tsv is not the repository's: rebuild lab-common (./mvnw install)");
        }
        for (String app : apps) {
            // The bench runs an app once per DB driver listed here; the app refuses any other.
            List<String> drivers = DbConfig.driversFor(app);
            assertEquals(drivers.isEmpty() ? "none" : String.join(",", drivers), byApp.get(app).get("db"),
                    where(byApp.get(app)) + app + ": the db column must be DbConfig.driversFor(app)");
        }
    }

    /**
     * Tab-separated; lines starting with {@code #} are comments; the first other line names the
     * columns. A row with another number of fields is an error, not a guess.
     */
    static List<Row> read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            fail("no catalog at " + file.toAbsolutePath().normalize() + " (tests run in the module's directory,"
                    + " the catalog is catalog.tsv at the repository root)");
        }
        List<String> header = null;
        List<Row> rows = new ArrayList<>();
        List<String> lines = Files.readAllLines(file);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank() || line.startsWith("#")) continue;
            List<String> fields = List.of(line.split("\t", -1));
            if (header == null) {
                header = fields;
                for (String column : List.of("app", "module", "containers")) {
                    if (!header.contains(column)) fail(file.toAbsolutePath().normalize() + ":" + (i + 1) + ": no column " + column + " in " + header);
                }
                continue;
            }
            if (fields.size() != header.size()) {
                fail(file.toAbsolutePath().normalize() + ":" + (i + 1) + ": " + fields.size() + " tab-separated fields, the header has "
                        + header.size() + " " + header);
            }
            Map<String, String> row = new LinkedHashMap<>();
            for (int c = 0; c < header.size(); c++) row.put(header.get(c), fields.get(c).trim());
            rows.add(new Row(i + 1, row));
        }
        if (header == null) fail(file.toAbsolutePath().normalize() + ": no header line");
        return rows;
    }

    private static String where(Row row) {
        return CATALOG.toAbsolutePath().normalize() + ":" + row.line() + ": ";
    }
}
