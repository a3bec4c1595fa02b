/**
 * A reference for bench:latency: the framework's floor. BENCH_BARE=fastify serves `GET /live` from a
 * bare Fastify instance; BENCH_BARE=nest serves it from a bare NestJS application on the Fastify adapter
 * (one module, one controller, no pipes, interceptors, filters or logger). What our API adds to
 * `GET /health/live` beyond these is our own pipeline.
 */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import Fastify from 'fastify';

@Controller()
class LiveController {
  @Get('live')
  live(): { status: string } {
    return { status: 'ok' };
  }
}

@Module({ controllers: [LiveController] })
class BareModule {}

async function listen(): Promise<number> {
  if (process.env.BENCH_BARE === 'nest') {
    const app = await NestFactory.create<NestFastifyApplication>(BareModule, new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    return Number(new URL(await app.getUrl()).port);
  }
  const fastify = Fastify({ logger: false });
  fastify.get('/live', async () => ({ status: 'ok' }));
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  const address = fastify.server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

void listen().then((port) => process.send?.({ port }));
