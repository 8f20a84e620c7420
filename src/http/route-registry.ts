/** Remembers every registered path and its methods, for 405 Allow and trailing-slash redirects. */
import type { FastifyInstance } from 'fastify';

export interface RouteRegistry {
  knows(path: string): boolean;
  /** The allowed methods of a known path, or undefined when no route has this path. */
  methodsFor(path: string): string[] | undefined;
}

/**
 * The config of a route that only answers 405 (documented so clients see it,
 * yet not a method its path allows): left out of `Allow`.
 */
export const REFUSED_METHOD = Object.freeze({ refusedMethod: true });

export function createRouteRegistry(app: FastifyInstance): RouteRegistry {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  const byUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    let methods = byUrl.get(route.url);
    if (methods === undefined) {
      methods = new Set();
      byUrl.set(route.url, methods);
      const source = route.url
        .split('/')
        .map((part) =>
          part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('/');
      routes.push({ pattern: new RegExp(`^${source}$`), methods });
    }
    if ((route.config as { refusedMethod?: boolean } | undefined)?.refusedMethod === true) return;
    for (const method of [route.method].flat()) methods.add(method);
  });
  const find = (path: string) => routes.find((r) => r.pattern.test(path));
  return {
    knows: (path) => find(path) !== undefined,
    methodsFor: (path) => {
      const route = find(path);
      return route === undefined ? undefined : [...route.methods].sort();
    },
  };
}
