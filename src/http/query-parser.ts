/**
 * The query string, parsed as the router's default parser does (fast-querystring),
 * except for a value that is not valid percent-encoded UTF-8 (`%FF`, `%zz`, a
 * lone `%`, an encoded surrogate): that one parser keeps its raw text, which a
 * search would then look for as it is. Here the parameter becomes MALFORMED,
 * which query validation (validation.ts) turns into a 400 naming it.
 */
import { parse } from 'fast-querystring';

/** A parameter whose value could not be decoded. */
export class MalformedText {
  private constructor() {}
  static readonly instance = new MalformedText();
}

export const MALFORMED = MalformedText.instance;

/** The text a percent-encoded query part stands for, or undefined if it is not valid UTF-8. */
function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

export function parseQuery(raw: string): Record<string, unknown> {
  const parsed: Record<string, unknown> = raw.length === 0 ? {} : parse(raw);
  // Nothing to decode, nothing malformed: the common case pays one scan.
  if (!raw.includes('%')) return parsed;
  for (const segment of raw.split('&')) {
    const equals = segment.indexOf('=');
    if (equals === -1 || decoded(segment.slice(equals + 1)) !== undefined) continue;
    // A name that does not decode names no parameter a route knows: ignored, as unknown ones are.
    const name = decoded(segment.slice(0, equals));
    if (name !== undefined) parsed[name] = MALFORMED;
  }
  return parsed;
}
