/**
 * Request validation with Ajv, compiled from the route schemas. Bodies are
 * checked as sent (no coercion, unknown fields refused, never dropped); query
 * strings are coerced from text to the declared types, after checks of their
 * own (see strictQuery).
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../errors.ts';
import { MalformedText } from './query-parser.ts';
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
  if (httpPart === 'body') return bodyAjv.compile(schema);
  const validate = queryAjv.compile(schema);
  return httpPart === 'querystring' ? strictQuery(schema, validate) : validate;
}

interface PropertySchema {
  readonly type?: unknown;
  readonly items?: { readonly type?: unknown };
}

/** An integer as text: no sign but a minus, no leading zero, no space, no exponent, no hex. */
const INTEGER_TEXT = /^(?:0|-?[1-9][0-9]*)$/;

/**
 * What Ajv's coercion lets through and a query's rules do not: it reads text
 * as JavaScript's Number() does (`0x10`, `1e1`, ` 2`, `+1`, `01` are numbers
 * to it), and it reports a parameter given twice as one of the wrong type.
 * Checked on the text as sent, before Ajv coerces it; then Ajv's own checks.
 */
function strictQuery(schema: object, validate: ValidateFunction): ValidateFunction {
  const properties = Object.entries(
    (schema as { properties?: Record<string, PropertySchema> }).properties ?? {},
  );
  const strict = ((data: unknown) => {
    const query = (data ?? {}) as Record<string, unknown>;
    const failures: ErrorObject[] = [];
    for (const [name, property] of properties) {
      const failure = textFailure(name, property, query[name]);
      if (failure !== undefined) failures.push(failure);
    }
    // Ajv's own checks run too, so every parameter's failure is reported; one of a parameter
    // already refused here comes after ours, and only the first per parameter is shown.
    const valid = validate(data);
    if (failures.length === 0) {
      strict.errors = validate.errors;
      return valid;
    }
    strict.errors = [...failures, ...(validate.errors ?? [])];
    return false;
  }) as ValidateFunction;
  return strict;
}

function textFailure(
  name: string,
  property: PropertySchema,
  value: unknown,
): ErrorObject | undefined {
  if (value === undefined) return undefined;
  const failure = (keyword: string, message: string, params: Record<string, unknown> = {}) => ({
    instancePath: `/${escapePointer(name)}`,
    schemaPath: `#/properties/${escapePointer(name)}`,
    keyword,
    params,
    message,
  });
  const values = Array.isArray(value) ? value : [value];
  if (values.some((v) => v instanceof MalformedText)) {
    return failure('encoding', 'is not valid percent-encoded UTF-8');
  }
  const repeatable = property.type === 'array';
  if (!repeatable && values.length > 1) return failure('once', 'must be given once');
  const type = repeatable ? property.items?.type : property.type;
  if (type === 'integer' && values.some((v) => typeof v === 'string' && !INTEGER_TEXT.test(v))) {
    return failure('type', 'must be integer', { type: 'integer' });
  }
  return undefined;
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
