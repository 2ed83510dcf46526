package lab.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Who may change this JVM's state through the admin port, and where a profile may be written
 * (issue 40). The admin port listens on the app's address (127.0.0.1 on one box, the app host's
 * with HOSTS), where other users and hosts reach it too: every call that changes something
 * ({@code POST /pool}, {@code /stats/reset}, {@code /profile/*}) must carry
 * {@code Authorization: Bearer <token>}, the token the bench made for its run and gave this JVM in
 * its environment ({@value #TOKEN_ENV}: never on the command line, which every user sees in ps).
 *
 * <p>Started without one (by hand), the JVM makes a random token of its own that it tells no one:
 * no state-changing call can then be made from outside, and the 401 says how to get one (start
 * the JVM with {@value #TOKEN_ENV} set). In-process callers (tests) ask {@link #token()}.
 *
 * <p>A profile is written only under {@value #PROFILE_DIR_ENV} (the bench's run directory),
 * compared as canonical paths: a {@code ..} or a symlink out of it is refused. Unset: no profile.
 *
 * <p>Two admin ports ask it: lab-common's AdminServer (the lab's own apps) and the lab's Java agent
 * ({@link AgentServer}, which never profiles). Both read the same environment, so a lab app run
 * with the agent takes one token on both ports.
 */
public final class AdminAccess {

    public static final String TOKEN_ENV = "LAB_ADMIN_TOKEN";
    public static final String PROFILE_DIR_ENV = "LAB_PROFILE_DIR";

    /** A refused call: 403 with this message, nothing changed. */
    public static final class Forbidden extends Exception {
        private static final long serialVersionUID = 1L;

        Forbidden(String message) {
            super(message);
        }
    }

    private final String token;
    private final boolean given;
    private final Path profileRoot;

    private AdminAccess(String token, boolean given, Path profileRoot) {
        this.token = token;
        this.given = given;
        this.profileRoot = profileRoot;
    }

    /** From this JVM's environment: {@value #TOKEN_ENV} and {@value #PROFILE_DIR_ENV}. */
    public static AdminAccess fromEnvironment() {
        return of(System.getenv(TOKEN_ENV), System.getenv(PROFILE_DIR_ENV));
    }

    /** {@code token}: null or empty for a random one; {@code profileRoot}: an absolute path, or null for no profile. */
    public static AdminAccess of(String token, String profileRoot) {
        boolean given = token != null && !token.isEmpty();
        Path root = null;
        if (profileRoot != null && !profileRoot.isEmpty()) {
            try {
                root = Path.of(profileRoot);
            } catch (InvalidPathException e) {
                root = null;
            }
            if (root != null && !root.isAbsolute()) root = null;
        }
        return new AdminAccess(given ? token : randomToken(), given, root);
    }

    private static String randomToken() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The token a state-changing call must carry (for in-process callers: tests). */
    public String token() {
        return token;
    }

    /** True when {@code authorization} (the header's value, or null) is {@code Bearer <token>}; compared in constant time. */
    public boolean allows(String authorization) {
        if (authorization == null) return false;
        byte[] expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(expected, authorization.trim().getBytes(StandardCharsets.UTF_8));
    }

    /** What a 401 says. */
    public String refusal() {
        return given ? "this call changes the JVM's state: it needs the header Authorization: Bearer <" + TOKEN_ENV + ">"
                : "this call changes the JVM's state, and this JVM was started without " + TOKEN_ENV
                        + ": start it with " + TOKEN_ENV + "=<a secret> in its environment and send Authorization: Bearer <it>";
    }

    /** Throws {@link Forbidden} where no profile may be written (no {@value #PROFILE_DIR_ENV}). */
    public void checkProfiling() throws Forbidden {
        if (profileRoot == null) {
            throw new Forbidden("this JVM may write a profile nowhere: start it with " + PROFILE_DIR_ENV
                    + "=<an absolute directory> in its environment");
        }
    }

    /**
     * {@code dir} if it lies under the profile root, canonically: no {@code ..} out of it, and its
     * deepest existing directory, symlinks resolved, inside the root's real path (the rest is
     * created as plain directories). Checked before anything is created: a refusal changes nothing.
     */
    public Path profileDir(Path dir) throws Forbidden {
        checkProfiling();
        Path normal = dir.normalize();
        Path root = profileRoot.normalize();
        if (!normal.equals(dir) || !normal.startsWith(root)) {
            throw new Forbidden("dir must be a plain path under " + PROFILE_DIR_ENV + " (" + root + "), not " + dir);
        }
        if (!Files.exists(root)) return normal;      // nothing under it yet: stop creates it all, no link in it
        Path existing = normal;
        while (!Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) existing = existing.getParent();
        try {
            if (existing.toRealPath().startsWith(root.toRealPath())) return normal;
        } catch (IOException e) {
            // a dangling link: refused like one that leads out
        }
        throw new Forbidden("dir " + dir + " leads out of " + PROFILE_DIR_ENV + " (" + root + ") through a link");
    }

    /** Where the token came from, as a log line may say it: never the token itself. */
    public String tokenOrigin() {
        return given ? "from " + TOKEN_ENV : "random, told to no one";
    }

    @Override
    public String toString() {
        return "AdminAccess[token " + tokenOrigin() + ", profiles under "
                + (profileRoot == null ? "nowhere" : profileRoot) + "]";
    }
}
