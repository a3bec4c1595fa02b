import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { Options as PinoHttpOptions, pinoHttp } from 'pino-http';
import type { LogLevel } from '../config/config';
import { REDACT_PATHS, redactHeaders } from './redaction';

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
 * pino-http for the forward route, which is served outside Nest: the same options and destination as
 * every other route's request log, so its lines look the same and pass the same redaction.
 */
export const HTTP_LOGGER = Symbol('HTTP_LOGGER');

@Module({})
export class LoggingModule {
  static forRoot(options: LoggingOptions): DynamicModule {
    const stream = options.stream ?? process.stdout;
    const httpOptions: PinoHttpOptions = {
      level: options.level,
      autoLogging: options.http,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      genReqId: requestIdFor,
      customLogLevel: (_req, res, err) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        // Only what an operator needs to follow a request; header values pass the redaction list.
        req: (req: { id: string; method: string; url: string; headers: Record<string, unknown>; remoteAddress?: string }) => ({
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
      imports: [LoggerModule.forRoot({ pinoHttp: [httpOptions, stream] })],
      providers: [{ provide: HTTP_LOGGER, useFactory: () => pinoHttp(httpOptions, stream) }],
      exports: [HTTP_LOGGER],
    };
  }
}
