import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { OperationObject } from '@nestjs/swagger';
import { ApiModule } from './api.module';
import { Gr4vyErrorSchema, ProblemSchema, withProblems } from '../platform/openapi/api-problems';
import { toOpenApi31 } from '../platform/openapi/openapi31';
import { CommonErrors } from '../platform/problem/common.errors';
import { ProblemDefinition, problemDefinitions, problemType } from '../platform/problem/problem';
import { loadConfig } from '../platform/config/config';
import { forwardAuthenticationSchemas } from '../modules/forwarding-setup/authentication-methods/openapi';
import { ForwardJobResponse } from '../modules/forwarding/jobs/dto/forward-job.dto';
import { admitDownstreamAnswers, forwardOperation } from '../modules/forwarding/entry/forward.openapi';
import { inboundOperation } from '../modules/inbound/entry/inbound.openapi';

/** The package's own version, so the document says which build it describes. */
function packageVersion(): string {
  // dist/app/bootstrap and src/app/bootstrap are both two levels below the package root.
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

type Operation = {
  parameters?: Array<{ in: string }>;
  requestBody?: unknown;
  responses: Record<string, unknown>;
  security?: unknown[];
};

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** Methods whose request body the HTTP layer reads (and may refuse) whether or not the route takes one. */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete', 'options']);

/**
 * The problems any route can answer with, whatever its feature: its own failure (500), a dependency
 * away (503, on routes that read the database: every route behind a token), and, on routes that
 * take a body (or are called with a method whose body the HTTP layer parses: a DELETE sent a body it
 * cannot read is 415 or 400 before any handler) or a path parameter, what the HTTP layer and the
 * validation pipe refuse before the handler runs.
 */
function commonProblems(operation: Operation, method: string): ProblemDefinition[] {
  const problems: ProblemDefinition[] = [CommonErrors.internalError];
  if (operation.security === undefined || operation.security.length > 0) problems.push(CommonErrors.serviceUnavailable);
  if (operation.requestBody !== undefined || BODY_METHODS.has(method)) {
    // bad-request: a body the HTTP layer cannot read at all (bytes that are not UTF-8 make fastify's
    // count disagree with Content-Length), before any JSON parsing.
    problems.push(
      CommonErrors.invalidJson,
      CommonErrors.jsonTooDeep,
      CommonErrors.payloadTooLarge,
      CommonErrors.unsupportedMediaType,
      CommonErrors.badRequest,
    );
  }
  // A path parameter longer than any id (414), with a NUL character, which PostgreSQL cannot take (400
  // validation-failed), or not valid percent-encoded UTF-8, which the router cannot decode (400 bad-request).
  if (operation.parameters?.some((p) => p.in === 'path'))
    problems.push(CommonErrors.uriTooLong, CommonErrors.validationFailed, CommonErrors.badRequest);
  return problems;
}

/**
 * What Node's HTTP server answers before any route is known (api-app.ts: `clientError`, `checkExpectation`):
 * bytes it cannot parse, a request that did not arrive in time, headers over 16 KiB, an Expect other than
 * 100-continue. Listed once, at the document's root, keyed by status as an operation's responses are, rather
 * than on every operation: such a request may name no operation at all (`HELLO WORLD`, a timeout mid-line).
 */
const HTTP_LAYER_RESPONSES_KEY = 'x-http-layer-responses';
const HTTP_LAYER_PROBLEMS: ProblemDefinition[] = [
  CommonErrors.badRequest,
  CommonErrors.requestTimeout,
  CommonErrors.expectationFailed,
  CommonErrors.headerFieldsTooLarge,
];

/** The document's header: what, which version, where, how to authenticate, and every problem type. */
function documentConfig(): Omit<OpenAPIObject, 'paths'> {
  const problemList = problemDefinitions()
    .map((p) => `- \`${problemType(p.code)}\` (${p.status}) ${p.title}`)
    .join('\n');
  return (
    new DocumentBuilder()
      .setTitle('Vault forwarding API')
      .setDescription(
        [
          'Forward requests to third parties with card data filled in from the vault.',
          '',
          'Authenticate with `Authorization: Bearer <JWT>` signed by an API key (ES512 or ES256; see the README). ' +
            'Each operation lists the scope it requires in `x-required-scope`; operations with `security: []` need no token.',
          '',
          'Every error is `application/problem+json` (RFC 9457), or Gr4vy’s error body (`Gr4vyError`, ' +
            '`application/json`, what the Gr4vy SDKs read) when the request’s Accept ranks `application/json` above ' +
            '`application/problem+json`; no Accept or `*/*` gets the problem. ' +
            'Each operation lists, per status, the problem codes it can answer with, in both shapes. ' +
            'Requests the HTTP layer cannot parse at all (a malformed request line, headers over 16 KiB, an ' +
            'Expect other than 100-continue) or that do not arrive whole in time (408 `request-timeout`, and the ' +
            'connection is closed) are answered with a problem too, listed by status in the document’s ' +
            `\`${HTTP_LAYER_RESPONSES_KEY}\`; so are unknown routes. Problem types:`,
          problemList,
        ].join('\n'),
      )
      .setVersion(packageVersion())
      // Relative: the document is served by the API it describes, at whatever address that is.
      .addServer('/', 'This service')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
      .addSecurityRequirements('bearer')
      .build()
  );
}

/**
 * The OpenAPI document of the API as `app` mounts it: the decorators' operations, POST /vault-forward
 * (written by hand, see forward.openapi.ts), the authentication-method schemas, the problems common
 * to every route, and `security: []` on every route that needs no token; as OpenAPI 3.1 (openapi31.ts).
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(app, documentConfig(), {
    extraModels: [ProblemSchema, Gr4vyErrorSchema, ForwardJobResponse],
  });
  // One schema per authentication method kind, built from the kind descriptions (oneOf targets).
  Object.assign(((document.components ??= {}).schemas ??= {}), forwardAuthenticationSchemas());
  const forward = forwardOperation();
  const inbound = inboundOperation();
  for (const { path, method, operation } of [forward, inbound])
    document.paths[path] = { ...document.paths[path], [method]: operation as unknown as OperationObject };
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation) continue;
      // Routes behind a token say so through @ApiBearerAuth (the Require*Scope decorators); the rest are public.
      operation.security ??= [];
      operation.responses = withProblems(operation.responses, commonProblems(operation, method));
      if ((operation as unknown) === forward.operation || (operation as unknown) === inbound.operation)
        admitDownstreamAnswers(operation.responses);
    }
  }
  Object.assign(document, { [HTTP_LAYER_RESPONSES_KEY]: withProblems({}, HTTP_LAYER_PROBLEMS) });
  describeOperations(document);
  return toOpenApi31(withoutOrphanSchemas(document));
}

/**
 * What Spectral's `spectral:oas` asks of every document (`npm run openapi:lint`): each tag an operation uses
 * declared at the top, in order of first use; each operation with a description. An operation that has none of
 * its own gets its summary and who may call it (the scope of `x-required-scope`, or no token), which is what a
 * reader of the reference needs first.
 */
function describeOperations(document: OpenAPIObject): void {
  const tags: string[] = [];
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      for (const tag of operation.tags ?? []) if (!tags.includes(tag)) tags.push(tag);
      if (operation.description) continue;
      const scope = (operation as { 'x-required-scope'?: string })['x-required-scope'];
      const access =
        operation.security?.length === 0
          ? 'No token needed.'
          : scope
            ? `Needs a token with the scope \`${scope}\`.`
            : 'Needs a token.';
      operation.description = [operation.summary, access].filter(Boolean).join(' ');
    }
  }
  const declared = new Set((document.tags ?? []).map((tag) => tag.name));
  document.tags = [...(document.tags ?? []), ...tags.filter((tag) => !declared.has(tag)).map((name) => ({ name }))];
}

const SCHEMA_REF = '#/components/schemas/';

/**
 * Component schemas nothing in the document refers to, left out: a DTO registered by a decorator but answered
 * through other schemas (an authentication method's list items are the per-kind `oneOf`) is noise to a client's
 * code generator.
 */
function withoutOrphanSchemas(document: OpenAPIObject): OpenAPIObject {
  const schemas = document.components?.schemas ?? {};
  const referenced = (value: unknown): Set<string> => {
    const names = new Set<string>();
    JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'string' && v.startsWith(SCHEMA_REF)) names.add(v.slice(SCHEMA_REF.length));
      return v;
    });
    return names;
  };
  // What the paths and the document's own members reach, then what those schemas reach, until nothing is added.
  const { components: _components, ...rest } = document;
  const reached = referenced(rest);
  for (let queue = [...reached]; queue.length > 0;) {
    for (const name of referenced(schemas[queue.pop()!])) {
      if (!reached.has(name)) {
        reached.add(name);
        queue.push(name);
      }
    }
  }
  for (const name of Object.keys(schemas)) if (!reached.has(name)) delete schemas[name];
  return document;
}

/** Serves the document at /openapi.json and /openapi.yaml, and the browsable page at /docs. */
export function serveOpenApi(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
}

/**
 * The same document without a database, Redis or a listening server: Nest's preview mode builds the
 * module graph without running a single provider factory, which is all the document needs. For the
 * OpenAPI lint, the generated client's types and `npm run openapi`.
 */
export async function openApiDocumentOffline(): Promise<OpenAPIObject> {
  const config = loadConfig({
    NODE_ENV: 'test',
    // Never connected to (preview mode): they only satisfy the configuration's rules.
    DATABASE_URL: 'postgres://offline.invalid/openapi',
    CURSOR_SECRET: 'openapi-document-offline-never-used-0123456789',
    VAULT_MASTER_KEYS: `offline:${Buffer.alloc(32).toString('base64')}`,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    ApiModule.forRoot({ config, databaseUrl: config.databaseUrl! }),
    new FastifyAdapter(),
    {
      preview: true,
      logger: false,
    },
  );
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
