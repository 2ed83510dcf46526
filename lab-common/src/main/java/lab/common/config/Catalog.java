package lab.common.config;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The lab's apps as {@code catalog.tsv} says, the one list of them (the repository's root; lab-common's
 * build puts a copy in its jar, and CatalogContract checks that copy against the file): which containers,
 * outbound clients and database drivers each app takes. The flags' checks and the usage read it, so a new
 * model is a line there and its module, not an edit here.
 */
public final class Catalog {

    /** One app's line, by the header's column names. */
    public record App(String name, String family, List<String> containers, List<String> clients, List<String> dbs) {
    }

    /** The copy in this jar (lab-common/pom.xml puts it beside this class). */
    static final String RESOURCE = "catalog.tsv";
    private static final Map<String, App> APPS = read();

    private Catalog() {
    }

    /** Every app, in the catalog's order. */
    public static Map<String, App> apps() {
        return APPS;
    }

    /** The apps that run on a container, eg, {@code netty}: those with no servlet API. */
    public static List<String> appsOn(String container) {
        return APPS.values().stream().filter(a -> a.containers().contains(container)).map(App::name).toList();
    }

    /** The apps that take a database driver. */
    public static List<String> appsWithDb(String driver) {
        return APPS.values().stream().filter(a -> a.dbs().contains(driver)).map(App::name).toList();
    }

    /** An app's line; an app the catalog does not list takes nothing (no client, no database). */
    public static App app(String name) {
        return APPS.getOrDefault(name, new App(name, "", List.of(), List.of(), List.of()));
    }

    static Map<String, App> read() {
        try (InputStream in = Catalog.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw new IllegalStateException(RESOURCE + " is not in lab-common's jar (lab-common/pom.xml copies it)");
            return parse(new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).lines().toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Tab-separated; {@code #} starts a comment line; the first other line names the columns. */
    static Map<String, App> parse(List<String> lines) {
        Map<String, App> apps = new LinkedHashMap<>();
        List<String> header = null;
        for (String line : lines) {
            if (line.isBlank() || line.startsWith("#")) continue;
            List<String> fields = List.of(line.split("\t", -1));
            if (header == null) {
                header = fields;
                continue;
            }
            Map<String, String> row = new LinkedHashMap<>();
            for (int c = 0; c < header.size() && c < fields.size(); c++) row.put(header.get(c), fields.get(c).trim());
            apps.put(row.get("app"), new App(row.get("app"), row.getOrDefault("family", ""), list(row.get("containers")),
                    list(row.get("clients")), list(row.get("db"))));
        }
        return Collections.unmodifiableMap(apps);
    }

    private static List<String> list(String column) {
        if (column == null || column.isEmpty() || column.equals("none")) return List.of();
        return Arrays.stream(column.split(",")).map(String::trim).toList();
    }
}
