/**
 * The OpenAPI document cannot drift from the behaviour: every response a
 * contract test receives is checked against the document the app itself
 * serves at /api/openapi.json — the path template, the method, the status
 * (it must be documented), the content type, the body schema (Ajv, JSON
 * Schema 2020-12, as OpenAPI 3.1 says) and every documented header that is
 * present. Paths the document does not list may only answer what the
 * docs/errors.md says unknown paths answer (301/308 to a known path, 404, 405 with
 * Allow), as an RFC 9457 problem of the documented shape.
 */
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

// ajv-formats ships CommonJS whose default export TypeScript sees one level deep.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Schema = Record<string, unknown>;

interface MediaType {
  readonly schema?: Schema;
}

interface HeaderObject {
  readonly schema?: Schema;
  readonly $ref?: string;
}

interface ResponseObject {
  readonly content?: Record<string, MediaType>;
  readonly headers?: Record<string, HeaderObject>;
}

interface Operation {
  readonly responses: Record<string, ResponseObject>;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components?: {
    readonly schemas?: Record<string, Schema>;
    readonly headers?: Record<string, HeaderObject>;
  };
}

/** What a check needs of a response, whether it came from inject or a real socket. */
export interface ReceivedResponse {
  readonly method: string;
  /** The request URL (path and query). */
  readonly url: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
  /** The body as text ('' when there is none). */
  readonly body: string;
}

const PROBLEM = 'application/problem+json';

function headerText(value: string | string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

export class OpenApiConformance {
  readonly document: OpenApiDocument;
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true, unicodeRegExp: true });
  readonly #validators = new WeakMap<object, ValidateFunction>();
  readonly #templates: { readonly template: string; readonly pattern: RegExp }[];
  /** The problem schema the document uses: unknown paths must answer in this shape too. */
  readonly #problemSchema: Schema;

  constructor(document: OpenApiDocument) {
    assert.match(document.openapi, /^3\.1\./, 'the document is OpenAPI 3.1');
    this.document = document;
    addFormats(this.#ajv);
    this.#templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(
        `^${template
          .split('/')
          .map((part) =>
            /^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/')}$`,
      ),
    }));
    const problem = Object.values(document.paths)
      .flatMap((ops) => Object.values(ops))
      .flatMap((op) => Object.values(op.responses ?? {}))
      .map((r) => r.content?.[PROBLEM]?.schema)
      .find((s) => s !== undefined);
    assert.ok(problem, 'the document describes application/problem+json responses');
    this.#problemSchema = problem;
  }

  /** Fetches the app's own document. */
  static async of(app: FastifyInstance): Promise<OpenApiConformance> {
    const response = await app.inject({ url: '/api/openapi.json' });
    assert.equal(response.statusCode, 200, 'GET /api/openapi.json');
    return new OpenApiConformance(response.json() as OpenApiDocument);
  }

  /** The path template that `path` matches, if the document lists one. */
  templateFor(path: string): string | undefined {
    // A literal template wins over one with parameters, as routers do.
    const matches = this.#templates.filter((t) => t.pattern.test(path));
    return (matches.find((t) => !t.template.includes('{')) ?? matches[0])?.template;
  }

  /** Throws an AssertionError saying how `response` differs from the document. */
  check(response: ReceivedResponse): void {
    const path = response.url.split('?')[0]!;
    const where = `${response.method} ${response.url} -> ${response.status}`;
    const template = this.templateFor(path);
    const method = response.method.toLowerCase() === 'head' ? 'get' : response.method.toLowerCase();
    const operation = template === undefined ? undefined : this.document.paths[template]![method];
    if (operation === undefined) {
      this.#checkUndocumented(response, template !== undefined, where);
      return;
    }
    const status = String(response.status);
    const documented =
      operation.responses[status] ??
      operation.responses[`${status[0]}XX`] ??
      operation.responses.default;
    assert.ok(
      documented,
      `${where}: status ${status} is not documented for ${method.toUpperCase()} ${template} (documented: ${Object.keys(operation.responses).join(', ')})`,
    );
    this.#checkHeaders(response, documented, where);
    if (response.method.toUpperCase() === 'HEAD') {
      assert.equal(response.body, '', `${where}: HEAD has no body`);
      return;
    }
    this.#checkBody(response, documented, where);
  }

  #checkUndocumented(response: ReceivedResponse, knownPath: boolean, where: string): void {
    const allowed = knownPath ? [301, 308, 405] : [301, 308, 404];
    assert.ok(
      allowed.includes(response.status),
      `${where}: not in the document, so only ${allowed.join('/')} may answer`,
    );
    if (response.status === 301 || response.status === 308) {
      const location = headerText(response.headers.location);
      assert.ok(location, `${where}: a redirect has a Location`);
      assert.ok(
        this.templateFor(location.split('?')[0]!),
        `${where}: redirects to a documented path (${location})`,
      );
      return;
    }
    if (response.status === 405) assert.ok(response.headers.allow, `${where}: 405 has Allow`);
    this.#checkBody(
      response,
      { content: { [PROBLEM]: { schema: this.#problemSchema } } },
      `${where} (undocumented path)`,
    );
  }

  #checkHeaders(response: ReceivedResponse, documented: ResponseObject, where: string): void {
    for (const [name, declared] of Object.entries(documented.headers ?? {})) {
      const definition = this.#resolved(declared);
      const value = headerText(response.headers[name.toLowerCase()]);
      if (value === undefined || definition.schema === undefined) continue;
      const schema = definition.schema;
      const typed = schema.type === 'integer' || schema.type === 'number' ? Number(value) : value;
      this.#validate(schema, typed, `${where}: header ${name}`);
    }
  }

  /** A header declared by `$ref` (#/components/headers/...): the one it points to. */
  #resolved(header: HeaderObject): HeaderObject {
    if (header.$ref === undefined) return header;
    const name = header.$ref.replace('#/components/headers/', '');
    const found = this.document.components?.headers?.[name];
    assert.ok(found, `the document declares the header ${header.$ref}`);
    return found;
  }

  #checkBody(response: ReceivedResponse, documented: ResponseObject, where: string): void {
    const content = documented.content ?? {};
    const contentType = headerText(response.headers['content-type']);
    if (Object.keys(content).length === 0) {
      assert.equal(response.body, '', `${where}: the document says there is no body`);
      return;
    }
    assert.ok(contentType, `${where}: a body has a Content-Type`);
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    const media = content[mediaType];
    assert.ok(
      media,
      `${where}: Content-Type ${mediaType} is not documented (documented: ${Object.keys(content).join(', ')})`,
    );
    if (media.schema === undefined) return;
    let body: unknown = response.body;
    if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
      try {
        body = JSON.parse(response.body);
      } catch {
        assert.fail(`${where}: the body is not JSON: ${response.body.slice(0, 200)}`);
      }
    }
    this.#validate(media.schema, body, `${where}: body`);
  }

  #validate(schema: Schema, value: unknown, what: string): void {
    let validate = this.#validators.get(schema);
    if (validate === undefined) {
      // The document's `$ref`s point into it (#/components/schemas/...): resolve them there.
      const components = this.document.components;
      validate = this.#ajv.compile(components === undefined ? schema : { ...schema, components });
      this.#validators.set(schema, validate);
    }
    if (!validate(value)) {
      const shown = JSON.stringify(value)?.slice(0, 300);
      assert.fail(
        `${what} does not match the document: ${this.#ajv.errorsText(validate.errors)}; got ${shown}`,
      );
    }
  }
}

/** `app.inject`, with every response checked against the document before the test sees it. */
export type CheckedInject = (options: InjectOptions | string) => Promise<LightMyRequestResponse>;

export function checkedInject(
  app: FastifyInstance,
  conformance: OpenApiConformance,
): CheckedInject {
  return async (options) => {
    const opts: InjectOptions = typeof options === 'string' ? { url: options } : options;
    const response = await app.inject(opts);
    const url =
      typeof opts.url === 'string' ? opts.url : ((opts.path as string | undefined) ?? '/');
    conformance.check({
      method: opts.method ?? 'GET',
      url: appendQuery(url, opts.query),
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
    });
    return response;
  };
}

function appendQuery(url: string, query: InjectOptions['query']): string {
  if (query === undefined || typeof query === 'string') {
    return query === undefined || query === '' ? url : `${url}?${query}`;
  }
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    for (const item of [v].flat()) params.append(k, String(item));
  }
  const text = params.toString();
  return text === '' ? url : `${url}${url.includes('?') ? '&' : '?'}${text}`;
}

/** `fetch` against a listening app, checked the same way; resolves with the body read as text. */
export async function checkedFetch(
  conformance: OpenApiConformance,
  baseUrl: string,
  path: string,
  init: RequestInit = {},
): Promise<{ response: Response; body: string }> {
  const response = await fetch(`${baseUrl}${path}`, { redirect: 'manual', ...init });
  const body = await response.text();
  conformance.check({
    method: init.method ?? 'GET',
    url: path,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body,
  });
  return { response, body };
}
