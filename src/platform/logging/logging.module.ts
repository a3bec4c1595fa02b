import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { pino, type DestinationStream, type Level } from 'pino';
import type { Options as PinoHttpOptions } from 'pino-http';
import type { LogLevel } from '../config/config';
import { AppLogger } from './app-logger';
import { maskedLogLine, REDACT_PATHS, redactHeaders } from './redaction';

export interface LoggingOptions {
  level: LogLevel;
  /** Where JSON lines go; stdout when omitted. Tests pass a stream to read the lines back. */
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

/** pino-http's choice of level, shared with the forward route's own request log. */
function levelFor(statusCode: number, error?: unknown): Level {
  return error || statusCode >= 500 ? 'error' : statusCode >= 400 ? 'warn' : 'info';
}

/**
 * Starts the request log of a request served outside Nest (the forward route): one line when the
 * response is done, shaped like pino-http's (req, res, responseTime, "request completed"), through
 * the same destination and redaction. Lighter than pino-http: no child logger per request, and
 * nothing at all is built when the line's level is off.
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
          req: {
            id: requestId,
            method: req.method,
            url: req.url,
            headers: redactHeaders(req.headers),
            remoteAddress: req.socket.remoteAddress,
          },
          res: { statusCode: res.statusCode, headers: redactHeaders(res.getHeaders()) },
          responseTime: Math.round(performance.now() - started),
        },
        res.writableFinished ? 'request completed' : 'request aborted',
      );
    });
  };
}

@Module({})
export class LoggingModule {
  static forRoot(options: LoggingOptions): DynamicModule {
    const stream = options.stream ?? process.stdout;
    const httpOptions: PinoHttpOptions = {
      level: options.level,
      autoLogging: options.http,
      ...LINE_OPTIONS,
      genReqId: requestIdFor,
      customLogLevel: (_req, res, err) => levelFor(res.statusCode, err),
      serializers: {
        // Only what an operator needs to follow a request; header values pass the redaction list.
        req: (req: {
          id: string;
          method: string;
          url: string;
          headers: Record<string, unknown>;
          remoteAddress?: string;
        }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
          headers: redactHeaders(req.headers),
          remoteAddress: req.remoteAddress,
        }),
        res: (res: { statusCode: number; headers?: Record<string, unknown> }) => ({
          statusCode: res.statusCode,
          headers: redactHeaders(res.headers),
        }),
      },
    };
    return {
      module: LoggingModule,
      global: true,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: [httpOptions, stream],
          // nestjs-pino's default route, `{/*splat}`, matches no request under NestJS 12's fastify adapter
          // (the request log line silently disappeared), and `*path` misses `/`; `{*path}` matches every path.
          forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
        }),
      ],
      providers: [AppLogger, { provide: REQUEST_LOG, useFactory: () => requestLog(options.level, stream) }],
      exports: [AppLogger, REQUEST_LOG],
    };
  }
}
