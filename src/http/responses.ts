/** Response descriptions shared by the route schemas, so the OpenAPI document lists every answer. */
import { ErrorKinds } from '../errors.ts';
import { PROBLEM_CONTENT_TYPE, ProblemSchema } from './problem.ts';

const descriptions: Record<number, string> = Object.fromEntries(
  Object.values(ErrorKinds).map((k) => [k.status, k.title]),
);
descriptions[400] =
  'Malformed body, header or parameter; a failed field rule; an unknown field; or a fixed field that differs';
descriptions[409] =
  'It changed since it was read (a stale version or updatedAt), the Idempotency-Key is still in flight, a room would lose its last owner, or a message would hold a 21st different emoji';

/** Problem responses for these statuses, as `application/problem+json`. */
export function problemResponses(...statuses: number[]): Record<number, object> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: descriptions[status] ?? 'Problem',
        content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
      },
    ]),
  );
}

/** Answers any /api route can give besides its own. */
export const COMMON_PROBLEMS = [401, 429, 500, 503] as const;

/** A documented response header: its schema, with the description next to it (the generator moves it out). */
export function header(description: string, schema: object = { type: 'string' }) {
  return { ...schema, description };
}

/** A change sequence number sent in a header: an integer, written in decimal digits. */
export const EVENT_SEQ = { type: 'string', pattern: '^(0|[1-9][0-9]*)$' } as const;
