import { Injectable } from '@nestjs/common';
import { Logger } from 'nestjs-pino';

/**
 * Nest's own start-up chatter — a line per module initialised and per route mapped, about fifty —
 * buried the warnings a person starting the service needs to see (embedded database, development
 * keys). It stays available at LOG_LEVEL=debug.
 */
const START_UP_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

@Injectable()
export class AppLogger extends Logger {
  override log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams[optionalParams.length - 1];
    if (typeof context === 'string' && START_UP_CONTEXTS.has(context)) return super.debug(message, ...optionalParams);
    return super.log(message, ...optionalParams);
  }
}
