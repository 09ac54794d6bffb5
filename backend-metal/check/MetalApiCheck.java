/*
 * Checks backend-metal/shim/goss_metal.m against Apple's Metal API without a Mac. Input: clang's AST dump (-Xclang -ast-dump)
 * of the shim compiled against the stand-in header include/Metal/Metal.h, and metal-api.txt (facts from Apple's
 * metal-cpp, written by ExtractMetalApi.java). It fails (exit 1) when:
 *   - the shim sends a message to a Metal object whose class (or a parent class) has no such selector in metal-cpp,
 *     or sends a Metal selector to an untyped receiver (id), where nothing would check it;
 *   - the stand-in header declares a method, property, enum value, function or struct field that metal-cpp does not
 *     have, or has with other return or parameter types (so clang's type check of every argument against the header
 *     is a check against Apple's declarations).
 * It prints every Metal API the shim uses with the result of its check.
 *
 *   java MetalApiCheck.java AST_DUMP SHIM HEADER FACTS
 */

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class MetalApiCheck {

    /** One method of metal-cpp: return and parameter types in normal form. */
    record Fact(String cls, String selector, String returns, String params, boolean classMethod) {}

    static final Map<String, String> parent = new HashMap<>();
    static final Map<String, Fact> methods = new HashMap<>();     // "MTLDevice newCommandQueue" → fact
    static final Map<String, Long> enumValues = new HashMap<>();
    static final Map<String, String> functions = new HashMap<>(); // name → "returns(params)"
    static final Map<String, String> fields = new HashMap<>();    // "MTLSize width" → type

    static final List<String> problems = new ArrayList<>();

    public static void main(String[] args) throws IOException {
        if (args.length != 4) {
            System.err.println("usage: java MetalApiCheck.java AST_DUMP SHIM HEADER FACTS");
            System.exit(2);
        }
        readFacts(Path.of(args[3]));
        String shim = Path.of(args[1]).getFileName().toString(), header = Path.of(args[2]).toString();
        Ast ast = Ast.read(Path.of(args[0]), shim, header);

        Map<String, String> checkedDecls = checkHeader(ast);
        Map<String, String> used = checkSends(ast);

        System.out.println("Metal API used by " + shim + " (" + used.size() + " selectors), each checked against metal-api.txt:");
        used.forEach((api, result) -> System.out.println("  " + api + "  " + result));
        System.out.println("Stand-in header " + Path.of(header).getFileName() + ": " + checkedDecls.size()
                + " declarations (methods, properties, enum values, functions, struct fields) compared with metal-api.txt");
        if (!problems.isEmpty()) {
            System.out.println("FAILED: " + problems.size() + " problem(s):");
            problems.forEach(p -> System.out.println("  " + p));
            System.exit(1);
        }
        System.out.println("every message the shim sends to a Metal object is in Apple's API with these types");
    }

    // ---- facts ----

    static void readFacts(Path file) throws IOException {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "class" -> parent.put(f[1], f[2]);
                case "method", "classmethod" -> {
                    Fact fact = new Fact(f[1], f[2], normal(f[3]), normalList(f[4]), f[0].equals("classmethod"));
                    methods.putIfAbsent(key(f[1], f[2], fact.classMethod()), fact);
                }
                case "value" -> enumValues.put(f[1], Long.parseLong(f[2]));
                case "function" -> functions.put(f[1], normal(f[2]) + "(" + normalList(f[3]) + ")");
                case "field" -> fields.put(f[1] + " " + f[2], normal(f[3]));
                case "enum" -> { }
                default -> throw new IllegalStateException("metal-api.txt: unknown line " + line);
            }
        }
    }

    static String key(String cls, String selector, boolean classMethod) {
        return (classMethod ? "+" : "-") + cls + " " + selector;
    }

    /** The fact for a selector of a class or of the nearest parent that has it, or null. */
    static Fact lookup(String cls, String selector, boolean classMethod) {
        for (String c = cls; c != null; c = parent.get(c)) {
            Fact f = methods.get(key(c, selector, classMethod));
            if (f != null) {
                return f;
            }
        }
        return null;
    }

    // ---- the header against the facts ----

    static Map<String, String> checkHeader(Ast ast) {
        Map<String, String> checked = new TreeMap<>();
        for (Ast.Decl d : ast.headerDecls) {
            switch (d.kind()) {
                case "protocol", "interface" -> {
                    if (d.parents().isEmpty()) {
                        continue; // a forward declaration (@protocol MTLBuffer;)
                    }
                    if (!parent.containsKey(d.name())) {
                        problems.add("header declares " + d.name() + ", which is not among metal-api.txt's classes");
                    } else if (!d.parents().contains(parent.get(d.name())) && !parent.get(d.name()).equals("NSObject")) {
                        problems.add("header: " + d.name() + " should inherit " + parent.get(d.name()) + " (metal-cpp), not " + d.parents());
                    }
                }
                case "method" -> {
                    String api = (d.classMethod() ? "+[" : "-[") + d.cls() + " " + d.name() + "]";
                    Fact f = lookup(d.cls(), d.name(), d.classMethod());
                    String mine = normal(d.type()) + "(" + normalList(String.join(", ", d.params())) + ")";
                    if (f == null) {
                        problems.add("header: " + api + " is not in Apple's API (no such selector for " + d.cls() + " or its parents in metal-api.txt)");
                    } else if (!mine.equals(f.returns() + "(" + f.params() + ")")) {
                        problems.add("header: " + api + " is " + mine + " here but " + f.returns() + "(" + f.params() + ") in metal-cpp");
                    }
                    checked.put(api, mine);
                }
                case "value" -> {
                    Long v = enumValues.get(d.name());
                    if (v == null || v != Long.parseLong(d.type())) {
                        problems.add("header: " + d.name() + " = " + d.type() + ", metal-cpp: " + (v == null ? "no such value" : v));
                    }
                    checked.put(d.name(), d.type());
                }
                case "function" -> {
                    String mine = normal(d.type()) + "(" + normalList(String.join(", ", d.params())) + ")";
                    if (!mine.equals(functions.get(d.name()))) {
                        problems.add("header: function " + d.name() + " is " + mine + " here, metal-cpp: " + functions.get(d.name()));
                    }
                    checked.put(d.name(), mine);
                }
                case "field" -> {
                    String k = d.cls() + " " + d.name();
                    if (!normal(d.type()).equals(fields.get(k))) {
                        problems.add("header: field " + k + " is " + normal(d.type()) + ", metal-cpp: " + fields.get(k));
                    }
                    checked.put(k, d.type());
                }
                default -> throw new IllegalStateException(d.kind());
            }
        }
        return checked;
    }

    // ---- the shim's messages against the facts ----

    static final Pattern METAL_RECEIVER = Pattern.compile("MTL::(\\w+)\\*");

    static Map<String, String> checkSends(Ast ast) {
        Set<String> metalSelectors = new LinkedHashSet<>();
        methods.values().forEach(f -> metalSelectors.add(f.selector()));
        Map<String, String> used = new TreeMap<>();
        for (Ast.Send s : ast.sends) {
            String where = "goss_metal.m:" + s.line();
            if (s.receiverClass() != null) { // [Class selector]
                if (!s.receiverClass().startsWith("MTL")) {
                    continue;
                }
                String api = "+[" + s.receiverClass() + " " + s.selector() + "]";
                boolean ok = s.selector().equals("new")
                        ? lookup(s.receiverClass(), "alloc", true) != null && lookup(s.receiverClass(), "init", false) != null
                        : lookup(s.receiverClass(), s.selector(), true) != null;
                if (!ok) {
                    problems.add(where + ": " + api + " is not in Apple's API");
                }
                used.put(api, ok ? "ok (alloc + init of a class the program creates)" : "NOT IN metal-cpp");
                continue;
            }
            String receiver = normal(s.receiverType());
            Matcher m = METAL_RECEIVER.matcher(receiver);
            if (!m.matches()) {
                if (receiver.equals("id") && metalSelectors.contains(s.selector())) {
                    problems.add(where + ": " + s.selector() + " is sent to an untyped receiver (id): cast it to its Metal protocol");
                }
                continue; // a Foundation or shim object: GNUstep's headers checked it
            }
            String cls = "MTL" + m.group(1);
            String api = "-[" + cls + " " + s.selector() + "]";
            Fact f = lookup(cls, s.selector(), false);
            if (f == null) {
                problems.add(where + ": " + api + " is not in Apple's API (no such selector for " + cls + " or its parents)");
                used.put(api, "NOT IN metal-cpp");
            } else {
                used.put(api, "ok: selector of " + f.cls() + " in MTLHeaderBridge.hpp, " + f.returns() + "(" + f.params() + ")");
            }
        }
        return used;
    }

    // ---- types ----

    static String normalList(String params) {
        if (params.isBlank()) {
            return "";
        }
        List<String> out = new ArrayList<>();
        int depth = 0, start = 0;
        for (int i = 0; i <= params.length(); i++) {
            char ch = i < params.length() ? params.charAt(i) : ',';
            if (ch == '(' || ch == '<') depth++;
            if (ch == ')' || ch == '>') depth--;
            if (ch == ',' && depth == 0) {
                out.add(normal(params.substring(start, i)));
                start = i + 1;
            }
        }
        return String.join(", ", out);
    }

    /**
     * One spelling for an Objective-C type and its metal-cpp counterpart: id<MTLBuffer> and MTLCompileOptions * become
     * MTL::Buffer* and MTL::CompileOptions*, NSString * becomes NS::String*, NSUInteger NS::UInteger, BOOL bool;
     * const, nullability and ARC ownership qualifiers are dropped (metal-cpp marks object parameters const).
     */
    static String normal(String type) {
        String t = " " + type.replaceAll("\\b(const|_Nullable|_Nonnull|_Null_unspecified|__strong|__autoreleasing|__unsafe_unretained|__weak|struct|enum)\\b", " ") + " ";
        t = t.replaceAll("\\bid\\s*<\\s*MTL(\\w+)\\s*>", "MTL::$1*");
        t = t.replaceAll("\\bMTL(\\w+)\\s*\\*", "MTL::$1*");
        t = t.replaceAll("\\bMTL([A-Z]\\w*)", "MTL::$1").replace("MTL::::", "MTL::");
        t = t.replaceAll("\\bNS(UInteger|Integer)\\b", "NS::$1");
        t = t.replaceAll("\\bNS([A-Z]\\w*)\\s*\\*", "NS::$1*");
        t = t.replaceAll("\\bBOOL\\b", "bool");
        t = t.replaceAll("\\s+", " ").replaceAll("\\s*\\*", "*").replaceAll("\\(\\s+", "(").replaceAll("\\s+\\)", ")").replaceAll("\\s+,", ",");
        return t.strip();
    }

    // ---- clang's AST dump ----

    /** What the check needs from `clang -Xclang -ast-dump` (text: one node per line, children indented by 2). */
    static final class Ast {
        record Decl(String kind, String cls, String name, String type, List<String> params, List<String> parents, boolean classMethod) {}
        record Send(String selector, String receiverType, String receiverClass, int line) {}

        final List<Decl> headerDecls = new ArrayList<>();
        final List<Send> sends = new ArrayList<>();

        static final Pattern LOCATION = Pattern.compile("(?:line:(\\d+):\\d+)|(?:col:\\d+)|(?:([^\\s<>,':]+):(\\d+):(\\d+))");
        static final Pattern NODE = Pattern.compile("^([| `-]*)(\\w+) (0x[0-9a-f]+)(.*)$");
        static final Pattern QUOTED = Pattern.compile("'([^']*)'");

        static Ast read(Path dump, String shim, String header) throws IOException {
            Ast ast = new Ast();
            List<String> lines = Files.readAllLines(dump, StandardCharsets.UTF_8);
            String file = "";
            int line = 0;
            String cls = null;           // the protocol or interface being read
            int clsDepth = -1;
            Decl method = null;          // the method whose parameters follow
            int methodDepth = -1;
            String pendingEnumValue = null;
            List<Decl> pendingFields = new ArrayList<>();
            Set<String> seenSends = new java.util.HashSet<>();
            for (int i = 0; i < lines.size(); i++) {
                String l = lines.get(i);
                Matcher n = NODE.matcher(l);
                if (!n.matches()) {
                    if (pendingEnumValue != null && l.contains("value: Int ")) {
                        ast.headerDecls.add(new Decl("value", null, pendingEnumValue, l.replaceAll(".*value: Int ", "").strip(), List.of(), List.of(), false));
                        pendingEnumValue = null;
                    }
                    continue;
                }
                int depth = n.group(1).length() / 2;
                String kind = n.group(2), rest = n.group(4);
                Matcher loc = LOCATION.matcher(rest.replaceAll("'[^']*'", "''"));
                while (loc.find()) {
                    if (loc.group(2) != null) {
                        file = loc.group(2);
                        line = Integer.parseInt(loc.group(3));
                    } else if (loc.group(1) != null) {
                        line = Integer.parseInt(loc.group(1));
                    }
                }
                if (cls != null && depth <= clsDepth) {
                    cls = null;
                }
                if (method != null && depth <= methodDepth) {
                    ast.headerDecls.add(method);
                    method = null;
                }
                boolean inHeader = file.endsWith(header) || header.endsWith(file);
                boolean inShim = file.endsWith(shim);
                String afterRange = rest.replaceFirst("^\\s*(?:prev 0x[0-9a-f]+\\s*)?(?:parent 0x[0-9a-f]+\\s*)?<[^>]*>", "").strip();
                List<String> quoted = new ArrayList<>();
                Matcher q = QUOTED.matcher(afterRange);
                while (q.find()) quoted.add(q.group(1));
                String[] words = afterRange.replaceAll("'[^']*'(:'[^']*')?", "").trim().split("\\s+");
                if (inHeader) {
                    switch (kind) {
                        case "ObjCProtocolDecl", "ObjCInterfaceDecl" -> {
                            cls = words[words.length - 1];
                            clsDepth = depth;
                            if (!l.contains("implicit")) {
                                ast.headerDecls.add(new Decl(kind.equals("ObjCProtocolDecl") ? "protocol" : "interface", null, cls, "",
                                        List.of(), parents(lines, i, depth), false));
                            }
                        }
                        case "ObjCMethodDecl" -> {
                            if (cls != null) {
                                // "col:1 implicit - name 'NSString * _Nonnull':'NSString *'" or "col:1 - sel:with: 'type'"
                                boolean plus = afterRange.matches(".*\\s\\+\\s.*") || afterRange.startsWith("+ ");
                                String selector = afterRange.replaceAll("'.*", "").replaceAll(".*[-+]\\s+", "").strip();
                                method = new Decl("method", cls, selector, quoted.get(0), new ArrayList<>(), List.of(), plus);
                                methodDepth = depth;
                            }
                        }
                        case "ParmVarDecl" -> {
                            if (method != null && depth == methodDepth + 1) {
                                method.params().add(quoted.get(0));
                            }
                        }
                        case "EnumConstantDecl" -> pendingEnumValue = words[words.length - 1];
                        case "FunctionDecl" -> {
                            String name = afterRange.replaceAll("'.*", "").trim().replaceAll(".*\\s", "");
                            String fnType = quoted.get(0); // "id<MTLDevice> _Nullable (void)"
                            int paren = fnType.lastIndexOf('(');
                            String params = fnType.substring(paren + 1, fnType.length() - 1).strip();
                            params = params.equals("void") ? "" : params;
                            ast.headerDecls.add(new Decl("function", null, name, fnType.substring(0, paren).strip(),
                                    params.isEmpty() ? List.of() : List.of(params), List.of(), false));
                        }
                        case "FieldDecl" -> pendingFields.add(new Decl("field", null, words[words.length - 1], quoted.get(0), List.of(), List.of(), false));
                        case "TypedefDecl" -> {
                            if (!pendingFields.isEmpty() && quoted.size() > 0 && quoted.get(0).startsWith("struct")) {
                                String name = words[words.length - 1];
                                for (Decl f : pendingFields) {
                                    ast.headerDecls.add(new Decl("field", name, f.name(), f.type(), List.of(), List.of(), false));
                                }
                                pendingFields.clear();
                            }
                        }
                        default -> { }
                    }
                }
                if (inShim && kind.equals("ObjCMessageExpr") && seenSends.add(n.group(3))) {
                    Matcher sel = Pattern.compile("selector=(\\S+)(?: class='([^']*)')?").matcher(rest);
                    if (sel.find()) {
                        String receiverType = null;
                        if (sel.group(2) == null && i + 1 < lines.size()) {
                            Matcher child = QUOTED.matcher(lines.get(i + 1).replaceFirst("^[| `-]*\\w+ 0x[0-9a-f]+\\s*<[^>]*>", ""));
                            receiverType = child.find() ? child.group(1) : "?";
                        }
                        ast.sends.add(new Send(sel.group(1), receiverType, sel.group(2), line));
                    }
                }
            }
            if (method != null) {
                ast.headerDecls.add(method);
            }
            return ast;
        }

        /** The protocols a protocol adopts (ObjCProtocol children) and an interface's superclass. */
        static List<String> parents(List<String> lines, int at, int depth) {
            List<String> out = new ArrayList<>();
            for (int j = at + 1; j < lines.size(); j++) {
                Matcher n = NODE.matcher(lines.get(j));
                if (!n.matches()) continue;
                int d = n.group(1).length() / 2;
                if (d <= depth) break;
                if (d == depth + 1 && (n.group(2).equals("ObjCProtocol") || n.group(2).equals("ObjCInterface"))) {
                    Matcher q = QUOTED.matcher(n.group(4));
                    if (q.find()) out.add(q.group(1));
                }
            }
            return out;
        }
    }
}
