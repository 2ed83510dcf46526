package lab.common.config;

/**
 * {@code --work SPEC}: what each request does of its own after the remote call returns
 * ({@link WorkSpec}); none by default. One of {@link LabConfig#parse}'s small parsers: every app
 * takes it.
 */
final class WorkFlags {

    WorkSpec work = WorkSpec.NONE;

    /** Reads {@code flag} if it is this one (a bad value throws); false if it is not. */
    boolean take(String flag, String value) {
        if (!flag.equals("--work")) return false;
        work = WorkSpec.parse(value);
        return true;
    }
}
