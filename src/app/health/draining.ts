import { Injectable } from '@nestjs/common';

/**
 * Whether this process is on its way out: set first on SIGTERM, before the listener closes, so readiness turns
 * false while requests are still served and a load balancer stops sending new ones (decision 0148).
 */
@Injectable()
export class Draining {
  private draining = false;

  start(): void {
    this.draining = true;
  }

  get active(): boolean {
    return this.draining;
  }
}
