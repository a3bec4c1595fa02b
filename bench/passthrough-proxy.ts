/**
 * The baseline for bench:forward: a minimal undici pass-through proxy (minimal-proxy.ts). No auth,
 * no vault, no checks: what our service adds is measured against this.
 */
import { startMinimalProxy } from './minimal-proxy';

startMinimalProxy();
