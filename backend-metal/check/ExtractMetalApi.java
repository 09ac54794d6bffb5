/*
 * Writes metal-api.txt, the facts the shim check compares against: for the Metal classes the shim uses, every method's
 * Objective-C selector, return type and parameter types, each class's parent, and the values of the enums it uses, as
 * Apple's metal-cpp declares them. Only facts are taken (names, selectors, types, values), no code.
 *
 * metal-cpp maps each Objective-C method to an inline C++ function that sends its selector:
 *   _MTL_INLINE MTL::Buffer* MTL::Device::newBuffer(NS::UInteger length, MTL::ResourceOptions options)
 *   { return Object::sendMessage<MTL::Buffer*>(this, _MTL_PRIVATE_SEL(newBufferWithLength_options_), length, options); }
 * and Metal/MTLHeaderBridge.hpp names each selector: _MTL_PRIVATE_DEF_SEL(newBufferWithLength_options_, "newBufferWithLength:options:").
 *
 * Run by hand when the shim starts using another class or enum (the file is committed; CI does not need metal-cpp):
 *   java backend-metal/check/ExtractMetalApi.java METAL_CPP_DIR "EDITION" > backend-metal/check/metal-api.txt
 * where METAL_CPP_DIR holds Metal/*.hpp and EDITION names the metal-cpp release (e.g. "macOS 26 / iOS 26").
 */

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

public final class ExtractMetalApi {

    /** The metal-cpp classes (MTL:: names) and enums the shim uses; the Objective-C names add the MTL prefix. */
    static final List<String> CLASSES = List.of("Device", "CommandQueue", "Library", "Function", "CompileOptions",
            "ComputePipelineState", "Allocation", "Resource", "Buffer", "CommandBuffer", "CommandEncoder",
            "ComputeCommandEncoder", "BlitCommandEncoder");
    static final List<String> ENUMS = List.of("ResourceOptions", "StorageMode", "DispatchType", "CommandBufferStatus");
    static final List<String> FUNCTIONS = List.of("MTLCreateSystemDefaultDevice");
    static final List<String> STRUCTS = List.of("Size");

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: java ExtractMetalApi.java METAL_CPP_DIR EDITION");
            System.exit(2);
        }
        Path metal = Path.of(args[0], "Metal");
        StringBuilder all = new StringBuilder();
        try (Stream<Path> s = Files.list(metal)) {
            for (Path p : s.filter(p -> p.toString().endsWith(".hpp")).sorted().toList()) {
                all.append(Files.readString(p, StandardCharsets.UTF_8)).append('\n');
            }
        }
        String text = all.toString();

        Map<String, String> selectors = new HashMap<>();
        Matcher sel = Pattern.compile("_MTL_PRIVATE_DEF_SEL\\(\\s*(\\w+)\\s*,\\s*\"([^\"]*)\"\\s*\\)").matcher(text);
        while (sel.find()) {
            selectors.put(sel.group(1), sel.group(2));
        }

        List<String> out = new ArrayList<>();
        out.add("# Metal API facts for backend-metal/shim/goss_metal.m, from Apple's metal-cpp (" + args[1] + "): for each class the");
        out.add("# shim uses, its parent and every method (Objective-C selector from Metal/MTLHeaderBridge.hpp, C++ return and");
        out.add("# parameter types), and the enums' values. Names, selectors and types only. Written by ExtractMetalApi.java.");
        out.add("# class <ObjC name> <parent>   method|classmethod <class> <selector> <return type> <parameter types, comma-separated>");
        out.add("# enum <name> <underlying type>   value <name> <integer>   function <name> <return type> <parameters>   field <struct> <name> <type>");
        for (String c : CLASSES) {
            Matcher decl = Pattern.compile("(?m)^class " + c + " : public NS::(\\w+)<" + c + "(?:,\\s*(\\w+))?>").matcher(text);
            if (!decl.find()) {
                throw new IllegalStateException("no class MTL::" + c + " in " + metal);
            }
            String parent = decl.group(2) != null ? "MTL" + decl.group(2) : "NSObject";
            out.add("class\tMTL" + c + "\t" + parent);
            Matcher m = Pattern.compile("_MTL_INLINE[ \\t]+([^\\n{};]+?)[ \\t]+MTL::" + c + "::(\\w+)\\(((?:[^()]|\\([^()]*\\))*)\\)\\s*(?:const)?\\s*\\{(.*?)\\n\\}",
                    Pattern.DOTALL).matcher(text);
            TreeSet<String> lines = new TreeSet<>();
            while (m.find()) {
                Matcher send = Pattern.compile("_MTL_PRIVATE_SEL\\((\\w+)\\)").matcher(m.group(4));
                if (!send.find()) {
                    continue; // a convenience overload that calls another method (e.g. a std::function wrapper)
                }
                String selector = selectors.get(send.group(1));
                if (selector == null) {
                    throw new IllegalStateException("selector " + send.group(1) + " of MTL::" + c + "::" + m.group(2) + " is not in MTLHeaderBridge.hpp");
                }
                lines.add("method\tMTL" + c + "\t" + selector + "\t" + normal(m.group(1)) + "\t" + parameterTypes(m.group(3)));
            }
            // a class the program creates itself has alloc (NS::Object::alloc of the Objective-C class) and init
            if (Pattern.compile("MTL::" + c + "::alloc\\(\\)").matcher(text).find()) {
                lines.add("classmethod\tMTL" + c + "\talloc\tMTL::" + c + "*\t");
                lines.add("method\tMTL" + c + "\tinit\tMTL::" + c + "*\t");
            }
            out.addAll(lines);
        }
        for (String e : ENUMS) {
            Matcher decl = Pattern.compile("_MTL_(?:ENUM|OPTIONS)\\(([\\w:]+),\\s*" + e + "\\)\\s*\\{(.*?)\\};", Pattern.DOTALL).matcher(text);
            if (!decl.find()) {
                throw new IllegalStateException("no enum MTL::" + e);
            }
            out.add("enum\tMTL" + e + "\t" + decl.group(1));
            Map<String, Long> values = new LinkedHashMap<>();
            for (String item : decl.group(2).split(",")) {
                String t = item.replaceAll("//.*", "").strip();
                if (t.isEmpty()) {
                    continue;
                }
                String[] kv = t.split("=", 2);
                long v = kv.length == 2 ? eval(kv[1].strip(), values) : values.isEmpty() ? 0 : last(values) + 1;
                values.put(kv[0].strip(), v);
                out.add("value\tMTL" + kv[0].strip() + "\t" + v);
            }
        }
        for (String f : FUNCTIONS) {
            Matcher decl = Pattern.compile("extern \"C\"\\s+(.+?)\\s+" + f + "\\(([^)]*)\\);").matcher(text);
            if (!decl.find()) {
                throw new IllegalStateException("no function " + f);
            }
            out.add("function\t" + f + "\t" + normal(decl.group(1)) + "\t" + parameterTypes(decl.group(2)));
        }
        for (String st : STRUCTS) {
            Matcher decl = Pattern.compile("(?m)^struct " + st + "\\s*\\{(.*?)\\}", Pattern.DOTALL).matcher(text);
            if (!decl.find()) {
                throw new IllegalStateException("no struct MTL::" + st);
            }
            Matcher field = Pattern.compile("(?m)^\\s*([\\w:]+)\\s+(\\w+);").matcher(decl.group(1));
            while (field.find()) {
                out.add("field\tMTL" + st + "\t" + field.group(2) + "\t" + field.group(1));
            }
            // static Size Make(...) is the Objective-C MTLSizeMake(...)
            Matcher make = Pattern.compile("static\\s+" + st + "\\s+Make\\(([^)]*)\\);").matcher(decl.group(1));
            if (make.find()) {
                out.add("function\tMTL" + st + "Make\tMTL::" + st + "\t" + parameterTypes(make.group(1)));
            }
        }
        System.out.println(String.join("\n", out));
    }

    /** "const MTL::Buffer* buffer, NS::UInteger offset" → "const MTL::Buffer*, NS::UInteger"; a block keeps its signature. */
    static String parameterTypes(String params) {
        String p = params.strip();
        if (p.isEmpty() || p.equals("void")) {
            return "";
        }
        List<String> types = new ArrayList<>();
        int depth = 0, start = 0;
        for (int i = 0; i <= p.length(); i++) {
            char ch = i < p.length() ? p.charAt(i) : ',';
            if (ch == '(' || ch == '<') depth++;
            if (ch == ')' || ch == '>') depth--;
            if (ch == ',' && depth == 0) {
                types.add(typeOf(p.substring(start, i).strip()));
                start = i + 1;
            }
        }
        return String.join(", ", types);
    }

    /** The type of one parameter declaration: the name removed ("void (^deallocator)(void*, NS::UInteger)" → "void (^)(void*, NS::UInteger)"). */
    static String typeOf(String param) {
        if (param.contains("(^")) {
            return normal(param.replaceAll("\\(\\^\\s*\\w*\\)", "(^)"));
        }
        return normal(param.replaceAll("\\s*\\b\\w+$", ""));
    }

    static String normal(String type) {
        return type.replaceAll("\\s+", " ").replaceAll("\\s*\\*", "*").strip();
    }

    static long last(Map<String, Long> values) {
        long v = 0;
        for (long x : values.values()) v = x;
        return v;
    }

    /** An enum value: a number, "1 << 5", a name defined before, or those joined by "|". */
    static long eval(String expr, Map<String, Long> known) {
        long v = 0;
        for (String part : expr.split("\\|")) {
            String t = part.strip().replaceAll("^\\(|\\)$", "");
            Matcher shift = Pattern.compile("(\\w+)\\s*<<\\s*(\\w+)").matcher(t);
            if (shift.matches()) {
                v |= eval(shift.group(1), known) << eval(shift.group(2), known);
            } else if (t.matches("-?\\d+")) {
                v |= Long.parseLong(t);
            } else if (t.matches("0x[0-9a-fA-F]+")) {
                v |= Long.parseLong(t.substring(2), 16);
            } else if (known.containsKey(t.replaceFirst("^MTL::", ""))) {
                v |= known.get(t.replaceFirst("^MTL::", ""));
            } else {
                throw new IllegalStateException("cannot evaluate enum value '" + expr + "'");
            }
        }
        return v;
    }
}
