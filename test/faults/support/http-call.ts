/**
 * One HTTP request that never throws: either an answer (status, headers,
 * body) or "no answer" (the connection was refused, reset or timed out),
 * with how long it took. Fault tests reason about exactly these two cases.
 */
export type Answer = {
  readonly answered: true;
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly ms: number;
};
export type NoAnswer = { readonly answered: false; readonly error: string; readonly ms: number };
export type CallResult = Answer | NoAnswer;

export interface CallOptions {
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly timeoutMs?: number;
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const started = performance.now();
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
    });
    const text = await response.text();
    return {
      answered: true,
      status: response.status,
      headers: response.headers,
      text,
      ms: performance.now() - started,
    };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    return {
      answered: false,
      error: e.cause?.code ?? e.cause?.message ?? e.name ?? e.message,
      ms: performance.now() - started,
    };
  }
}

export function json<T = unknown>(answer: Answer): T {
  return JSON.parse(answer.text) as T;
}

/** A short description for assertion messages. */
export function describeResult(result: CallResult): string {
  return result.answered
    ? `${result.status} ${result.text.slice(0, 300)}`
    : `no answer (${result.error}) after ${Math.round(result.ms)} ms`;
}
