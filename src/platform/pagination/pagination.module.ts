import { Global, Logger, Module } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { readOrCreateDevSecret } from '../config/dev-secret';
import { APP_CONFIG } from '../config/config.module';
import { CursorCodec } from './cursor';
import { CURSOR_CODEC, PaginationService } from './pagination.service';

/**
 * CURSOR_SECRET when set (required in production: every API process must share it). Otherwise, for
 * development, a random key kept in DATA_DIR, so cursors survive restarts and are shared by the
 * processes of one machine.
 */
function cursorSecret(config: AppConfig): Buffer {
  if (config.cursorSecret) return config.cursorSecret;
  const { secret, file, created } = readOrCreateDevSecret(config.dataDir, 'cursor-secret');
  if (created) {
    new Logger('Pagination').warn(
      `No CURSOR_SECRET: generated a development key in ${file}; set CURSOR_SECRET in production.`,
    );
  }
  return secret;
}

@Global()
@Module({
  providers: [
    {
      provide: CURSOR_CODEC,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new CursorCodec(cursorSecret(config)),
    },
    PaginationService,
  ],
  exports: [PaginationService],
})
export class PaginationModule {}
