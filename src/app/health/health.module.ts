import { Global, Module } from '@nestjs/common';
import { Draining } from './draining';
import { HealthController } from './health.controller';

@Global()
@Module({ controllers: [HealthController], providers: [Draining], exports: [Draining] })
export class HealthModule {}
