package io.zlink.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The Java conformance runner (doc/conformance.md):
 *
 * <pre>
 *   runner [-v] MANIFEST [CASE-ID ...]   runs every case, or the ones named
 *   runner --check MANIFEST              checks the manifest against the runner
 *   runner --list MANIFEST               prints the manifest's ids
 * </pre>
 *
 * One "CASE id pass|fail|missing detail" line per case on stdout, in
 * manifest order; ERROR lines for manifest or registry problems; exit 0,
 * 1 (a case failed or is missing) or 2 (usage, manifest, registry). Each
 * case runs in a JVM of its own (this class again with --run-case), bounded
 * by 60 s x ZT_TIMEOUT_MULT; the case passes when that JVM prints its
 * completion line and exits 0. The cases use the binding's public API only.
 */
public final class Runner {
    private Runner() {}

    static final String DONE_MARK = "conformance: case completed: ";
    static final int CASE_SECONDS = 60;
    private static final Pattern ID = Pattern.compile("[A-Z]+-[0-9]+");
    private static int problems;

    /** Why a case is not implemented yet (the detail of its missing line). */
    static final Map<String, String> WHY_MISSING = Map.of();

    /** A case body: reads its parameters, throws on the first failed check. */
    interface Case {
        void run(JsonNode params) throws Exception;
    }

    /** The SC cases. */
    static Map<String, Case> registry0() {
        Map<String, Case> m = new LinkedHashMap<>();
        ScCases.register(m);
        ScDispatch.register(m);
        ScSubmit.register(m);
        ScRequest.register(m);
        ScJobs.register(m);
        ScRaw.register(m);
        return m;
    }

    /** The registry: case id -> body. */
    static Map<String, Case> registry() {
        Map<String, Case> m = registry0();
        JqCases.register(m);
        JqProfiles.register(m);
        JqFlow.register(m);
        JqPermits.register(m);
        JqMore.register(m);
        JqPressure.register(m);
        JqRaw.register(m);
        JqRotation.register(m);
        PlCases.register(m);
        XCases.register(m);
        return m;
    }

    private static void error(String text) {
        System.out.println("ERROR " + text);
        problems++;
    }

    private static boolean nonEmptyString(JsonNode n) {
        return n != null && n.isTextual() && !n.asText().isEmpty();
    }

    /** Loads and checks the manifest; null after ERROR lines. */
    static Map<String, JsonNode> load(String path) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(new File(path));
        } catch (IOException e) {
            error(path + ": " + e.getMessage().replace('\n', ' '));
            return null;
        }
        JsonNode cases = root == null ? null : root.get("cases");
        if (root == null || !root.isObject() || cases == null || !cases.isArray()) {
            error(path + ": the top level must be an object with a \"cases\" array");
            return null;
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext();) {
            String k = it.next();
            if (!k.equals("cases") && !k.equals("about"))
                error(path + ": unknown top-level member \"" + k + "\"");
        }
        Map<String, JsonNode> out = new LinkedHashMap<>();
        int i = 0;
        for (JsonNode c : cases) {
            i++;
            if (!c.isObject()) {
                error(path + ": case " + i + " is not an object");
                continue;
            }
            JsonNode id = c.get("id");
            if (!nonEmptyString(id) || !ID.matcher(id.asText()).matches()) {
                error(path + ": case " + i + " has no id of the form XX-00 (capitals, a dash, digits)");
                continue;
            }
            String cid = id.asText();
            if (!nonEmptyString(c.get("title")) || !nonEmptyString(c.get("seed")))
                error(path + ": case " + cid + " needs a non-empty \"title\" and \"seed\"");
            JsonNode params = c.get("params");
            if (params == null || !params.isObject())
                error(path + ": case " + cid + " needs a \"params\" object");
            JsonNode later = c.get("later");
            if (later != null) {
                if (!later.isArray() || later.size() == 0) {
                    error(path + ": case " + cid + ": \"later\" must be a non-empty array");
                } else {
                    int k = 0;
                    for (JsonNode e : later) {
                        k++;
                        if (!e.isObject() || e.size() != 2 || !nonEmptyString(e.get("part"))
                            || !nonEmptyString(e.get("needs")))
                            error(path + ": case " + cid + ": \"later\" entry " + k
                                  + " needs exactly a non-empty \"part\" and \"needs\"");
                    }
                }
            }
            JsonNode absent = c.get("absent");
            if (absent != null) {
                boolean ok = absent.isObject() && absent.size() > 0;
                for (JsonNode v : absent)
                    ok = ok && nonEmptyString(v);
                if (!ok)
                    error(path + ": case " + cid + ": \"absent\" must map languages to reasons");
            }
            for (Iterator<String> it = c.fieldNames(); it.hasNext();) {
                String k = it.next();
                if (!List.of("id", "title", "seed", "params", "later", "absent").contains(k))
                    error(path + ": case " + cid + " has an unknown member \"" + k + "\"");
            }
            if (out.containsKey(cid))
                error(path + ": duplicate case id " + cid);
            out.put(cid, c);
        }
        if (out.isEmpty() && problems == 0)
            error(path + ": the manifest lists no case");
        return problems == 0 ? out : null;
    }

    private static int usage() {
        System.err.println("usage: runner [-v] MANIFEST [CASE-ID ...]\n"
                           + "       runner --check MANIFEST\n"
                           + "       runner --list MANIFEST");
        return 2;
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        if (args.length == 3 && args[0].equals("--run-case"))
            return runCaseHere(args[1], args[2]);
        boolean verbose = false, check = false, list = false;
        int i = 0;
        for (; i < args.length && args[i].startsWith("-"); i++) {
            if (args[i].equals("-v"))
                verbose = true;
            else if (args[i].equals("--check"))
                check = true;
            else if (args[i].equals("--list"))
                list = true;
            else
                return usage();
        }
        if (i >= args.length || (check && list) || ((check || list) && args.length - i != 1))
            return usage();
        String path = args[i++];
        Map<String, JsonNode> manifest = load(path);
        if (manifest == null)
            return 2;
        if (list) {
            for (String id : manifest.keySet())
                System.out.println(id);
            return 0;
        }
        Map<String, Case> reg = registry();
        for (String id : reg.keySet()) {
            if (!manifest.containsKey(id))
                error("case " + id + " is implemented by the Java runner but not in the manifest");
        }
        List<String> named = new ArrayList<>();
        for (int k = i; k < args.length; k++) {
            if (!manifest.containsKey(args[k]))
                error("case " + args[k] + " is not in the manifest");
            named.add(args[k]);
        }
        int pass = 0, fail = 0, missing = 0;
        for (String id : manifest.keySet()) {
            if (!named.isEmpty() && !named.contains(id))
                continue;
            if (!reg.containsKey(id)) {
                System.out.println("CASE " + id + " missing " + WHY_MISSING.getOrDefault(id, "not implemented by the Java runner yet"));
                missing++;
                continue;
            }
            if (check)
                continue;
            String[] outcome = runCaseChild(id, path);
            boolean ok = outcome[0].equals("pass");
            System.out.println("CASE " + id + " " + outcome[0] + " " + outcome[1]);
            System.out.flush();
            if (!ok || verbose)
                echo(id, outcome[2]);
            if (ok)
                pass++;
            else
                fail++;
        }
        int implemented = manifest.size() - missing;
        if (check)
            System.err.printf("conformance (java): %d cases in %s, %d implemented, %d missing, %d error(s)%n",
                              manifest.size(), path, implemented, missing, problems);
        else
            System.err.printf("conformance (java): %d pass, %d fail, %d missing, %d error(s)%n", pass,
                              fail, missing, problems);
        if (problems > 0)
            return 2;
        return fail + missing > 0 ? 1 : 0;
    }

    private static void echo(String id, String output) {
        System.err.println("--- " + id);
        for (String l : output.split("\n", -1))
            if (!l.isEmpty())
                System.err.println("  | " + l);
    }

    /** Runs one case in a new JVM: {status, detail, output}. */
    private static String[] runCaseChild(String id, String path) {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        for (String p : new String[] {"zlink.library", "zlink.jni", "java.io.tmpdir"}) {
            String v = System.getProperty(p);
            if (v != null)
                cmd.add("-D" + p + "=" + v);
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Runner.class.getName());
        cmd.add("--run-case");
        cmd.add(id);
        cmd.add(path);
        long t0 = System.nanoTime();
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            Thread reader = new Thread(() -> {
                try (InputStream in = p.getInputStream()) {
                    in.transferTo(buf);
                } catch (IOException e) {
                    // the process is gone; what was read stays
                }
            });
            reader.start();
            long bound = (long) (CASE_SECONDS * Check.mult());
            boolean exited = p.waitFor(bound, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly();
                p.waitFor();
            }
            reader.join(5000);
            String out;
            synchronized (buf) {
                out = buf.toString(StandardCharsets.UTF_8);
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            if (!exited) {
                String first = firstFailure(out);
                return new String[] {"fail", "timeout after " + bound + " s"
                                     + (out.contains("FAIL ") ? " (after FAIL " + first + ")" : ""), out};
            }
            int rc = p.exitValue();
            if (rc == 0 && out.contains(DONE_MARK + id))
                return new String[] {"pass", ms + " ms", out};
            String detail = firstFailure(out);
            return new String[] {"fail", "exit " + rc + (detail.isEmpty() ? "" : ": " + detail), out};
        } catch (IOException e) {
            return new String[] {"fail", "cannot start the case's JVM: " + e.getMessage(), ""};
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new String[] {"fail", "interrupted", ""};
        }
    }

    private static String firstFailure(String out) {
        for (String l : out.split("\n")) {
            if (l.startsWith("FAIL "))
                return l.substring(5).trim();
        }
        for (String l : out.split("\n")) {
            if (!l.isBlank())
                return l.trim();
        }
        return "";
    }

    /** The child: runs the case, prints FAIL or the completion line. */
    private static int runCaseHere(String id, String path) {
        Map<String, JsonNode> manifest = load(path);
        if (manifest == null || !manifest.containsKey(id))
            return 2;
        Case c = registry().get(id);
        if (c == null)
            return 2;
        try {
            c.run(manifest.get(id).get("params"));
        } catch (Check.Failure f) {
            return 1; // its FAIL line was printed when it was made (Check.fail)
        } catch (Throwable t) {
            StackTraceElement[] st = t.getStackTrace();
            String where = "";
            for (StackTraceElement e : st) {
                if (e.getClassName().startsWith("io.zlink.conformance")) {
                    where = e.getFileName() + ":" + e.getLineNumber() + ": ";
                    break;
                }
            }
            System.out.println("FAIL " + where + t);
            t.printStackTrace(System.out);
            return 1;
        }
        System.out.println(DONE_MARK + id);
        System.out.flush();
        // Halt: pump threads are daemons, but a host left open must not keep the JVM.
        Runtime.getRuntime().halt(0);
        return 0;
    }
}
