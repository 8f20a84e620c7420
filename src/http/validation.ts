/**
 * Request validation with Ajv, compiled from the route schemas. Bodies are
 * checked as sent (no coercion, unknown fields refused, never dropped); query
 * strings are coerced from text to the declared types.
 */
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../errors.ts';
import { shorten } from './shorten.ts';

// ajv-formats ships CommonJS whose default export TypeScript sees one level deep.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export type ValidationFailure = ErrorObject;

/** The longest field name a failure repeats (a client may send a 60 KB one). */
const MAX_NAME_CHARS = 64;

const common: Options = {
  allErrors: true,
  strict: false,
  unicodeRegExp: true,
  removeAdditional: false,
  useDefaults: false,
  verbose: true,
};

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ ...common, ...options });
  addFormats(ajv, ['date-time']);
  return ajv;
}

const bodyAjv = createAjv({ coerceTypes: false });
const queryAjv = createAjv({ coerceTypes: 'array' });

export function compileValidator({ schema, httpPart }: { schema: object; httpPart?: string }) {
  return (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema);
}

function describe(field: string, error: ErrorObject): string {
  const name = field === '' ? 'the body' : field;
  switch (error.keyword) {
    case 'pattern':
    case 'enum':
    case 'anyOf': {
      const schema = error.parentSchema as { 'x-rule'?: string; description?: string } | undefined;
      return `${name} ${schema?.['x-rule'] ?? `is not valid: ${schema?.description ?? error.message}`}`;
    }
    case 'type':
      return `${name} must be ${String((error.params as { type: string }).type)}`;
    default:
      return `${name} ${error.message ?? 'is not valid'}`;
  }
}

/**
 * One field error per Ajv failure, located by pointer, parameter or header as
 * the part says; unknown names are shortened (see problem.ts for the bounds
 * on the whole document).
 */
export function fieldErrorsFrom(failures: readonly ErrorObject[], part: string): FieldError[] {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  // A union (`'public' | 'private'`) reports each branch's failure before its own: where the
  // union states its rule, that rule is the one failure to show.
  const ruled = new Set(
    failures.filter((f) => f.keyword === 'anyOf' && hasRule(f)).map((f) => f.instancePath),
  );
  for (const failure of failures) {
    if (failure.keyword !== 'anyOf' && ruled.has(failure.instancePath)) continue;
    let path = failure.instancePath;
    let detail: string;
    if (failure.keyword === 'additionalProperties') {
      const extra = shorten(
        (failure.params as { additionalProperty: string }).additionalProperty,
        MAX_NAME_CHARS,
      );
      path = `${path}/${escapePointer(extra)}`;
      detail = `${JSON.stringify(extra)} is not a known field`;
    } else if (failure.keyword === 'required') {
      const missing = (failure.params as { missingProperty: string }).missingProperty;
      path = `${path}/${escapePointer(missing)}`;
      detail = `${missing} is required`;
    } else {
      detail = describe(unescapePointer(path.slice(1)), failure);
    }
    // A union reports one failure per branch: keep the first per location.
    if (seen.has(path)) continue;
    seen.add(path);
    const name = unescapePointer(path.split('/')[1] ?? '');
    if (part === 'querystring') errors.push({ parameter: name, detail });
    else if (part === 'headers') errors.push({ header: name, detail });
    else errors.push({ pointer: `#${path}`, detail });
  }
  return errors;
}

function hasRule(failure: ErrorObject): boolean {
  return (
    typeof (failure.parentSchema as { 'x-rule'?: unknown } | undefined)?.['x-rule'] === 'string'
  );
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}
