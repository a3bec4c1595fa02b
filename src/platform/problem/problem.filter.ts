import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, serviceUnavailableProblem } from './database-errors';
import { CommonErrors } from './common.errors';
import { GR4VY_ERROR_CONTENT_TYPE, gr4vyErrorBody, prefersGr4vyError } from './gr4vy-error';
import { ProblemBody, ProblemDefinition, ProblemException, ProblemFieldError } from './problem';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * Whether a request target is the forward route, whose callers must be able to tell our errors from
 * the downstream's answers. Handed in by the composition root (ApiModule, api-app.ts), so that this
 * shared layer imports no feature.
 */
export type IsForwardPath = (url: string) => boolean;

/** The one place errors of Nest routes become responses (problemResponse below). */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemFilter');

  constructor(private readonly isForwardPath: IsForwardPath) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const response = problemResponse(
      exception,
      request.url,
      requestId(request),
      this.logger,
      this.isForwardPath,
      request.headers.accept,
    );
    reply.status(response.status).headers(response.headers).send(response.body);
  }
}

/**
 * Our ProblemExceptions render as they are; errors from the framework (unknown route, unparsable
 * JSON, body limit, media type) are mapped onto our problem codes; anything else is an internal
 * error whose details go to the log, never to the caller. Also used by the forward route, which is
 * served outside Nest. The body is RFC 9457 problem+json, or Gr4vy's error body for a client whose
 * Accept prefers application/json (gr4vy-error.ts, decisions/0077).
 */
export function problemResponse(
  exception: unknown,
  /** The request target; undefined when it is the thing refused (a bad or overlong path, no request at all). */
  url: string | undefined,
  requestId: string | undefined,
  logger: { error(message: unknown, ...rest: unknown[]): void; warn(message: unknown, ...rest: unknown[]): void },
  isForwardPath: IsForwardPath,
  /** The request's Accept header, when there is a request to read it from. */
  accept?: string | string[],
): { status: number; headers: Record<string, string>; body: string } {
  const problem = toProblem(exception);
  const path = url?.split('?')[0];
  const body: ProblemBody = {
    ...problem.toBody(),
    ...(path !== undefined ? { instance: path } : {}),
    request_id: requestId,
  };
  if (problem.status === 503) {
    // A dependency away or capacity full: expected while it lasts, and every request says so; one short
    // line each (the outage itself is logged once by whoever watches that dependency), no stack.
    logger.warn(
      {
        err: {
          name: exception instanceof Error ? errorName(exception) : typeof exception,
          code: problem.definition.code,
        },
        request_id: requestId,
      },
      'request refused: unavailable',
    );
  } else if (problem.status >= 500) {
    // The message and stack only: driver errors may quote row values, which could be sensitive.
    const error =
      exception instanceof Error
        ? { name: errorName(exception), message: exception.message, stack: exception.stack }
        : { value: String(exception) };
    logger.error({ err: error, request_id: requestId }, 'request failed');
  }
  const gr4vy = prefersGr4vyError(accept);
  const headers: Record<string, string> = {
    ...problem.headers,
    'content-type': gr4vy ? GR4VY_ERROR_CONTENT_TYPE : PROBLEM_CONTENT_TYPE,
    // The shape follows Accept: a cache (a 404 is cacheable by default) must not hand one client's to another.
    vary: 'accept',
  };
  // On the forward route, a caller must always be able to tell our errors from the downstream's.
  if (url !== undefined && isForwardPath(url)) headers['x-vault-forward-error'] = 'true';
  return { status: problem.status, headers, body: JSON.stringify(gr4vy ? gr4vyErrorBody(body) : body) };
}

/**
 * The problem an error is answered with (problemResponse renders it): what a forward's record must
 * carry too, so a record says what its caller got (a database outage is 503, not 500).
 */
export function toProblem(exception: unknown): ProblemException {
  if (exception instanceof ProblemException) return exception;
  // Before the database check: this ECONNRESET is the caller's socket, and calling it an outage put a
  // false 503 warning in the log for every client that went away mid-body (or that a timeout cut off).
  if (isCallerAbort(exception))
    return new ProblemException(CommonErrors.badRequest, 'The connection closed before the request was complete.');
  // A stopped, unreachable or saturated database is temporary: 503 with Retry-After, never a 500.
  if (isDatabaseUnavailable(exception)) return serviceUnavailableProblem();
  if (exception instanceof HttpException) return fromFrameworkError(exception);
  if (isFastifyError(exception)) return fromStatus(exception.statusCode, exception.message, exception.code);
  return new ProblemException(
    CommonErrors.internalError,
    'The service failed unexpectedly; the request id identifies the log line.',
  );
}

/**
 * Node's error on a request whose connection closed before it was complete (IncomingMessage's
 * `aborted`), as the body's reader or fastify's parser passes it on. Duck-typed: it may come from
 * another realm (a VM context).
 */
function isCallerAbort(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' && message === 'aborted';
}

function errorName(error: Error): string {
  return error.constructor?.name ?? error.name;
}

function requestId(request: FastifyRequest): string | undefined {
  const raw = request.raw as FastifyRequest['raw'] & { id?: unknown };
  return typeof raw.id === 'string' ? raw.id : undefined;
}

function isFastifyError(error: unknown): error is Error & { statusCode: number; code?: string } {
  return error instanceof Error && typeof (error as { statusCode?: unknown }).statusCode === 'number';
}

function fromFrameworkError(exception: HttpException): ProblemException {
  const response = exception.getResponse();
  const message =
    typeof response === 'string'
      ? response
      : typeof (response as { message?: unknown }).message === 'string'
        ? (response as { message: string }).message
        : exception.message;
  return fromStatus(exception.getStatus(), message);
}

/**
 * Framework errors by status (and fastify code). Their own messages quote the path or the input
 * (`'/buyers/%zz' is not a valid url component`), so no detail here ever includes them.
 */
function fromStatus(status: number, message: string, code?: string): ProblemException {
  if (code === 'FST_ERR_BAD_URL') {
    return new ProblemException(CommonErrors.badRequest, 'The request path is not valid percent-encoded UTF-8.', [
      { location: 'path', name: 'path', message: 'is not valid percent-encoded UTF-8' },
    ]);
  }
  const known: Record<number, [ProblemDefinition, string, ProblemFieldError?]> = {
    404: [CommonErrors.routeNotFound, 'No route matches this method and path.'],
    405: [CommonErrors.methodNotAllowed, 'The route does not accept this HTTP method.'],
    408: [CommonErrors.requestTimeout, 'The request did not arrive whole in time; the connection is closed.'],
    413: [CommonErrors.payloadTooLarge, 'The request body is larger than this route accepts.'],
    414: [
      CommonErrors.uriTooLong,
      'A path segment is longer than 100 characters.',
      { location: 'path', name: 'path', message: 'has a segment longer than 100 characters' },
    ],
    415: [
      CommonErrors.unsupportedMediaType,
      'This route accepts application/json bodies only.',
      { location: 'header', name: 'content-type', message: 'unsupported' },
    ],
    431: [CommonErrors.headerFieldsTooLarge, 'The request line and headers together exceed 16 KiB.'],
  };
  if (known[status]) {
    const [definition, detail, field] = known[status];
    return new ProblemException(definition, detail, field ? [field] : undefined);
  }
  if (status === 400 && (/json/i.test(message) || code?.startsWith('FST_ERR_CTP'))) {
    return new ProblemException(CommonErrors.invalidJson, 'The request body is not valid JSON.', [
      { location: 'body', name: 'body', message: 'does not parse as JSON' },
    ]);
  }
  if (status >= 400 && status < 500) {
    return new ProblemException({ ...CommonErrors.badRequest, status }, 'The request could not be understood.');
  }
  return new ProblemException(
    CommonErrors.internalError,
    'The service failed unexpectedly; the request id identifies the log line.',
  );
}
