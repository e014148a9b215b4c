package io.asymnvm.frontend.tx;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;

/**
 * The {@link InvocationHandler} behind {@code AsymNvm.transactional}: annotated methods run as persistent
 * transactions through the engine; other methods (and {@code Object} methods) call the target directly.
 */
public final class TransactionalProxy implements InvocationHandler {
    private final TransactionEngine engine;
    private final Object target;
    private final Map<Method, MethodRegistry.Entry> entries;

    private TransactionalProxy(TransactionEngine engine, Object target, Map<Method, MethodRegistry.Entry> entries) {
        this.engine = engine;
        this.target = target;
        this.entries = entries;
    }

    public static <T> T create(TransactionEngine engine, MethodRegistry registry, Class<T> iface, T target) {
        return create(engine, registry, iface, target, "");
    }

    /** A proxy whose methods are registered under {@code instance} (see {@link MethodRegistry}). */
    public static <T> T create(TransactionEngine engine, MethodRegistry registry, Class<T> iface, T target,
                               String instance) {
        if (!iface.isInterface()) {
            throw new IllegalArgumentException(iface.getName() + " is not an interface");
        }
        if (!iface.isInstance(target)) {
            throw new IllegalArgumentException(target.getClass().getName() + " does not implement "
                    + iface.getName());
        }
        Map<Method, MethodRegistry.Entry> entries = registry.register(iface, target, instance);
        return iface.cast(Proxy.newProxyInstance(iface.getClassLoader(), new Class<?>[] {iface},
                new TransactionalProxy(engine, target, entries)));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        MethodRegistry.Entry e = entries.get(method);
        if (e != null && TransactionContext.active()
                && TransactionContext.current().engine().lineage() != engine.lineage()) {
            // joining would put this call's writes into another frontend's transaction: its semantic record,
            // its slabs, its recovery. Nothing commits across frontends atomically, so refuse before any effect.
            throw new IllegalStateException("transactional call " + e.signature() + " of frontend "
                    + engine.frontendId() + " made inside a running transaction of frontend "
                    + TransactionContext.current().engine().frontendId() + ": a transaction runs on one frontend; "
                    + "call proxies of the same AsymNvm inside it, or make the call after it returns");
        }
        if (e == null || TransactionContext.active()) {
            // plain method, or a transactional call from inside a running transaction: it joins the outer one
            // (the outer semantic record covers it; re-executing the outer method calls it again)
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException ite) {
                throw ite.getCause();
            }
        }
        return engine.execute(e, args == null ? new Object[0] : args);
    }
}
