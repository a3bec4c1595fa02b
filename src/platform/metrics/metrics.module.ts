import { DynamicModule, Global, Module } from '@nestjs/common';
import { MetricsServer } from './metrics.server';
import { Metrics } from './metrics.service';
import { QueueMetrics } from './queue-metrics';

/** Global: features record into Metrics without importing this module. */
@Global()
@Module({})
export class MetricsModule {
  /** `serve`: open the scrape port (API and worker); a CLI command records nothing worth scraping. */
  static forRoot(serve: boolean): DynamicModule {
    return {
      module: MetricsModule,
      providers: [Metrics, QueueMetrics, ...(serve ? [MetricsServer] : [])],
      exports: [Metrics, QueueMetrics],
    };
  }
}
