/**
 * ETags and the If-Match / If-None-Match preconditions (RFC 9110 section 13.1).
 * A message's ETag is the strong validator "<version>".
 */
import { Type } from '@sinclair/typebox';
import { assertPrecondition } from '../domain/write-rules.ts';
import { AppError, ErrorKinds } from '../errors.ts';

/** The request headers of a route that judges both preconditions (one schema for the document). */
export const CONDITIONAL_HEADERS = Type.Object({
  'if-match': Type.Optional(Type.String()),
  'if-none-match': Type.Optional(Type.String()),
});

export function etagOf(version: number): string {
  return `"${version}"`;
}

interface EntityTag {
  readonly weak: boolean;
  readonly opaque: string;
}

type TagList = '*' | EntityTag[];

/**
 * One element of a list: an entity-tag (a `,` may sit inside its quotes) or nothing (RFC 9110
 * section 5.6.1 allows empty elements), then a comma or the end.
 */
const LIST_ELEMENT = /[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(?:,|$)/y;

function malformed(name: string): AppError {
  return new AppError(ErrorKinds.validation, `${name} is not a list of entity-tags`, {
    errors: [{ header: name, detail: `${name} must be * or a list of entity-tags like "3"` }],
  });
}

/** Parses `*` or a comma-separated list of entity-tags; throws a 400 naming the header otherwise. */
function parseTagList(header: string, name: string): TagList {
  const trimmed = header.trim();
  if (trimmed === '*') return '*';
  const tags: EntityTag[] = [];
  let at = 0;
  while (at < trimmed.length) {
    LIST_ELEMENT.lastIndex = at;
    const match = LIST_ELEMENT.exec(trimmed);
    if (match === null || match[0].length === 0) throw malformed(name);
    if (match[2] !== undefined) tags.push({ weak: match[1] !== undefined, opaque: match[2] });
    at = LIST_ELEMENT.lastIndex;
  }
  if (tags.length === 0) {
    throw new AppError(ErrorKinds.validation, `${name} is empty`, {
      errors: [{ header: name, detail: `${name} must be * or a list of entity-tags` }],
    });
  }
  return tags;
}

/** A predicate on the current version for If-Match (strong comparison), or undefined when absent. */
export function ifMatchPrecondition(
  header: string | undefined,
): ((version: number) => boolean) | undefined {
  if (header === undefined) return undefined;
  const tags = parseTagList(header, 'if-match');
  if (tags === '*') return () => true;
  return (version) => tags.some((t) => !t.weak && t.opaque === String(version));
}

/**
 * A predicate on the current version for If-None-Match (weak comparison; true
 * means answer 304). Parsed before the message is looked up, so a malformed
 * header is a 400 even for an id that is not stored (the precedence in docs/errors.md).
 */
export function ifNoneMatchCondition(header: string | undefined): (version: number) => boolean {
  if (header === undefined) return () => false;
  const tags = parseTagList(header, 'if-none-match');
  if (tags === '*') return () => true;
  return (version) => tags.some((t) => t.opaque === String(version));
}

/** Headers that arrive more than once are joined as a list, as RFC 9110 allows. */
export function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The preconditions of a write (PUT, DELETE) as one predicate on the current version, or
 * undefined when neither header is sent: If-Match must match (strongly), and If-None-Match
 * must not (weakly; `*` never holds for a resource that exists). False is a 412 (RFC 9110
 * section 13.2.2). Parsed before anything is looked up, so a malformed header is a 400 first.
 */
export function writePrecondition(
  ifMatch: string | undefined,
  ifNoneMatch: string | undefined,
): ((version: number) => boolean) | undefined {
  const matches = ifMatchPrecondition(ifMatch);
  if (ifNoneMatch === undefined) return matches;
  const noneMatch = ifNoneMatchCondition(ifNoneMatch);
  if (matches === undefined) return (version) => !noneMatch(version);
  return (version) => matches(version) && !noneMatch(version);
}

/**
 * The preconditions of a GET, evaluated on the current version in RFC 9110's order: an
 * If-Match that does not match is a 412; then true means an If-None-Match matched (304).
 * Parsed before the lookup, so a malformed header is a 400 even for what is not stored.
 */
export function readPreconditions(
  ifMatch: string | undefined,
  ifNoneMatch: string | undefined,
): (version: number) => boolean {
  const matches = ifMatchPrecondition(ifMatch);
  const notModified = ifNoneMatchCondition(ifNoneMatch);
  if (matches === undefined) return notModified;
  return (version) => {
    assertPrecondition(version, matches);
    return notModified(version);
  };
}
