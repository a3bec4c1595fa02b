/** How often the worker proves it is alive; the health check allows three missed beats. */
export const HEARTBEAT_INTERVAL_MS = 10_000;
