/**
 * What the OpenAPI document names once and references everywhere: every body
 * shape (components.schemas), the response headers the service adds to many
 * answers (components.headers), and the answers to requests no operation
 * lists (components.responses). Named schemas are found in the route schemas
 * by their `$id`; the routes keep them inline, so validation and
 * serialization are untouched and only the document is rewritten.
 */
import { CreateMessageBody, MessageSchema, UpdateMessageBody } from '../domain/message.ts';
import {
  LastMessageSchema,
  MembershipSchema,
  PutMembershipBody,
  PutReadMarkerBody,
  PutRoomBody,
  ReadMarkerSchema,
  RoomSchema,
  UserRoomSchema,
} from '../domain/room.ts';
import {
  MessageReactionsSchema,
  PutReactionBody,
  ReactionSchema,
  ReactionSummarySchema,
} from '../domain/reaction.ts';
import {
  MemberRemovedSchema,
  ReadMarkerChangeSchema,
  ResetSchema,
  StreamEventSchema,
} from './event-schemas.ts';
import { RevisionSchema } from '../domain/revision.ts';
import { HealthStatusSchema } from './health-routes.ts';
import {
  MembershipListSchema,
  MessageListSchema,
  RevisionListSchema,
  MessageReactionsListSchema,
  ReactionListSchema,
  ReactionSummaryListSchema,
  RoomListSchema,
  UserRoomListSchema,
} from './list-bodies.ts';
import { FieldErrorSchema, PROBLEM_CONTENT_TYPE, ProblemSchema } from './problem.ts';

const NAMED_SCHEMAS: readonly { readonly $id?: string }[] = [
  MessageSchema,
  CreateMessageBody,
  UpdateMessageBody,
  MessageListSchema,
  RevisionSchema,
  RevisionListSchema,
  RoomSchema,
  PutRoomBody,
  RoomListSchema,
  MembershipSchema,
  PutMembershipBody,
  MembershipListSchema,
  ReadMarkerSchema,
  PutReadMarkerBody,
  UserRoomSchema,
  LastMessageSchema,
  UserRoomListSchema,
  ReactionSchema,
  PutReactionBody,
  ReactionListSchema,
  ReactionSummarySchema,
  ReactionSummaryListSchema,
  MessageReactionsSchema,
  MessageReactionsListSchema,
  ProblemSchema,
  FieldErrorSchema,
  HealthStatusSchema,
  StreamEventSchema,
  MemberRemovedSchema,
  ReadMarkerChangeSchema,
  ResetSchema,
];
const NAMED = new Set(NAMED_SCHEMAS.map((s) => s.$id));

/** A copy of `node` with every named schema inside it (not `node` itself when `keepRoot`) replaced by its `$ref`. */
export function referencingNamed(node: unknown, keepRoot = false): unknown {
  if (Array.isArray(node)) return node.map((item) => referencingNamed(item));
  if (node === null || typeof node !== 'object') return node;
  const { $id } = node as { $id?: unknown };
  if (!keepRoot && typeof $id === 'string' && NAMED.has($id)) {
    return { $ref: `#/components/schemas/${$id}` };
  }
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, referencingNamed(value)]),
  );
}

export function namedSchemas(): Record<string, object> {
  return Object.fromEntries(
    NAMED_SCHEMAS.map((schema) => [schema.$id, referencingNamed(schema, true) as object]),
  );
}

const DIGITS = '^(0|[1-9][0-9]*)$';
/** A list of budgets as draft-ietf-httpapi-ratelimit-headers-10 writes them: `"name";key=value;...`. */
const ITEM = '"[a-z]+"(;[a-z]+=([0-9]+|"[^"]*"))*';
const BUDGETS = `^${ITEM}(, *${ITEM})*$`;

/** The headers the service adds to many answers, by their name in components.headers. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      "Identifies this request in the logs and in a problem's `instance`: the request's own X-Request-Id when it sent a well-formed one (1-128 characters of A-Z a-z 0-9 . _ ~ : -), else a fresh UUID.",
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'While rate limits are on: the budget this request spent, what remains of it (`r`) and the seconds until it refills (`t`), as in draft-ietf-httpapi-ratelimit-headers-10, e.g. `"write";r=49;t=10`. A 429 for too many open streams or lists adds that budget: `"events";r=0`.',
    schema: { type: 'string', pattern: BUDGETS },
  },
  'RateLimit-Policy': {
    description:
      'While rate limits are on: the budget this request spends, its size (`q` requests) and window (`w` seconds), e.g. `"write";q=50;w=10`. A 429 for too many open streams or lists adds that cap: `"events";q=20;qu="concurrency"`.',
    schema: { type: 'string', pattern: BUDGETS },
  },
  'Cache-Control': {
    description:
      '`no-cache` on every API answer: a cache must ask again before reusing it; `private, no-cache` when the URL carried an `access_token`.',
    schema: { type: 'string', pattern: '^(private, )?no-cache$' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again (an integer, as text).',
    schema: { type: 'string', pattern: DIGITS },
  },
  'WWW-Authenticate': {
    description:
      '`Bearer`, with `error="invalid_token"` when a token was sent and refused (RFC 6750).',
    schema: { type: 'string' },
  },
} as const;

type HeaderName = keyof typeof RESPONSE_HEADERS;
const ref = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

/** Answers to requests that no operation lists; the document's `x-unlisted-requests` points to them. */
export const UNLISTED_RESPONSES = {
  TrailingSlashRedirect: {
    description:
      'A known path with a trailing slash: moved to the path without it, the query kept (301 for GET and HEAD, 308 for other methods, so the method and body are kept). A token in the query is never repeated in Location.',
    headers: {
      Location: { description: 'The path without the trailing slash.', schema: { type: 'string' } },
      'X-Request-Id': ref('X-Request-Id'),
    },
  },
  MethodNotAllowed: {
    description: 'A method that a known path does not support (for example DELETE of a room).',
    headers: {
      Allow: {
        description: 'The methods the path supports, e.g. `GET, HEAD, PUT`.',
        schema: { type: 'string' },
      },
      'X-Request-Id': ref('X-Request-Id'),
    },
    content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } },
  },
  NoSuchPath: {
    description: 'A path the service does not have.',
    headers: { 'X-Request-Id': ref('X-Request-Id') },
    content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } },
  },
} as const;

export const UNLISTED_REQUESTS_EXTENSION = {
  description:
    'What requests that no operation lists answer: a listed path with a trailing slash is redirected, a method a listed path lacks is a 405 with Allow, anything else a 404.',
  responses: {
    '301': { $ref: '#/components/responses/TrailingSlashRedirect' },
    '308': { $ref: '#/components/responses/TrailingSlashRedirect' },
    '404': { $ref: '#/components/responses/NoSuchPath' },
    '405': { $ref: '#/components/responses/MethodNotAllowed' },
  },
};

/** Paths whose answers spend (and so report) a rate-limit budget. */
function rateLimited(path: string): boolean {
  return path.startsWith('/api/') || path === '/readyz' || path === '/metrics';
}

interface ResponseObject {
  headers?: Record<string, unknown>;
}

/**
 * Declares the headers added outside the routes on every answer that carries
 * them: X-Request-Id everywhere, Cache-Control on /api, the rate-limit pair where a budget is spent,
 * Retry-After on 409/429/503 and WWW-Authenticate on 401.
 */
export function declareCommonHeaders(path: string, responses: Record<string, ResponseObject>) {
  for (const [status, response] of Object.entries(responses)) {
    const headers: Record<string, unknown> = { ...response.headers };
    const declared = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    headers['X-Request-Id'] = ref('X-Request-Id');
    // The event stream declares its own (no-transform added).
    if (path.startsWith('/api/') && !declared.has('cache-control')) {
      headers['Cache-Control'] = ref('Cache-Control');
    }
    if (rateLimited(path)) {
      headers.RateLimit = ref('RateLimit');
      headers['RateLimit-Policy'] = ref('RateLimit-Policy');
    }
    if (status === '409' || status === '429' || status === '503') {
      headers['Retry-After'] = ref('Retry-After');
    }
    if (status === '401') headers['WWW-Authenticate'] = ref('WWW-Authenticate');
    response.headers = headers;
  }
}
