import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  DynamicModule,
  Inject,
  Injectable,
  MiddlewareConsumer,
  Module,
  NestMiddleware,
  NestModule,
  RequestMethod,
} from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { pino, type DestinationStream, type Level } from 'pino';
import { build as prettyStream } from 'pino-pretty';
import type { LogLevel } from '../config/config';
import { AppLogger } from './app-logger';
import { maskedLogLine, REDACT_PATHS, redactHeaders } from './redaction';

interface LoggingOptions {
  level: LogLevel;
  /** Where JSON lines go; logDestination() when omitted. Tests pass a stream to read the lines back. */
  stream?: DestinationStream;
  /** The API logs one line per request; the worker has no HTTP. */
  http: boolean;
}

/** A caller-supplied x-request-id is kept when it is a plausible id, so traces join up across services. */
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestIdFor(req: IncomingMessage): string {
  const existing = (req as IncomingMessage & { id?: unknown }).id;
  if (typeof existing === 'string') return existing;
  const header = req.headers['x-request-id'];
  return typeof header === 'string' && INCOMING_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * What every logger writes its lines through: the redaction paths, and the card-number mask over the
 * whole line. The time is ISO 8601: an epoch in milliseconds is 13 digits, a card number's length.
 */
export const LINE_OPTIONS = {
  redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
  timestamp: pino.stdTimeFunctions.isoTime,
  hooks: { streamWrite: maskedLogLine },
};

/**
 * Where lines go by default: stdout, as JSON lines for a collector; on a terminal (a person running `npm start`)
 * the same lines made readable by pino-pretty. The card-number mask runs before either (`streamWrite`), so the
 * pretty lines are masked exactly as the JSON ones. Synchronous, so a line is out before the process exits.
 */
export function logDestination(
  stdout: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): DestinationStream {
  if (!stdout.isTTY) return stdout;
  return prettyStream({ destination: stdout, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/** The level of a request's line: 5xx error, 4xx warn, the rest info. */
function levelFor(statusCode: number): Level {
  return statusCode >= 500 ? 'error' : statusCode >= 400 ? 'warn' : 'info';
}

/** A request as its log lines show it: only what an operator needs to follow it, headers through the allow-list. */
function requestFields(req: IncomingMessage, requestId: string) {
  return {
    id: requestId,
    method: req.method,
    url: req.url,
    headers: redactHeaders(req.headers),
    remoteAddress: req.socket?.remoteAddress,
  };
}

/**
 * The request log: one line per request when the response is done (req, res, responseTime, "request
 * completed"), through the same destination and redaction as every line, and nothing at all built when
 * that line's level is off. Every route has it: the Nest routes through `RequestLogMiddleware`, the
 * forward route (served ahead of Nest) by calling it: one mechanism for both, where pino-http would
 * be a second one for the Nest routes (decision 0129; measured CPU-neutral).
 */
export type RequestLog = (req: IncomingMessage, res: ServerResponse, requestId: string) => void;
export const REQUEST_LOG = Symbol('REQUEST_LOG');

function requestLog(level: LogLevel, stream: DestinationStream): RequestLog {
  const logger = pino({ level, ...LINE_OPTIONS }, stream);
  return (req, res, requestId) => {
    const started = performance.now();
    res.once('close', () => {
      const lineLevel = levelFor(res.statusCode);
      if (!logger.isLevelEnabled(lineLevel)) return;
      logger[lineLevel](
        {
          req: requestFields(req, requestId),
          res: { statusCode: res.statusCode, headers: redactHeaders(res.getHeaders()) },
          responseTime: Math.round(performance.now() - started),
        },
        res.writableFinished ? 'request completed' : 'request aborted',
      );
    });
  };
}

/**
 * The request a line is logged in. A line written while a Nest route serves a request carries that
 * request (`req`), added by the loggers' mixin only when a line is written: nothing per request.
 */
const currentRequest = new AsyncLocalStorage<{ req: IncomingMessage; id: string }>();

function requestOfLine(): object {
  const current = currentRequest.getStore();
  return current ? { req: requestFields(current.req, current.id) } : {};
}

/** Starts each Nest route's request log line and runs the request in its logging context. */
@Injectable()
class RequestLogMiddleware implements NestMiddleware {
  constructor(@Inject(REQUEST_LOG) private readonly log: RequestLog) {}

  use(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    const id = requestIdFor(req);
    this.log(req, res, id);
    currentRequest.run({ req, id }, next);
  }
}

/** Whether this process serves HTTP (the API) and so logs a line per request; the worker has no HTTP. */
const LOGS_REQUESTS = Symbol('LOGS_REQUESTS');

@Module({})
export class LoggingModule implements NestModule {
  constructor(@Inject(LOGS_REQUESTS) private readonly logsRequests: boolean) {}

  static forRoot(options: LoggingOptions): DynamicModule {
    const stream = options.stream ?? logDestination();
    return {
      module: LoggingModule,
      global: true,
      imports: [
        // nestjs-pino is the Nest logger (AppLogger, the framework's own lines), on one root pino logger.
        // `useExisting`: no pino-http middleware; request lines are RequestLogMiddleware's, and a line logged
        // during a request gets the request from the mixin.
        LoggerModule.forRoot({
          pinoHttp: [{ level: options.level, ...LINE_OPTIONS, mixin: requestOfLine }, stream],
          useExisting: true,
          forRoutes: [],
        }),
      ],
      providers: [
        AppLogger,
        { provide: REQUEST_LOG, useFactory: () => requestLog(options.level, stream) },
        { provide: LOGS_REQUESTS, useValue: options.http },
      ],
      exports: [AppLogger, REQUEST_LOG],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    // nestjs-pino's default route, `{/*splat}`, matches no request under NestJS 12's fastify adapter, and
    // `*path` misses `/`; `{*path}` matches every path.
    if (this.logsRequests)
      consumer.apply(RequestLogMiddleware).forRoutes({ path: '{*path}', method: RequestMethod.ALL });
  }
}
