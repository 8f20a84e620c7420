/**
 * ETags and the If-Match / If-None-Match preconditions (RFC 9110 section 13.1).
 * A message's ETag is the strong validator "<version>".
 */
import { AppError, ErrorKinds } from '../errors.ts';

export function etagOf(version: number): string {
  return `"${version}"`;
}

interface EntityTag {
  readonly weak: boolean;
  readonly opaque: string;
}

type TagList = '*' | EntityTag[];

const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/** Parses `*` or a comma-separated list of entity-tags; throws a 400 naming the header otherwise. */
function parseTagList(header: string, name: string): TagList {
  const trimmed = header.trim();
  if (trimmed === '*') return '*';
  const tags: EntityTag[] = [];
  for (const part of trimmed.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const match = ENTITY_TAG.exec(item);
    if (match === null) {
      throw new AppError(ErrorKinds.validation, `${name} is not a list of entity-tags`, {
        errors: [{ header: name, detail: `${name} must be * or a list of entity-tags like "3"` }],
      });
    }
    tags.push({ weak: match[1] !== undefined, opaque: match[2]! });
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
