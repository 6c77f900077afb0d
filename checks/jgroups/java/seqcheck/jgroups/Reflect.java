package seqcheck.jgroups;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * Reflection over JGroups' classes, so that one harness source compiles against every release:
 * fields and methods are found by name (the first of several names that exists, for what a
 * release renamed), protected ones included. A name that no release has is a harness defect and
 * fails loudly.
 */
final class Reflect {
    private Reflect() {}

    static Class<?> type(String... names) {
        for (String name : names) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException e) {
                // try the next name
            }
        }
        return null;
    }

    static Field field(Class<?> cls, String... names) {
        for (String name : names) {
            for (Class<?> c = cls; c != null; c = c.getSuperclass()) {
                try {
                    Field f = c.getDeclaredField(name);
                    f.setAccessible(true);
                    return f;
                } catch (NoSuchFieldException e) {
                    // up the hierarchy
                }
            }
        }
        return null;
    }

    static boolean has(Object target, String... names) {
        return field(target.getClass(), names) != null;
    }

    static Object get(Object target, String... names) {
        Field f = field(target.getClass(), names);
        if (f == null)
            throw new IllegalStateException("no field " + String.join("|", names) + " in " + target.getClass().getName());
        try {
            return f.get(target);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    static Object getOr(Object target, Object otherwise, String... names) {
        Field f = field(target.getClass(), names);
        if (f == null)
            return otherwise;
        try {
            return f.get(target);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    static Object getStatic(Class<?> cls, String name) {
        try {
            Field f = cls.getField(name);
            return f.get(null);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    static void set(Object target, Object value, String... names) {
        Field f = field(target.getClass(), names);
        if (f == null)
            throw new IllegalStateException("no field " + String.join("|", names) + " in " + target.getClass().getName());
        try {
            if (Modifier.isFinal(f.getModifiers()))
                throw new IllegalStateException("field " + f.getName() + " is final");
            f.set(target, value);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Sets a numeric or boolean field from a long (props from seqcheck). */
    static boolean setProperty(Object target, String name, Object value) {
        Field f = field(target.getClass(), name);
        if (f == null)
            return false;
        try {
            Class<?> t = f.getType();
            if (t == long.class) f.setLong(target, ((Number) value).longValue());
            else if (t == int.class) f.setInt(target, ((Number) value).intValue());
            else if (t == short.class) f.setShort(target, ((Number) value).shortValue());
            else if (t == double.class) f.setDouble(target, ((Number) value).doubleValue());
            else if (t == boolean.class) f.setBoolean(target, (Boolean) value);
            else throw new IllegalArgumentException("property " + name + ": unsupported type " + t);
            return true;
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    static Method method(Class<?> cls, String name, Class<?>... params) {
        for (Class<?> c = cls; c != null; c = c.getSuperclass()) {
            try {
                Method m = c.getDeclaredMethod(name, params);
                m.setAccessible(true);
                return m;
            } catch (NoSuchMethodException e) {
                // up the hierarchy
            }
        }
        return null;
    }

    /** Calls the first method called ``name`` whose parameters accept ``args``. */
    static Object call(Object target, String name, Object... args) {
        Class<?> start = target instanceof Class ? (Class<?>) target : target.getClass();
        Object self = target instanceof Class ? null : target;
        for (Class<?> c = start; c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (!m.getName().equals(name) || !accepts(m.getParameterTypes(), args))
                    continue;
                m.setAccessible(true);
                try {
                    return m.invoke(self, args);
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                } catch (InvocationTargetException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException) throw (RuntimeException) cause;
                    if (cause instanceof Error) throw (Error) cause;
                    throw new IllegalStateException(cause);
                }
            }
        }
        throw new IllegalStateException("no method " + name + "/" + args.length + " in " + start.getName());
    }

    static boolean hasMethod(Object target, String name, int arity) {
        for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass())
            for (Method m : c.getDeclaredMethods())
                if (m.getName().equals(name) && m.getParameterCount() == arity)
                    return true;
        return false;
    }

    static Object create(Class<?> cls, Object... args) {
        for (Constructor<?> k : cls.getDeclaredConstructors()) {
            if (!accepts(k.getParameterTypes(), args))
                continue;
            k.setAccessible(true);
            try {
                return k.newInstance(args);
            } catch (InvocationTargetException e) {
                throw new IllegalStateException(e.getCause());
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("no constructor of " + cls.getName() + " for " + args.length + " arguments");
    }

    /** Has ``cls`` a constructor of three parameters (DiagnosticsHandler(log, socket_factory, thread_factory))? */
    static boolean numbers3(Class<?> cls) {
        if (cls == null)
            return false;
        for (Constructor<?> k : cls.getDeclaredConstructors())
            if (k.getParameterCount() == 3)
                return true;
        return false;
    }

    private static boolean accepts(Class<?>[] params, Object[] args) {
        if (params.length != args.length)
            return false;
        for (int i = 0; i < params.length; i++) {
            Class<?> p = box(params[i]);
            if (args[i] != null && !p.isInstance(args[i]))
                return false;
            if (args[i] == null && params[i].isPrimitive())
                return false;
        }
        return true;
    }

    private static Class<?> box(Class<?> c) {
        if (!c.isPrimitive()) return c;
        if (c == long.class) return Long.class;
        if (c == int.class) return Integer.class;
        if (c == short.class) return Short.class;
        if (c == byte.class) return Byte.class;
        if (c == boolean.class) return Boolean.class;
        if (c == double.class) return Double.class;
        if (c == char.class) return Character.class;
        return Float.class;
    }
}
