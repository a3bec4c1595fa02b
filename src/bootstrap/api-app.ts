import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { ApiModule } from '../api.module';
import { CoreOptions } from '../core.module';
import { ProblemSchema } from '../common/openapi/api-problems';
import { problemDefinitions, problemType } from '../common/problem/problem';
import { requestIdFor } from '../logging/logging.module';
import { ForwardHttpHandler } from '../forwarding/forward-http-handler';

/** Request bodies above this are refused with 413 before any handler runs. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Builds the HTTP application exactly as `npm start` runs it; e2e tests call this too, so they
 * exercise the same filters, guard, pipes and OpenAPI document.
 */
export async function createApiApp(
  options: Omit<CoreOptions, 'role'>,
  /** Extra modules mounted beside the API's own (tests add probe routes this way). */
  extra: { imports?: ModuleMetadata['imports'] } = {},
): Promise<NestFastifyApplication> {
  // POST /vault-forward is answered straight from Node's server, ahead of fastify (forward-http-handler.ts).
  let forwardHandler: ForwardHttpHandler | undefined;
  const adapter = new FastifyAdapter({
    serverFactory: (fastifyHandler: (req: IncomingMessage, res: ServerResponse) => void) => {
      const server = createServer((req, res) => {
        if (forwardHandler && ForwardHttpHandler.matches(req)) forwardHandler.handle(req, res);
        else fastifyHandler(req, res);
      });
      // What fastify sets on a server it creates itself.
      server.keepAliveTimeout = 72_000;
      return server;
    },
    bodyLimit: BODY_LIMIT_BYTES,
    logger: false,
    // The same id for fastify, pino-http's log line and the x-request-id response header.
    genReqId: requestIdFor,
    return503OnClosing: true,
  });
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(options, extra.imports), adapter, {
    bufferLogs: true,
    // Body parsers are ours (below): JSON only, with fastify's safe parser; anything else is a 415.
    bodyParser: false,
  });
  registerBodyParsers(app);
  app.useLogger(app.get(Logger));
  // Every response, errors included, names the request id that its log line carries.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', async (request, reply) => {
      const id = (request.raw as { id?: unknown }).id;
      if (typeof id === 'string') reply.header('x-request-id', id);
    });
  setUpOpenApi(app);
  await app.init();
  forwardHandler = app.get(ForwardHttpHandler);
  return app;
}

/**
 * Every Nest route accepts JSON only (fastify's own safe parser), anything else being a 415. (The
 * forward route takes any content type as raw bytes, but it never reaches fastify.)
 */
function registerBodyParsers(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const json = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, json);
  fastify.addContentTypeParser('*', (_request, _payload, done) => {
    done(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }), undefined);
  });
}

function setUpOpenApi(app: NestFastifyApplication): void {
  const problemList = problemDefinitions()
    .map((p) => `- \`${problemType(p.code)}\` (${p.status}) ${p.title}`)
    .join('\n');
  const config = new DocumentBuilder()
    .setTitle('Vault forwarding API')
    .setDescription(
      [
        'Forward requests to third parties with card data filled in from the vault.',
        '',
        'Authenticate with `Authorization: Bearer <JWT>` signed by an API key (ES512 or ES256; see the README). ' +
          'Each operation lists the scope it requires in `x-required-scope`.',
        '',
        'Every error is `application/problem+json` (RFC 9457). Problem types:',
        problemList,
      ].join('\n'),
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ProblemSchema] });
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}
