/** A non-2xx answer, as an Error that carries the service's RFC 9457 problem. */
import type { components } from './openapi.ts';

type Problem = components['schemas']['Problem'];

export class ProblemError extends Error {
  readonly status: number;
  /** The problem the service answered, when it answered one. */
  readonly problem: Problem | undefined;
  readonly response: Response;

  constructor(response: Response, problem: Problem | undefined) {
    super(
      problem === undefined
        ? `${response.status} ${response.statusText}`
        : `${problem.status} ${problem.title}: ${problem.detail}`,
    );
    this.name = 'ProblemError';
    this.status = response.status;
    this.problem = problem;
    this.response = response;
  }
}

/** The problem in an openapi-fetch `error`, if it is one. */
export function problemFrom(error: unknown): Problem | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { type, status } = error as Partial<Problem>;
  return typeof type === 'string' && typeof status === 'number' ? (error as Problem) : undefined;
}
