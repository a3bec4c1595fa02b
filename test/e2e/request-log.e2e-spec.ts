import type { IncomingMessage } from 'node:http';
import { Controller, Get, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppLogger } from '../../src/platform/logging/app-logger';
import { LoggingModule, requestIdFor } from '../../src/platform/logging/logging.module';
import { LogCapture } from '../support/log-capture';
import { waitFor } from '../support/wait';

/**
 * The one request log (decision 0129) on a Nest route of its own: one line per request from REQUEST_LOG,
 * and a line logged while the request is served carries that request (the loggers' mixin), one logged
 * outside any request does not.
 */
@Controller()
class ProbeController {
  private readonly logger = new Logger('Probe');

  @Get('probe')
  async probe(): Promise<{ ok: true }> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.logger.warn({ msg: 'inside the request' });
    return { ok: true };
  }
}

describe('request log: one line per request; lines logged during a request carry it', () => {
  const logs = new LogCapture();
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    @Module({
      imports: [LoggingModule.forRoot({ level: 'info', stream: logs, http: true })],
      controllers: [ProbeController],
    })
    class ProbeModule {}
    app = await NestFactory.create<NestFastifyApplication>(
      ProbeModule,
      new FastifyAdapter({ logger: false, genReqId: (req: unknown) => requestIdFor(req as IncomingMessage) }),
      { bufferLogs: true },
    );
    app.useLogger(app.get(AppLogger));
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('the request line and an inside line share the request; an outside line has none', async () => {
    const response = await fetch(`${url}/probe`, {
      headers: { 'x-request-id': 'probe-request-0001', authorization: 'Bearer secret-token-value' },
    });
    expect(response.status).toBe(200);
    new Logger('Probe').warn({ msg: 'outside any request' });

    const requestLine = await waitFor(() => logs.requestLine('probe-request-0001'), {
      what: 'the request log line',
    });
    expect(requestLine).toMatchObject({
      msg: 'request completed',
      req: { id: 'probe-request-0001', method: 'GET', url: '/probe' },
      res: { statusCode: 200 },
    });
    expect(requestLine.req.headers.authorization).toBe('[Redacted]');
    const inside = logs.lines.find((line) => line.msg === 'inside the request');
    expect(inside).toMatchObject({ context: 'Probe', req: { id: 'probe-request-0001', url: '/probe' } });
    expect(inside!.req.headers.authorization).toBe('[Redacted]');
    const outside = logs.lines.find((line) => line.msg === 'outside any request');
    expect(outside).toBeDefined();
    expect(outside!.req).toBeUndefined();
    expect(logs.text).not.toContain('secret-token-value');
  });
});
