/**
 * The one text normalization of search: a message's content and a query's
 * `q` are both made comparable here, so SQLite and PostgreSQL index the very
 * same string and a term matches the same messages on either engine.
 */
import { AppError, ErrorKinds } from '../errors.ts';

export const MAX_Q_CODE_POINTS = 200;
const MAX_SEARCH_TERMS = 10;
/** Shorter terms cannot use a trigram index: they are allowed only beside a longer term or a room. */
const MIN_INDEXED_TERM = 3;

/** A search as the stores see it: `text` as asked (for the next page's link), `terms` normalized. */
export interface SearchQuery {
  readonly text: string;
  /** 1-10 terms, each without White_Space; a message matches when its searchText contains every one. */
  readonly terms: readonly string[];
}

/**
 * NFKC, then Unicode default lowercasing (JavaScript's toLowerCase()). Stored
 * with each message at write time: the engines never normalize themselves
 * (PostgreSQL's lower() depends on the database's locale).
 */
export function searchText(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

const WHITE_SPACE = /\p{White_Space}+/u;
/** What no content may hold (message.ts): a term with it could match nothing, and no engine takes NUL. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const NEVER_IN_CONTENT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|\p{Cs}/u;

function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    // A surrogate pair is one code point: count its high half only.
    const unit = text.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff) n++;
  }
  return n;
}

function invalidQ(detail: string): AppError {
  return new AppError(ErrorKinds.validation, `q ${detail}`, {
    errors: [{ parameter: 'q', detail: `q ${detail}` }],
  });
}

/**
 * The terms of `q`, or a 400 naming `q`: 1-200 code points, 1-10 terms after
 * normalizing, and a term under 3 code points only beside one of 3 or more
 * or within one room (`inRoom`): such a term can only be checked row by row.
 */
export function searchQuery(q: string, inRoom: boolean): SearchQuery {
  const length = codePoints(q);
  if (length < 1 || length > MAX_Q_CODE_POINTS) {
    throw invalidQ(`must be 1-${MAX_Q_CODE_POINTS} code points`);
  }
  if (NEVER_IN_CONTENT.test(q)) {
    throw invalidQ('must not contain control characters (or invalid Unicode)');
  }
  const split = searchText(q)
    .split(WHITE_SPACE)
    .filter((t) => t !== '');
  if (split.length === 0) throw invalidQ('must hold at least one term (it is blank)');
  if (split.length > MAX_SEARCH_TERMS)
    throw invalidQ(`must hold at most ${MAX_SEARCH_TERMS} terms`);
  // A repeated term asks nothing more.
  const terms = [...new Set(split)];
  if (!inRoom && !terms.some((t) => codePoints(t) >= MIN_INDEXED_TERM)) {
    throw invalidQ(`needs a term of at least ${MIN_INDEXED_TERM} characters, unless room is given`);
  }
  return { text: q, terms };
}

/** The terms a trigram index can serve (3 code points or more). */
export function indexedTerms(terms: readonly string[]): string[] {
  return terms.filter((t) => codePoints(t) >= MIN_INDEXED_TERM);
}
