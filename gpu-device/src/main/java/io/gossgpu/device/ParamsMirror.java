package io.gossgpu.device;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;

/** A {@link KernelParams} record's C layout and component readers, built from its record components once per class. */
final class ParamsMirror {
    private static final ClassValue<ParamsMirror> OF = new ClassValue<>() {
        @Override
        protected ParamsMirror computeValue(Class<?> type) {
            return new ParamsMirror(type);
        }
    };

    final StructLayout layout;
    /** Per field: its accessor typed {@code (KernelParams)int}, {@code long}, {@code float} or {@code double}, for invokeExact. */
    final MethodHandle[] getters;

    final long[] offsets;
    final Class<?>[] types;

    static ParamsMirror of(Class<?> type) {
        return OF.get(type);
    }

    private ParamsMirror(Class<?> type) {
        if (!type.isRecord() || !KernelParams.class.isAssignableFrom(type))
            throw new IllegalArgumentException(type + " is not a KernelParams record");
        RecordComponent[] cs = type.getRecordComponents();
        List<MemoryLayout> fields = new ArrayList<>();
        getters = new MethodHandle[cs.length];
        offsets = new long[cs.length];
        types = new Class<?>[cs.length];
        long at = 0, align = 1;
        for (int i = 0; i < cs.length; i++) {
            ValueLayout v = valueLayout(type, cs[i]);
            long size = v.byteSize();
            if (at % size != 0) { // C puts each field at a multiple of its size
                fields.add(MemoryLayout.paddingLayout(size - at % size));
                at += size - at % size;
            }
            fields.add(v.withName(cs[i].getName()));
            offsets[i] = at;
            at += size;
            align = Math.max(align, size);
            try {
                Method accessor = cs[i].getAccessor();
                accessor.setAccessible(true); // launchers keep their records package-private
                types[i] = cs[i].getType();
                getters[i] = MethodHandles.lookup()
                        .unreflect(accessor)
                        .asType(MethodType.methodType(types[i], KernelParams.class));
            } catch (IllegalAccessException | RuntimeException e) {
                throw new IllegalArgumentException(type + "." + cs[i].getName() + " cannot be read", e);
            }
        }
        if (at % align != 0) fields.add(MemoryLayout.paddingLayout(align - at % align));
        layout = MemoryLayout.structLayout(fields.toArray(MemoryLayout[]::new)).withName(type.getSimpleName());
    }

    private static ValueLayout valueLayout(Class<?> type, RecordComponent c) {
        Class<?> t = c.getType();
        if (t == int.class) return ValueLayout.JAVA_INT;
        if (t == long.class) return ValueLayout.JAVA_LONG;
        if (t == float.class) return ValueLayout.JAVA_FLOAT;
        if (t == double.class) return ValueLayout.JAVA_DOUBLE;
        throw new IllegalArgumentException(type.getSimpleName() + "." + c.getName() + " is a " + t
                + "; kernel params are int, long, float or double");
    }
}
