import { createServer, IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { Logger as NestLogger, ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiModule } from './api.module';
import { CoreOptions } from './core.module';
import { CommonErrors } from '../platform/problem/common.errors';
import { ProblemException } from '../platform/problem/problem';
import { problemResponse } from '../platform/problem/problem.filter';
import { AppLogger } from '../platform/logging/app-logger';
import { requestIdFor } from '../platform/logging/logging.module';
import { ForwardHttpHandler } from '../modules/forwarding/entry/forward-http-handler';
import { FORWARD_ROUTE, isForwardPath } from '../modules/forwarding/entry/forward-route';
import { SecureFieldsHttpHandler } from '../modules/payments/secure-fields/secure-fields-http-handler';
import { InboundHttpHandler } from '../modules/inbound/entry/inbound-http-handler';
import { INBOUND_ROUTE_TEMPLATE } from '../modules/inbound/entry/inbound-target';
import { nameSpansByRoute } from '../platform/telemetry/route-spans';
import { Metrics } from '../platform/metrics/metrics.service';
import { HttpMetrics, SECURE_FIELDS_ROUTE, UNMATCHED_ROUTE } from '../platform/metrics/http-metrics';
import { dashboardRoot, registerDashboard } from './web/dashboard-site';
import { applyServerLimits, serverOptions } from '../platform/http/http-limits';
import { buildOpenApiDocument, serveOpenApi } from './openapi-document';

/** Request bodies above this are refused with 413 before any handler runs. */
const BODY_LIMIT_BYTES = 1024 * 1024;

/** Request line plus headers (Node's default, stated): beyond it, 431 header-fields-too-large. */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Longest path parameter (fastify's default, stated): ids are UUIDs, slugs of at most 64 characters
 * or problem codes; a longer one is a 414 before any handler or query runs.
 */
const MAX_PARAM_LENGTH = 100;

/**
 * Deepest nesting of arrays and objects a JSON body may have. No DTO nests more than two levels, and
 * class-transformer and class-validator recurse per level: 5,000 levels overflowed the stack (a 500).
 */
const MAX_JSON_DEPTH = 64;

/**
 * Builds the HTTP application exactly as `npm start` runs it; e2e tests call this too, so they
 * exercise the same filters, guard, pipes and OpenAPI document.
 */
export async function createApiApp(
  options: Omit<CoreOptions, 'role'>,
  /** Extra modules mounted beside the API's own (tests add probe routes this way). */
  extra: { imports?: ModuleMetadata['imports'] } = {},
): Promise<NestFastifyApplication> {
  // POST /vault-forward is answered straight from Node's server, ahead of fastify (forward-http-handler.ts):
  // one server for both, so its timeouts and connection cap (http-limits.ts) cover both.
  // eslint-disable-next-line prefer-const -- assigned once the app exists, after the server factory ran
  let forwardHandler: ForwardHttpHandler | undefined;
  // The secure-fields origin's requests (by Host) are answered ahead of everything else: none of the API's routes,
  // the forward route included, exists on that origin (decision 0140).
  // eslint-disable-next-line prefer-const -- assigned once the app exists, after the server factory ran
  let secureFieldsHandler: SecureFieldsHttpHandler | undefined;
  // /vault-inbound/{route_id}/… takes any body as bytes, and only once its caller is known (decision 0153).
  // eslint-disable-next-line prefer-const -- assigned once the app exists, after the server factory ran
  let inboundHandler: InboundHttpHandler | undefined;
  // Request metrics of every route, the two above included (fastify's routes count themselves, countRoutes).
  // eslint-disable-next-line prefer-const -- assigned once the app exists, after the server factory ran
  let requestMetrics: HttpMetrics | undefined;
  const adapter = new FastifyAdapter({
    serverFactory: (fastifyHandler: (req: IncomingMessage, res: ServerResponse) => void) => {
      const limits = options.config.http;
      const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, ...serverOptions(limits) }, (req, res) => {
        if (secureFieldsHandler?.matches(req)) {
          requestMetrics?.countServed(req, res, SECURE_FIELDS_ROUTE);
          secureFieldsHandler.handle(req, res);
        } else if (forwardHandler && ForwardHttpHandler.matches(req)) {
          requestMetrics?.countServed(req, res, FORWARD_ROUTE);
          forwardHandler.handle(req, res);
        } else if (inboundHandler && InboundHttpHandler.matches(req)) {
          requestMetrics?.countServed(req, res, INBOUND_ROUTE_TEMPLATE);
          inboundHandler.handle(req, res);
        } else fastifyHandler(req, res);
      });
      // Node would answer any Expect but 100-continue with an empty 417 of its own.
      server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
        const problem = problemResponse(
          new ProblemException(CommonErrors.expectationFailed, 'Only "Expect: 100-continue" is supported.', [
            { location: 'header', name: 'expect', message: 'must be 100-continue' },
          ]),
          req.url,
          undefined,
          frameworkLogger,
          isForwardPath,
          req.headers.accept,
        );
        res.writeHead(problem.status, {
          ...problem.headers,
          'content-length': Buffer.byteLength(problem.body),
          connection: 'close',
        });
        res.end(problem.body);
      });
      applyServerLimits(server, limits, 'HttpServer');
      return server;
    },
    bodyLimit: BODY_LIMIT_BYTES,
    logger: false,
    // The same id for fastify, pino-http's log line and the x-request-id response header.
    genReqId: requestIdFor,
    return503OnClosing: true,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // A path the router cannot decode, or an overlong parameter: fastify's own answers quote the path.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      // Answered before routing, so without fastify's onResponse hooks.
      requestMetrics?.countServed(request.raw, reply.raw, UNMATCHED_ROUTE);
      const problem = problemResponse(
        error,
        undefined,
        request.id,
        frameworkLogger,
        isForwardPath,
        request.headers.accept,
      );
      void reply
        .status(problem.status)
        .headers({ ...problem.headers, 'x-request-id': request.id })
        .send(problem.body);
    },
    clientErrorHandler: answerClientError,
  });
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(options, extra.imports), adapter, {
    bufferLogs: true,
    // Body parsers are ours (below): JSON only, with fastify's safe parser; anything else is a 415.
    bodyParser: false,
  });
  registerBodyParsers(app);
  nameSpansByRoute(app.getHttpAdapter().getInstance());
  requestMetrics = new HttpMetrics(app.get(Metrics));
  requestMetrics.countRoutes(app.getHttpAdapter().getInstance());
  app.useLogger(app.get(AppLogger));
  // Every response, errors included, names the request id that its log line carries.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', async (request, reply) => {
      const id = (request.raw as { id?: unknown }).id;
      if (typeof id === 'string') reply.header('x-request-id', id);
    });
  serveOpenApi(app, buildOpenApiDocument(app));
  const dashboard = dashboardRoot();
  if (dashboard) await registerDashboard(app.getHttpAdapter().getInstance(), dashboard);
  else frameworkLogger.warn('No dashboard bundle (dist/dashboard): run `npm run build` to serve /dashboard.');
  await app.init();
  forwardHandler = app.get(ForwardHttpHandler);
  secureFieldsHandler = app.get(SecureFieldsHttpHandler);
  inboundHandler = app.get(InboundHttpHandler);
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
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8'); // always a string (parseAs)
    // No body at all is an empty object: the official SDK sends content-type JSON with nothing when a
    // request's fields are all optional and none is given (checkoutSessions.create()).
    if (text.length === 0) return done(null, {});
    if (jsonDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(
        new ProblemException(
          CommonErrors.jsonTooDeep,
          `The JSON body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
          [{ location: 'body', name: 'body', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }],
        ),
        undefined,
      );
    }
    void json(request, text, done);
  });
  fastify.addContentTypeParser('*', (_request, _payload, done) => {
    done(
      Object.assign(new Error('Unsupported Media Type'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }),
      undefined,
    );
  });
}

/**
 * Whether JSON text opens more than `max` arrays or objects at once. One pass, no allocation, before
 * JSON.parse: what counts is outside strings only, so `"[[["` is text. Malformed text is left for
 * the parser to refuse.
 */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped, whatever it is
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const frameworkLogger = new NestLogger('ProblemFilter');

/**
 * The answer Node is writing on a connection and its request: internal fields, read as Node's own
 * clientError answer reads them.
 */
type Answering = Socket & { _httpMessage?: (ServerResponse & { req?: IncomingMessage }) | null };

/**
 * Connections whose unparseable request is being answered. Node's parser stays failed after the error, so more
 * bytes, or its request timer, would raise clientError again for the same request.
 */
const refusing = new WeakSet<Socket>();

/**
 * What Node cannot parse into a request (bad header bytes, a bad request line, conflicting lengths,
 * headers over MAX_HEADER_BYTES, a request that timed out) never reaches fastify: Node emits
 * `clientError` with the socket only. The answer is written by hand as the problem every other error
 * is, then the connection closes, as Node's own answer does: the parser cannot resume after it.
 *
 * Requests pipelined ahead of it on the connection arrived whole and are being served (a forward may
 * already be on its way to the target): their answers are written first, in order, and only then the
 * problem. Writing it at once would end the connection under them, and a caller that retried a forward
 * it got no answer to would send the card twice (decision 0116).
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || refusing.has(socket)) return;
  refusing.add(socket);
  afterWholeRequestsAnswered(socket, (unanswered) => {
    // The last answer asked to close the connection: it closes once that answer is written.
    if (!socket.writable) return void socket.destroySoon();
    // Node's own rule: an answer under way, to a request that never arrived whole, cannot be followed by another.
    if (unanswered?.headersSent) return void socket.destroy(error);
    socket.end(clientErrorAnswer(error, unanswered?.req));
  });
}

/**
 * Calls `then` once every answer on the connection whose request arrived whole has been written, with the
 * answer in progress whose request did not (the one that failed or timed out mid-body), if any. Nothing,
 * if the connection closes first.
 */
function afterWholeRequestsAnswered(
  socket: Answering,
  then: (unanswered: (ServerResponse & { req?: IncomingMessage }) | undefined) => void,
): void {
  const current = socket._httpMessage;
  if (!current || current.req?.complete === false) return then(current ?? undefined);
  // 'close' comes once the answer is written and Node has moved on to the next one queued, or with the socket.
  current.once('close', () => {
    if (!socket.destroyed) afterWholeRequestsAnswered(socket, then);
  });
}

/** The problem answering what Node could not parse, as raw HTTP/1.1 bytes that close the connection. */
function clientErrorAnswer(error: Error & { code?: string }, unfinished: IncomingMessage | undefined): string {
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  // A request timeout after the headers arrived: the request is known (its path, its Accept, whether it is a
  // forward, whose errors must say they are ours), and what was late is its body. (A request received whole
  // has been answered by now: a timeout is a pipelined one behind it.)
  const request = status === 408 ? unfinished : undefined;
  const failure = request
    ? new ProblemException(CommonErrors.requestTimeout, 'The request body did not arrive whole in time.', [
        { location: 'body', name: 'body', message: 'did not arrive whole within the request timeout' },
      ])
    : Object.assign(new Error('client error'), { statusCode: status, code: 'CLIENT_ERROR' });
  const problem = problemResponse(
    failure,
    request?.url,
    undefined,
    frameworkLogger,
    isForwardPath,
    request?.headers.accept,
  );
  const head = Object.entries({
    ...problem.headers,
    'content-length': String(Buffer.byteLength(problem.body)),
    connection: 'close',
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${problem.body}`;
}
